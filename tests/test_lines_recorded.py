"""Real per-PC tables (Nsight Compute's source counters as the report child reads them, recorded on a GPU by
scripts/pc_table.py, stage `lines` of scripts/gpu-session.sh, and kept in tests/data/lines/) folded onto
lines, checked against sums made here by plain loops over the table."""

import json
from pathlib import Path

import pytest

from kernels.counters import fold as F
from kernels.counters.lines import MEASURED, shown_file

TABLES = sorted((Path(__file__).parent / "data" / "lines").glob("*.json"))


def _kernels():
    out = []
    for path in TABLES:
        doc = json.loads(path.read_text())
        assert doc["schema"] == "raytracer-app/pc-table", path
        out += [pytest.param(doc, k, id=f"{path.stem}-{k['name']}") for k in doc["kernels"]]
    return out or [pytest.param(None, None, marks=pytest.mark.skip(
        reason="no recorded per-PC table in tests/data/lines/ yet (stage `lines` of scripts/gpu-session.sh "
               "writes one)"))]


@pytest.mark.parametrize("doc, kernel", _kernels())
def test_a_recorded_table_folds_to_the_sums_made_by_hand(doc, kernel):
    lines = F.fold(kernel["pcs"], kernel["name"], {**kernel["pc_totals"], **kernel["metrics"]})
    by_line, stalls, everything = {}, {}, 0.0
    for row in kernel["pcs"].values():
        everything += row.get("inst_executed", 0)
        if row.get("file") and row.get("line"):
            key = (shown_file(row["file"]), row["line"])
            by_line[key] = by_line.get(key, 0) + row.get("inst_executed", 0)
            stalls[key] = stalls.get(key, 0) + sum(v for k, v in row.items() if k.startswith(F.SAMPLE_PREFIX)
                                                    and not k.endswith(("_not_issued", "_selected")))
    for key, count in by_line.items():
        assert lines.rows[key].get("inst_executed", MEASURED) == pytest.approx(count) or count == 0, key
        if stalls[key]:
            assert lines.rows[key].get("stall_samples", MEASURED) == pytest.approx(stalls[key]), key
    total = kernel["metrics"].get("smsp__inst_executed.sum")
    assert total and everything == pytest.approx(total, rel=0.01)  # the per-PC reading misses nothing
    assert lines.totals[MEASURED]["inst_executed"]["lines"] == pytest.approx(sum(by_line.values()))


@pytest.mark.parametrize("doc, kernel", _kernels())
def test_best_reads_all_its_memory_on_one_line(doc, kernel):
    """best's 16-byte loads come from an intrinsic whose instructions carry no line of their own: the table
    ncu gave puts them on the kernel's first line, and that line holds every sector read (one 32-byte sector
    per 8 int32 elements), counted here from the table."""
    if doc["variant"] != "best":
        pytest.skip("the load line is best's")
    lines = F.fold(kernel["pcs"], kernel["name"])
    from kernels.counters.lines import fill_sources

    top = fill_sources(lines).top("global_sectors", count=1)
    assert top and top[0].source.startswith("def best(")
    loads = doc["n"] * 4 // 32  # int32 elements, 32-byte sectors
    by_hand = sum(row.get("memory_l2_theoretical_sectors_global", 0) for row in kernel["pcs"].values())
    assert by_hand >= loads and top[0].get("global_sectors", MEASURED) >= loads
