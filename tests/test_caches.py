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
