"""Caches that heal (issue 21 E): a bad entry is rebuilt with one warning, an unusable folder means no
cache, entries are validated, concurrent writers lose nothing, the folder is private (0700)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kernels.io import cache
from kernels.launch import tuning

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(folder))
    monkeypatch.setattr(cache, "_warned", set())
    return folder


def warnings_in(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning:")]


# --- the cache folder ------------------------------------------------------------------------------------

def test_a_new_cache_folder_is_private(cache_dir, monkeypatch):
    old = os.umask(0o022)
    try:
        assert cache.usable_dir(cache_dir / "inner") == cache_dir / "inner"
    finally:
        os.umask(old)
    for folder in (cache_dir, cache_dir / "inner"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_a_file_in_place_of_the_folder_means_no_cache(cache_dir, capsys):
    cache_dir.parent.mkdir(exist_ok=True)
    cache_dir.write_text("not a folder")
    assert cache.usable_dir(cache_dir) is None
    assert cache.usable_dir(cache_dir) is None
    assert len(warnings_in(capsys.readouterr().err)) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a read-only mode")
def test_a_read_only_folder_means_no_cache(cache_dir, capsys):
    cache_dir.mkdir()
    cache_dir.chmod(0o500)
    try:
        assert cache.usable_dir(cache_dir) is None
    finally:
        cache_dir.chmod(0o700)
    assert len(warnings_in(capsys.readouterr().err)) == 1


def test_a_folder_that_refuses_writes_means_no_cache(cache_dir, capsys, monkeypatch):
    """As a read-only file system does (root included): the probe write fails."""
    import errno
    import tempfile

    cache_dir.mkdir()

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert cache.usable_dir(cache_dir) is None
    assert len(warnings_in(capsys.readouterr().err)) == 1
    for _ in range(2):
        assert tuning.choose("k", lambda i, b: 1.0)[1] == "tuned now, cache not writable"
    assert len(warnings_in(capsys.readouterr().err)) == 1


# --- best's tuning cache -----------------------------------------------------------------------------------

def test_tuning_writes_a_private_folder(cache_dir):
    tuning.choose("k", lambda i, b: 1.0)
    assert stat.S_IMODE(os.stat(cache_dir).st_mode) == 0o700
    assert json.loads((cache_dir / tuning.CACHE_FILE).read_text())["k"]["items"] == 4


@pytest.mark.parametrize("entry", [
    {"items": "eight", "block": -5, "median_ms": 1.0, "configurations": 16},
    {"items": 8, "block": 100, "median_ms": 1.0, "configurations": 16},
    {"items": 6, "block": 256, "median_ms": 1.0, "configurations": 16},
    {"items": 128, "block": 256, "median_ms": 1.0, "configurations": 16},
    {"items": 8, "block": 2048, "median_ms": 1.0, "configurations": 16},
    {"items": True, "block": 256, "median_ms": 1.0, "configurations": 16},
    {"items": 8, "block": 256, "median_ms": float("nan"), "configurations": 16},
    {"items": 8, "block": 256},
    "eight",
])
def test_a_damaged_entry_is_tuned_again_with_one_warning(cache_dir, capsys, entry):
    cache_dir.mkdir()
    (cache_dir / tuning.CACHE_FILE).write_text(json.dumps({"k": entry, "other": {"keep": 1}}))
    swept = []
    choice, source = tuning.choose("k", lambda i, b: swept.append((i, b)) or float(i * b), items_range=(4, 64))
    assert source == "tuned now" and (choice.items, choice.block) == (4, 128) and swept
    assert len(warnings_in(capsys.readouterr().err)) == 1
    stored = json.loads((cache_dir / tuning.CACHE_FILE).read_text())
    assert stored["k"]["items"] == 4 and stored["other"] == {"keep": 1}  # rebuilt; the rest kept
    assert tuning.choose("k", lambda i, b: pytest.fail("tuned twice"))[1] == "cached"
    assert warnings_in(capsys.readouterr().err) == []


def test_a_valid_entry_within_the_rule_is_served(cache_dir, capsys):
    cache_dir.mkdir()
    entry = {"items": 64, "block": 1024, "median_ms": 0.5, "configurations": 16}
    (cache_dir / tuning.CACHE_FILE).write_text(json.dumps({"k": entry}))
    choice, source = tuning.choose("k", lambda i, b: pytest.fail("tuned"), items_range=(4, 64))
    assert (choice.items, choice.block, source) == (64, 1024, "cached")
    assert warnings_in(capsys.readouterr().err) == []


def test_a_corrupt_tuning_file_warns_once_and_is_rewritten(cache_dir, capsys):
    cache_dir.mkdir()
    (cache_dir / tuning.CACHE_FILE).write_text("{not json")
    assert tuning.choose("k", lambda i, b: 1.0)[1] == "tuned now"
    assert len(warnings_in(capsys.readouterr().err)) == 1
    assert list(json.loads((cache_dir / tuning.CACHE_FILE).read_text())) == ["k"]


@pytest.mark.parametrize("kind", ["fifo", "socket", "folder"])
def test_a_tuning_file_that_is_not_a_file_is_removed_and_rebuilt_without_hanging(cache_dir, capsys, kind):
    import socket

    cache_dir.mkdir()
    path = cache_dir / tuning.CACHE_FILE
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading would wait for a writer forever
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    else:
        path.mkdir()
    assert tuning.choose("k", lambda i, b: 1.0)[1] == "tuned now"
    (line,) = warnings_in(capsys.readouterr().err)
    assert "not a file" in line and "removed" in line
    assert path.is_file() and list(json.loads(path.read_text())) == ["k"]
    assert tuning.choose("k", lambda i, b: pytest.fail("tuned twice"))[1] == "cached"


def test_a_fifo_as_the_tuning_lock_is_refused_without_hanging(cache_dir, capsys):
    cache_dir.mkdir()
    os.mkfifo(cache_dir / (tuning.CACHE_FILE + ".lock"))
    assert tuning.choose("k", lambda i, b: 1.0)[1] == "tuned now, cache not writable"
    assert len(warnings_in(capsys.readouterr().err)) == 1


def test_tuning_with_a_file_in_place_of_the_folder_still_runs(cache_dir, capsys):
    cache_dir.parent.mkdir(exist_ok=True)
    cache_dir.write_text("not a folder")
    choice, source = tuning.choose("k", lambda i, b: 1.0)
    assert source == "tuned now, cache not writable" and choice.items == 4
    assert len(warnings_in(capsys.readouterr().err)) == 1


WRITER = """
import sys
from kernels.launch import tuning
who = sys.argv[1]
for i in range(50):
    tuning.choose(f"{who}-{i}", lambda items, block: 1.0)
"""


@pytest.mark.slow  # four new interpreters
def test_four_processes_writing_at_once_lose_nothing(cache_dir):
    env = dict(os.environ, PYTHONPATH=str(ROOT), RAYTRACER_CACHE_DIR=str(cache_dir))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, f"p{n}"], env=env, cwd=ROOT, stderr=subprocess.PIPE,
                              text=True) for n in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "warning" not in err
    stored = json.loads((cache_dir / tuning.CACHE_FILE).read_text())
    assert len(stored) == 200
    assert all(tuning.validate(v) for v in stored.values())


# --- the inspector's compile cache ---------------------------------------------------------------------------

PAIR = ("reduction", "best")


def _needs_compiler():
    from kernels.inspector import toolchain

    if toolchain.missing():
        pytest.skip(f"the compiler packages are not installed ({toolchain.EXTRA_HINT})")


@pytest.fixture(scope="module")
def compiled_once(tmp_path_factory):
    """One real compile of reduction best for sm_90: its entry, and the child's answer to replay."""
    _needs_compiler()
    from kernels.inspector import compiler

    folder = tmp_path_factory.mktemp("inspect-once")
    compiled = compiler.compile_kernels([PAIR], "sm_90", folder)[PAIR]
    assert not isinstance(compiled, Exception), compiled
    (entry,) = folder.glob("*.json")
    return compiled, entry.name, json.loads(entry.read_text())


@pytest.fixture
def inspect_cache(tmp_path, monkeypatch, compiled_once):
    """RAYTRACER_INSPECT_CACHE in tmp_path; the numba child replayed from the one real compile (ptxas and
    nvdisasm still run), counting how often it is asked."""
    from kernels.inspector import compiler

    compiled, _, _ = compiled_once
    asked = []

    def child(pairs, archs, compiler=None):
        asked.append(list(pairs))
        return {arch: {pair: {"ptx": compiled.ptx, "sources": compiled.sources} for pair in pairs} for arch in archs}

    monkeypatch.setattr(compiler, "_compile_in_child", child)
    monkeypatch.setattr(cache, "_warned", set())
    folder = tmp_path / "inspect"
    monkeypatch.setenv("RAYTRACER_INSPECT_CACHE", str(folder))
    return folder, asked


def _compile():
    from kernels.inspector import compiler

    result = compiler.compile_kernels([PAIR], "sm_90")[PAIR]
    assert not isinstance(result, Exception), result
    return result


@pytest.mark.slow  # a real compile (compiled_once)
def test_inspect_cache_round_trip_in_a_private_folder(inspect_cache, compiled_once, capsys):
    folder, asked = inspect_cache
    first = _compile()
    again = _compile()
    assert again == first and len(asked) == 1
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert [p.name for p in folder.glob("*.json")] == [compiled_once[1]]
    assert warnings_in(capsys.readouterr().err) == []


@pytest.mark.slow  # ptxas and nvdisasm run for real, once each
def test_an_entry_holds_the_cubin_until_its_sass_is_read_then_the_text(inspect_cache, monkeypatch):
    """nvdisasm runs when the SASS is first read, not with every compile, and once a kernel: the entry then
    holds the text, which the next read serves without nvdisasm."""
    import base64
    import subprocess

    from kernels.inspector import toolchain

    folder, asked = inspect_cache
    compiled = _compile()
    (entry,) = folder.glob("*.json")
    data = json.loads(entry.read_text())
    assert "sass_text" not in data and base64.b64decode(data["cubin"]) == compiled.sass_or_cubin
    cubin = entry.with_suffix(".cubin")
    cubin.write_bytes(compiled.sass_or_cubin)
    by_hand = subprocess.run([toolchain.nvdisasm_path(), "-gi", "-c", str(cubin)], capture_output=True, text=True,
                             check=True).stdout
    assert compiled.sass_text == by_hand and "//## File" in by_hand
    data = json.loads(entry.read_text())
    assert data["sass_text"] == by_hand and "cubin" not in data
    monkeypatch.setattr(toolchain, "disassemble", lambda cubin: pytest.fail("disassembled again"))
    again = _compile()
    assert again.sass_or_cubin == by_hand and again.sass_text == by_hand and len(asked) == 1


@pytest.mark.slow  # ptxas and nvdisasm run for real
def test_inspect_works_when_the_cache_folder_is_a_file(inspect_cache, capsys):
    from raytracer_app.cli import main

    folder, asked = inspect_cache
    folder.write_text("not a folder")
    assert main(["inspect", "reduction", "best"]) == 0
    assert main(["inspect", "reduction", "best", "--json"]) == 0
    err = capsys.readouterr().err
    assert len(warnings_in(err)) == 1 and "inspector cache" in err
    assert len(asked) == 2 and folder.read_text() == "not a folder"


@pytest.mark.slow  # ptxas and nvdisasm run for real
def test_inspect_works_when_the_cache_folder_refuses_writes(inspect_cache, capsys, monkeypatch):
    import errno
    import tempfile

    folder, asked = inspect_cache
    folder.mkdir()

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    _compile()
    _compile()
    assert len(warnings_in(capsys.readouterr().err)) == 1 and len(asked) == 2


@pytest.mark.slow  # ptxas and nvdisasm run for real, once per case
@pytest.mark.parametrize("damage", ["folder", "fifo", "not json", "other arch", "other target", "other numba",
                                    "wrong type", "missing field"])
def test_a_bad_inspect_entry_is_compiled_again_with_one_warning(inspect_cache, compiled_once, capsys, damage):
    folder, asked = inspect_cache
    _, name, good = compiled_once
    folder.mkdir()
    entry = folder / name
    bad = dict(good)
    if damage == "folder":
        entry.mkdir()
        (entry / "inside").write_text("a folder that cannot be removed as an entry")
    elif damage == "fifo":
        os.mkfifo(entry)  # opening it for reading would wait for a writer forever
    elif damage == "not json":
        entry.write_text('{"target": "reduc')
    else:
        if damage == "other arch":
            bad["arch"] = "sm_80"
        elif damage == "other target":
            bad["variant"] = "warp-shuffle"
        elif damage == "other numba":
            bad["numba_cuda"] = "0.0.1"
        elif damage == "wrong type":
            bad["ptx"] = 42
        else:
            del bad["cubin" if "cubin" in bad else "sass_text"]
        entry.write_text(json.dumps(bad))
    result = _compile()
    assert result.arch == "sm_90" and result.variant == "best" and len(asked) == 1
    assert len(warnings_in(capsys.readouterr().err)) == 1
    if damage != "folder":  # rebuilt: the next request is served from the cache, silently
        rebuilt = json.loads(entry.read_text())
        assert {k: v for k, v in rebuilt.items() if k != "ptxas_report"} == {
            k: v for k, v in good.items() if k != "ptxas_report"}  # the report holds ptxas's compile time
        _compile()
        assert len(asked) == 1 and warnings_in(capsys.readouterr().err) == []


@pytest.mark.slow  # a real compile (compiled_once)
def test_the_inspect_key_includes_the_tool_versions(compiled_once, monkeypatch):
    from importlib.metadata import version

    from kernels.inspector import compiler, toolchain

    args = (*PAIR, "sm_90", version("numba-cuda"), compiler._source_hash())
    tools = toolchain.tool_versions()
    assert tools["ptxas"] not in ("missing", "") and "release" in tools["ptxas"]
    base = compiler._cache_key(*args, tools)
    assert compiler._cache_key(*args) == base
    assert compiler._cache_key(*args, dict(tools, ptxas="release 99.0")) != base
    assert compiler._cache_key(*args, dict(tools, nvdisasm="release 99.0")) != base


# --- numba's own cache ---------------------------------------------------------------------------------------

NUMBA_USER = """
import numba
from kernels.io.numba_cache import heal
heal()

@numba.njit(cache=True)
def plus_one(x):
    return x + 1

print(plus_one(41))
"""


@pytest.mark.slow  # a new interpreter compiles
def test_a_damaged_numba_cache_entry_is_compiled_again_with_one_warning(tmp_path):
    (tmp_path / "numba_user.py").write_text(NUMBA_USER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]),
               NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    env.pop("NUMBA_ENABLE_CUDASIM", None)

    def run():
        done = subprocess.run([sys.executable, "-c", "import numba_user"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == "42", done.stderr
        return warnings_in(done.stderr)

    assert run() == []
    (data,) = (tmp_path / "numba-cache").rglob("*.nbc")
    (index,) = (tmp_path / "numba-cache").rglob("*.nbi")
    data.write_bytes(data.read_bytes()[:40])  # truncated
    assert len(run()) == 1
    assert run() == []  # rebuilt
    index.write_text("garbage\n")
    assert len(run()) == 1
    assert run() == []
    index.unlink()
    os.mkfifo(index)  # numba's own open() would wait for a writer forever
    (line,) = run()
    assert "FIFO" in line and "removed" in line and index.is_file()
    assert run() == []
