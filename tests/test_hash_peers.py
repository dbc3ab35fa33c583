"""The hash table's library peers built with nvcc (kernels/hashtable/shim_build.py): BGHT's bcht
(`bght-bcht`) and cuCollections' static_map (`cuco-static-map`): their skips without a folder or with a failed
build and, where a source folder is named, both shims and both stand-alone harnesses
(scripts/cuco_bench.cu, scripts/bght_bench.cu) built offline for sm_90; the rows' skips and checks without a
GPU. The rows themselves at a million keys are in tests/test_hashmap.py's GPU tests."""

import ctypes
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from kernels.backend import Skip, SkipKind
from kernels.hashtable import bght, cuco, shim_build
from kernels.hashtable.problem import make_problem
from kernels.hashtable.layout import VALUE_ABSENT

ROOT = Path(__file__).resolve().parents[1]


PEERS = [(cuco.SHIM_BUILD, "cuco-static-map", "cuco/static_map.cuh"), (bght.SHIM_BUILD, "bght-bcht", "bght/bcht.hpp")]


@pytest.mark.parametrize("shim, row, header", PEERS, ids=[row for _, row, _ in PEERS])
def test_a_peer_names_its_variable_when_unset(monkeypatch, shim, row, header):
    monkeypatch.delenv(shim.env, raising=False)
    skip = shim_build.library(shim, "sm_90")
    assert isinstance(skip, Skip) and skip.kind is SkipKind.MISSING_LIBRARY and shim.env in skip.text
    assert skip.text.startswith(f"{row}: ")
    monkeypatch.setenv(shim.env, f"/nonexistent/{row}")
    assert f"holds no include/{header}" in shim_build.library(shim, "sm_90").text


@pytest.mark.parametrize("shim, row, header", PEERS, ids=[row for _, row, _ in PEERS])
@pytest.mark.parametrize("errors", [1, 2])
def test_a_peer_reports_a_failed_build_in_one_line(monkeypatch, tmp_path, shim, row, header, errors):
    folder = tmp_path / "source"
    (folder / "include" / header).parent.mkdir(parents=True)
    (folder / "include" / header).write_text("#error not a real header\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    nvcc = bin_dir / "nvcc"
    more = "echo 'second line: error: more' >&2\n" if errors == 2 else ""
    nvcc.write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'fake nvcc 0.0'; exit 0; }\n"
                    f"echo 'shim.cu(9): error: fake failure' >&2\n{more}exit 1\n")
    nvcc.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(shim.env, str(folder))
    shim_build.load.cache_clear()
    skip = shim_build.library(shim, "sm_90")
    shim_build.load.cache_clear()
    assert isinstance(skip, Skip) and "\n" not in skip.text
    assert skip.text.startswith(f"{row}: nvcc failed to build the shim ({errors} errors), first: ")
    assert "fake failure" in skip.text


@pytest.mark.parametrize("op, multiplicity", [("erase", 1.0), ("insert-or-add", 1.0), ("insert", 2.0)])
def test_bght_skips_what_bcht_cannot_do_before_touching_a_gpu(op, multiplicity):
    problem = make_problem(64, op=op, multiplicity=multiplicity)
    skip = bght.run_bght_bcht(problem, None, backend=None, repeats=1)  # no backend: it must not get that far
    assert isinstance(skip, Skip) and skip.kind is SkipKind.NOT_APPLICABLE and skip.text.startswith("bght-bcht: ")


def test_bght_insert_is_checked_by_finding_every_key():
    """An insert's table cannot be read out: each key's answer is its pair. The reference is the problem's
    (the position of each key in the batch), built from the keys alone."""
    problem = make_problem(1000, seed=3, op="insert")
    positions = np.arange(1000, dtype=np.uint32)
    assert problem.verify(bght._check(problem, positions.copy(), 1000)) == (True, "")
    dropped = positions.copy()
    dropped[[5, 700]] = VALUE_ABSENT
    ok, note = problem.verify(bght._check(problem, dropped, 998))
    assert not ok and "2 keys lost" in note
    wrong = positions.copy()
    wrong[9] = 10
    ok, note = problem.verify(bght._check(problem, wrong, 1000))
    assert not ok and "wrong values" in note
    with pytest.raises(RuntimeError, match="holds 1,001 keys"):
        bght._check(problem, positions, 1001)


def test_bght_find_is_checked_against_the_problems_answers():
    problem = make_problem(500, seed=4, op="find", absent=0.5)
    right = problem.expected_answers()
    assert problem.verify(bght._check(problem, right.copy(), 500)) == (True, "")
    wrong = right.copy()
    wrong[np.flatnonzero(right == VALUE_ABSENT)[0]] = 0
    ok, note = problem.verify(bght._check(problem, wrong, 500))
    assert not ok and "absent keys found" in note


# --- built offline for sm_90 where a source folder is named ----------------------------------------------

sys.path.insert(0, str(ROOT / "scripts"))
from peer_bench import harnesses  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("shim", [cuco.SHIM_BUILD, bght.SHIM_BUILD, *harnesses()], ids=lambda s: s.name)
def test_the_peer_builds_offline_for_sm_90(shim, monkeypatch, tmp_path):
    """nvcc (no GPU) builds the shim, or the harness, against the folder the variable names; the shims load
    and answer without touching a GPU."""
    if not os.environ.get(shim.env, "").strip():
        pytest.skip(f"{shim.env} names no source folder: {shim.name} is not built here")
    if shim_build.nvcc_path() is None:
        pytest.skip("nvcc was not found (on PATH or in $CUDA_HOME/bin)")
    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path / "cache"))
    path = shim_build.built(shim, "sm_90")
    assert not isinstance(path, Skip), path.text
    assert path.is_file() and path.parent.parent == tmp_path / "cache"
    if shim.program:
        assert os.access(path, os.X_OK)
        return
    lib = ctypes.CDLL(str(path))
    shim.declare(lib)
    assert getattr(lib, f"{shim.prefix}_api_version")() == shim.api_version
    if shim is bght.SHIM_BUILD:
        assert lib.rt_bght_bucket_size() == 16
        assert [lib.rt_bght_capacity(c) for c in (0, 1, 16, 17, 1000)] == [16, 16, 16, 32, 1008]
