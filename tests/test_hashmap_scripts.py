"""scripts/hashmap_candidates.py and scripts/hashmap_probe_counts.py (issue 52): design names, bad input in one
line with exit 2, and a tiny run of each (the candidates in the CUDA simulator, each design's table verified)."""

import csv
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_design_names_say_the_layout():
    candidates = script("hashmap_candidates")
    s = candidates.scheme_of("rounds-b8-h3-f4")
    assert (s.bucket, s.choices, s.rounds, s.filter_bits, s.flagged) == (8, 3, True, 4, True)
    s = candidates.scheme_of("best-b16")
    assert (s.bucket, s.choices, s.rounds, s.filter_bits) == (16, 4, False, 1)
    assert not candidates.scheme_of("linear").grouped
    for bad in ("best-b4-h3", "rounds-b6", "best-b4-f3", "cuckoo", "rounds-b4-x2"):
        with pytest.raises(ValueError):
            candidates.scheme_of(bad)
    assert all(candidates.scheme_of(d) for d in candidates.DESIGNS)


def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    candidates, counts = script("hashmap_candidates"), script("hashmap_probe_counts")
    assert candidates.main(["--backend", "sim", "--loads", "1.5", "--out", str(tmp_path)]) == 2
    assert counts.main(["--filters", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2


def test_a_tiny_candidates_run_verifies_each_design(tmp_path, capsys):
    candidates = script("hashmap_candidates")
    code = candidates.main(["--backend", "sim", "--n", "64", "--loads", "0.9", "--designs", "rounds-b4-h4-f8,best-b8",
                            "--blocks", "32", "--items", "2", "--repeats", "1", "--out", str(tmp_path)])
    assert code == 0
    rows = list(csv.DictReader(open(tmp_path / "candidates.csv")))
    assert {(r["op"], r["absent"], r["design"]) for r in rows} == {
        (op, absent, d) for op, absent in (("insert", "0.0"), ("find", "0.0"), ("find", "1.0"))
        for d in ("rounds-b4-h4-f8", "best-b8")}
    assert {r["verified"] for r in rows if r["absent"] == "0.0"} == {"verified"}
    assert "fastest:" in capsys.readouterr().out


def test_the_probe_counts_table(capsys):
    assert script("hashmap_probe_counts").main(["--n", "2000", "--loads", "0.9", "--buckets", "4",
                                                "--choices", "4", "--filters", "1,8"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("| best") or x.startswith("| rounds")]
    assert len(lines) == 4 and lines[0].startswith("| best B4 h4 F1 | 0.9 |")
