"""Result files (bench --json) and `raytracer-app compare`: the schema's round trip, refused files, the table,
CSV and Markdown, --fail-on, files of two devices. (Real result files: test_compare_real.py.)"""

from __future__ import annotations

import csv
import datetime
import json
import re
import statistics
from pathlib import Path

import pytest

from kernels.errors import InputError
from kernels.harness import results, results_read
from kernels.harness.rows import Row, SKIPPED
from kernels.timing import Timing
from raytracer_app.cli import main



def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def a_row(variant="v", samples=(1.0, 1.1, 1.2), **kw) -> Row:
    return Row(variant=variant, op="sum", dtype="int32", n=1000, backend="cpu", device="cpu0", block=256, grid=8,
                     timing=Timing(tuple(samples), "wall") if samples else None, verified="yes", **kw)


def a_result(rows, name="cpu0", commit="a" * 40) -> results.Result:
    return results.Result(target="reduction", rows=rows, device={"name": name, "backend": "cpu", "copy_peak_gbps": 20.0},
                          date="2026-11-23T10:00:00Z", versions={"app": "0"}, commit=commit, command=["x"], options={})


def scaled(path, factor: float, out: Path) -> Path:
    """A copy of a result file with every sample multiplied by ``factor``."""
    r = results_read.read_result(path, "test")
    for row in r.rows:
        if row.timing:
            row.timing = Timing(tuple(t * factor for t in row.timing.samples_ms), row.timing.method)
    results.write_result(out, r, "test")
    return out


# --- the schema ---------------------------------------------------------------------------------------------


def test_round_trip_keeps_every_sample_and_field():
    rows = [a_row("a", (0.5, 0.25, 0.125), gbps=12.5, pct_of_peak=50.0, note="n", result="42", expected=42),
            a_row("b", (), note="skipped: no GPU")]
    rows[1].verified = SKIPPED
    text = results.to_json(a_result(rows))
    doc = json.loads(text)
    assert (doc["schema"], doc["version"]) == ("raytracer-app/bench-result", 1)
    assert doc["rows"][0]["median_ms"] == 0.25 and doc["rows"][0]["samples_ms"] == [0.5, 0.25, 0.125]
    back = results_read.from_json(text, "test")
    assert back.commit == "a" * 40 and back.device["copy_peak_gbps"] == 20.0 and back.target == "reduction"
    a, b = back.rows
    assert a.timing.samples_ms == (0.5, 0.25, 0.125) and a.timing.median_ms == 0.25
    assert (a.gbps, a.pct_of_peak, a.note, a.result, a.expected, a.block, a.grid) == (12.5, 50.0, "n", "42", 42, 256, 8)
    assert b.timing is None and b.verified == "skipped" and b.note == "skipped: no GPU"


def test_non_finite_numbers_are_written_as_null():
    doc = json.loads(results.to_json(a_result([a_row(gbps=float("inf"))])))
    assert doc["rows"][0]["gbps"] is None


def test_bench_json_writes_the_header_and_the_samples(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["bench", "reduction", "--backend", "cpu", "--n", "5000", "--variants", "numpy", "--repeats", "3",
            "--json", str(out)]
    code, text, err = run(capsys, *argv)
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["command"] == ["raytracer-app", *argv] and doc["target"] == "reduction"
    assert doc["request"]["repeats"] == 3 and doc["request"]["sizes"] == [5000]
    assert datetime.datetime.strptime(doc["date"], "%Y-%m-%dT%H:%M:%SZ")
    assert doc["device"]["backend"] == "cpu" and doc["device"]["copy_peak_gbps"] > 0 and doc["device"]["cores"] >= 1
    assert doc["commit"] is None or re.fullmatch(r"[0-9a-f]{40}", doc["commit"])
    assert set(doc["versions"]) >= {"app", "numba", "numba_cuda", "python", "numpy"}
    (row,) = doc["rows"]
    assert len(row["samples_ms"]) == 3 and row["median_ms"] == statistics.median(row["samples_ms"])
    assert row["noise"] == pytest.approx((max(row["samples_ms"]) - min(row["samples_ms"])) / row["median_ms"])
    assert row["verified"] == "yes" and row["variant"] == "numpy"


def test_commit_is_none_without_git(tmp_path, monkeypatch):
    assert results.project_commit(tmp_path) is None  # not a checkout
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on the PATH
    assert results.project_commit() is None and results.project_dirty() is None


def good_doc() -> dict:
    return json.loads(results.to_json(a_result([a_row()])))


@pytest.mark.parametrize("change, says", [
    (lambda d: d.update(schema="something/else"), "not a raytracer-app result file"),
    (lambda d: d.update(version=2), "version 2"),
    (lambda d: d.pop("device"), "lacks the header field(s) device"),
    (lambda d: d["rows"][0].pop("samples_ms"), "rows[0] lacks samples_ms"),
    (lambda d: d["rows"][0].update(samples_ms=[1.0, float("nan")]), "non-finite number (nan) at rows[0].samples_ms[1]"),
    (lambda d: d["device"].update(copy_peak_gbps=float("inf")), "non-finite number (inf) at device.copy_peak_gbps"),
    (lambda d: d["rows"][0].update(samples_ms=[1.0, -2.0]), "times in ms"),
    (lambda d: d["rows"][0].update(n="many"), 'rows[0].n is "many", not a whole number'),
    (lambda d: d.update(rows={}), "rows is {}, not a list"),
])
def test_bad_documents_are_one_clear_line(change, says):
    doc = good_doc()
    change(doc)
    with pytest.raises(InputError) as info:
        results_read.from_json(doc, "BASE 'x.json'")
    message = str(info.value)
    assert says in message and message.startswith("BASE 'x.json'") and "\n" not in message


def test_nan_in_the_file_text_is_refused(tmp_path):
    path = tmp_path / "nan.json"
    path.write_text(results.to_json(a_result([a_row()])).replace('"median_ms": 1.1', '"median_ms": NaN'))
    with pytest.raises(InputError, match="non-finite number"):
        results_read.read_result(path, "BASE")


# --- compare: the CLI -----------------------------------------------------------------------------------------


def test_compare_table_csv_and_markdown(tmp_path, capsys):
    base = tmp_path / "base.json"
    results.write_result(base, a_result([a_row("a", [1.0 + 0.001 * i for i in range(12)]),
                                         a_row("b", [2.0 + 0.001 * i for i in range(12)]),
                                         a_row("gone", [1.0] * 3)]), "test")
    new = tmp_path / "new.json"
    results.write_result(new, a_result([a_row("a", [1.5 + 0.001 * i for i in range(12)]),
                                        a_row("b", [2.0 + 0.001 * i for i in range(12)]),
                                        a_row("added", [1.0] * 3)]), "test")
    code, out, err = run(capsys, "compare", base, new, "--csv", tmp_path / "c.csv", "--markdown", tmp_path / "c.md")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"BASE {base}: cpu0 (cpu), commit aaaaaaaaaaaa")
    row_a = next(x for x in lines if x.startswith("a "))
    assert "+49.73%" in row_a and "SLOWER" in row_a and "p=" in row_a
    assert "SAME" in next(x for x in lines if x.startswith("b "))
    assert "2 rows compared: 0 FASTER, 1 SLOWER, 1 SAME, 0 UNSURE" in out
    assert "1 rows only in BASE: reduction gone sum int32 n=1000 (block 256, grid 8)" in out
    assert "1 rows only in NEW: reduction added" in out
    with open(tmp_path / "c.csv", newline="") as f:
        recs = {r["variant"]: r for r in csv.DictReader(f)}
    assert set(recs) == {"a", "b"} and recs["a"]["verdict"] == "SLOWER" and recs["b"]["verdict"] == "SAME"
    assert float(recs["a"]["delta_pct"]) == pytest.approx(100 * (1.5055 / 1.0055 - 1))
    assert float(recs["a"]["base_median_ms"]) == pytest.approx(1.0055) and 0 < float(recs["a"]["p_value"]) < 0.05
    md = (tmp_path / "c.md").read_text().splitlines()
    table = [x for x in md if x.startswith("|")]
    assert table[0].startswith("| variant | op | dtype | n |") and set(table[1]) <= set("|-:")
    assert len(table) == 4 and "**SLOWER**" in table[2] and "| SAME |" in table[3]


def test_fail_on_slower(tmp_path, capsys):
    base = tmp_path / "base.json"
    results.write_result(base, a_result([a_row("a", [1.0 + 0.001 * i for i in range(12)])]), "test")
    slower = scaled(base, 1.5, tmp_path / "slower.json")  # beyond what one process's runs drift apart
    faster = scaled(base, 1 / 1.5, tmp_path / "faster.json")
    assert run(capsys, "compare", base, slower)[0] == 0  # without --fail-on a slowdown is reported, not a failure
    code, out, err = run(capsys, "compare", base, slower, "--fail-on", "slower")
    assert code == 1 and "SLOWER" in out and "1 row(s) SLOWER" in err
    assert run(capsys, "compare", base, faster, "--fail-on", "slower")[0] == 0
    assert run(capsys, "compare", base, base, "--fail-on", "slower")[0] == 0


def test_bad_and_mismatched_files_exit_2_with_one_line(tmp_path, capsys):
    good = tmp_path / "good.json"
    results.write_result(good, a_result([a_row("a")]), "test")
    other = tmp_path / "other.json"
    results.write_result(other, a_result([a_row("b")]), "test")
    text = tmp_path / "text.json"
    text.write_text("not json at all")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"schema": "other", "rows": []}))
    for new, says in ((text, "is not valid JSON"), (wrong, "is not a raytracer-app result file"),
                      (other, "have no row in common"), (tmp_path / "missing.json", "does not exist")):
        code, out, err = run(capsys, "compare", good, new)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, (new, err)
    code, out, err = run(capsys, "compare", good, other, "--csv", good)  # never written over an input
    assert code == 2 and "same file as BASE" in err and json.loads(good.read_text())["rows"]


def test_different_devices_compare_percentages_too(tmp_path, capsys):
    base = tmp_path / "base.json"
    results.write_result(base, a_result([a_row("a", [1.0] * 9, pct_of_peak=80.0)], name="GPU one"), "test")
    new = tmp_path / "new.json"
    results.write_result(new, a_result([a_row("a", [0.5] * 9, pct_of_peak=75.0)], name="GPU two"), "test")
    code, out, err = run(capsys, "compare", base, new)
    assert code == 0, err
    assert "devices differ" in out and "base %peak" in out and "new %spec" in out
    line = next(x for x in out.splitlines() if x.startswith("a "))
    assert "FASTER" in line and "80.0" in line and "75.0" in line


def test_bench_json_is_checked_before_the_run(tmp_path, capsys):
    same = tmp_path / "r.out"
    code, out, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--n", "100", "--variants", "numpy",
                         "--repeats", "1", "--csv", same, "--json", same)
    assert code == 2 and "same file as" in err and "backend:" not in out  # refused before anything ran
    code, out, err = run(capsys, "bench", "reduction", "--backend", "cpu", "--n", "100", "--variants", "numpy",
                         "--repeats", "1", "--json", tmp_path / "no" / "r.json")
    assert code == 2 and "does not exist" in err and len(err.strip().splitlines()) == 1
