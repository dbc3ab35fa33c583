"""Figures per source line (kernels/counters/lines.py, fold.py, kernels/inspector/lines.py): Nsight Compute's
per-PC table folded onto lines, checked against sums made by hand; the model, its JSON and the references;
the sentences naming the hottest line; the nvdisasm and PTX line chains of inlined code, read from text
written here; and `inspect --lines --measured` refused without a GPU."""

import json
import os
import types

import pytest

from kernels.counters import fold as F
from kernels.counters.lines import (MEASURED, PREDICTED, REFERENCE, STATIC, WITH_INLINED, KernelLines,
                                    from_access, hottest, shown_file)
from raytracer_app.cli import main

KERNEL_FILE = "/somewhere/kernel.py"
DEVICE_FILE = "/somewhere/device.py"
STALLED = F.SAMPLE_PREFIX

# A kernel's per-PC table as the report child gives it: line 10 of the kernel has two instructions, line 3 of
# a device function is inlined at the kernel's line 12 (whose own instruction is at 0x130), one PC has no line.
TABLE = {
    "0x100": {"file": KERNEL_FILE, "line": 10, "sass": "LDG.E R2, desc[UR4][R2.64]", "inst_executed": 100.0,
              "thread_inst_executed": 3200.0, STALLED + "long_scoreboard": 30.0, STALLED + "selected": 5.0,
              F.SECTORS: 400.0, F.SECTORS_IDEAL: 100.0},
    "0x110": {"file": KERNEL_FILE, "line": 10, "sass": "IADD3 R4, R2, R3, RZ", "inst_executed": 50.0,
              "thread_inst_executed": 800.0, STALLED + "barrier": 10.0, STALLED + "long_scoreboard_not_issued": 7.0},
    "0x120": {"file": DEVICE_FILE, "line": 3, "sass": "LDS R5, [R4]", "inlined_at": [[KERNEL_FILE, 12]],
              "inst_executed": 20.0, STALLED + "short_scoreboard": 20.0, F.WAVEFRONTS: 64.0,
              F.WAVEFRONTS_IDEAL: 32.0},
    "0x130": {"file": KERNEL_FILE, "line": 12, "sass": "STS [R4], R5", "inst_executed": 20.0,
              STALLED + "not_selected": 4.0, F.WAVEFRONTS: 20.0, F.WAVEFRONTS_IDEAL: 20.0},
    "0x140": {"file": None, "line": None, "sass": "EXIT", "inst_executed": 7.0, STALLED + "wait": 1.0},
}
KERNEL_TOTALS = {"smsp__inst_executed.sum": 197.0, F.SAMPLE_COUNT: 70.0}


def folded():
    return F.fold(TABLE, "demo", KERNEL_TOTALS, "measured on a test table")


def test_fold_sums_each_line_as_by_hand():
    lines = folded()
    ten, device, twelve = lines.row(KERNEL_FILE, 10), lines.row(DEVICE_FILE, 3), lines.row(KERNEL_FILE, 12)
    # line 10: 100 + 50 instructions; stalled samples 30 + 10 (selected is issuing; not_issued are a subset)
    assert ten.get("inst_executed") == 150 and ten.get("stall_samples") == 40
    assert ten.get("top_stall") == "long_scoreboard" and ten.stalls() == {"long_scoreboard": 30, "barrier": 10}
    assert ten.get("lanes") == pytest.approx((3200 + 800) / 150)
    assert (ten.get("global_sectors"), ten.get("global_sectors_excessive")) == (400, 300)
    # all stalled samples on a line: 30 + 10 + 20 (not_selected is eligible, not stalled; the unlocated PC's
    # wait sample is on no line)
    assert ten.get("stall_pct") == pytest.approx(100 * 40 / 60)
    assert device.get("stall_pct") == pytest.approx(100 * 20 / 60)
    assert (device.get("shared_wavefronts"), device.get("shared_conflicts")) == (64, 32)
    # the device function's line counts as its own; the call line's own is its STS alone, and with what it
    # inlines: 20 + 20 instructions, 64 + 20 wavefronts, 32 conflicts
    assert (twelve.get("inst_executed"), twelve.get("shared_conflicts")) == (20, 0)
    assert twelve.get("inst_executed", scope=WITH_INLINED) == 40
    assert (twelve.get("shared_wavefronts", scope=WITH_INLINED), twelve.get("shared_conflicts", scope=WITH_INLINED)) \
        == (84, 32)
    assert ten.get("inst_executed", scope=WITH_INLINED) is None  # nothing is inlined at line 10


def test_fold_totals_set_the_lines_beside_every_pc_and_ncus_own():
    t = folded().totals[MEASURED]
    assert t["inst_executed"] == {"lines": 190, "all": 197, "kernel": 197.0}
    assert t["samples"] == {"lines": 69, "all": 70, "kernel": 70.0}  # 35 + 10 + 20 + 4 located, + 1 wait
    assert t["stall_samples"]["lines"] == 60
    assert F.coverage(folded()) == pytest.approx(190 / 197)


def test_fold_refuses_a_key_that_is_no_pc_and_notes_a_kernel_without_lines():
    with pytest.raises(ValueError):
        F.fold({"line ten": {"file": KERNEL_FILE, "line": 10}})
    blind = F.fold({16: {"file": None, "line": None, "inst_executed": 5.0}})
    assert not blind.rows and "without line information" in blind.notes[0]


def test_model_columns_values_top_and_json_round_trip():
    lines = folded()
    assert lines.kinds() == [MEASURED]
    assert ("stall_pct", MEASURED) in lines.columns() and ("stall.barrier", MEASURED) in lines.columns()
    assert [r.line for r in lines.top("stall_samples", count=2)] == [10, 3]
    heat = lines.values("inst_executed", MEASURED, WITH_INLINED)  # own where nothing is inlined
    assert heat[(KERNEL_FILE, 10)] == 150 and heat[(KERNEL_FILE, 12)] == 40
    again = KernelLines.from_dict(json.loads(json.dumps(lines.to_dict())))
    assert again.to_dict() == lines.to_dict()
    assert again.row(KERNEL_FILE, 12).get("inst_executed", scope=WITH_INLINED) == 40
    with pytest.raises(ValueError):
        KernelLines.from_dict({"name": "k", "lines": [{"file": "f", "line": 1, "figures": {"guessed/own": {}}}]})


def test_merged_static_measured_and_predicted_share_the_rows():
    static = KernelLines("demo")
    static.add(KERNEL_FILE, 10, "x = a[i]").set("sass_instructions", 2, STATIC)
    trace = types.SimpleNamespace(name="demo", scope="all 4 blocks", lines=[types.SimpleNamespace(
        file=KERNEL_FILE, line=10, source="x = a[i]",
        metrics={"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 4, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 16,
                 "lanes_global_ld": 128})])
    merged = static.merged(folded()).merged(from_access(trace))
    row = merged.row(KERNEL_FILE, 10)
    assert (row.get("sass_instructions", STATIC), row.get("inst_executed"), row.get("global_sectors", PREDICTED)) \
        == (2, 150, 16)
    assert row.get("lanes", PREDICTED) == 32 and row.source == "x = a[i]"
    assert merged.kinds() == [STATIC, PREDICTED, MEASURED] and "predicted" in merged.labels[PREDICTED]


def test_project_files_are_shown_relative_also_from_another_checkout():
    here = os.path.abspath("kernels/reduction/gpu.py")
    assert shown_file(here) == "kernels/reduction/gpu.py"
    assert shown_file("/elsewhere/checkout/kernels/reduction/gpu.py") == "kernels/reduction/gpu.py"
    assert shown_file("/elsewhere/my_variant.py") == "/elsewhere/my_variant.py"


def test_hottest_line_and_the_sentences_that_name_it():
    from kernels.counters.metrics import KernelCounters, Measured
    from kernels.counters.rules import Facts, analyse

    lines = folded()
    row, share = hottest(lines)
    assert (row.line, share) == (10, pytest.approx(40 / 60))
    values = {"duration_ns": 1000.0, "bank_conflicts": 4000.0, "shared_ld": 2000.0}
    said = analyse(Facts(Measured((KernelCounters("demo", values, {}, lines),), "none")))
    assert f"67% of the stall samples at line 10 of {KERNEL_FILE}, most on long_scoreboard" in " ".join(said)
    assert f"100% of them at line 3 of {DEVICE_FILE}" in " ".join(said)  # every conflict is line 3's
    plain = analyse(Facts(Measured((KernelCounters("demo", values, {}),), "none")))
    assert not any("stall samples at" in s for s in plain)


def test_measured_records_keep_their_lines_in_result_files():
    from kernels.counters.metrics import KernelCounters, Measured

    m = Measured((KernelCounters("demo", {"duration_ns": 5.0}, {}, folded()),), "none")
    again = Measured.from_dict(json.loads(json.dumps(m.as_dict())))
    assert again.kernels[0].lines.to_dict() == folded().to_dict()
    broken = m.as_dict()
    broken["kernels"][0]["lines"] = {"name": 3}
    assert Measured.from_dict(broken).kernels[0].lines is None  # the other figures stay readable


# --- the report child's per-PC reading, on objects shaped as NVIDIA's ncu_report module's ---------------------


class _Ids:
    def __init__(self, pcs):
        self.pcs = pcs

    def as_uint64(self, i):
        return self.pcs[i]


class _Metric:
    def __init__(self, by_pc, total=None):
        self.pcs, self.values, self.total = list(by_pc), list(by_pc.values()), total

    def has_correlation_ids(self):
        return True

    def correlation_ids(self):
        return _Ids(self.pcs)

    def num_instances(self):
        return len(self.pcs)

    def as_double(self, i=None):
        if i is None:
            if self.total is None:
                raise TypeError("no single value")
            return self.total
        return self.values[i]


class _Action:
    def __init__(self, metrics, where):
        self.metrics, self.where = metrics, where

    def metric_names(self):
        return list(self.metrics) + ["dram__bytes_read.sum"]

    def metric_by_name(self, name):
        return self.metrics.get(name)

    def source_info(self, pc):
        if pc not in self.where:
            return None
        file, line = self.where[pc]
        return types.SimpleNamespace(file_name=lambda: file, line=lambda: line)

    def sass_by_pc(self, pc):
        return f"OP{pc:x} ;"


def test_pc_table_reads_each_per_pc_counter_and_places_it():
    from kernels.counters.report import pc_table

    action = _Action({"inst_executed": _Metric({256: 4.0, 272: 0.0, 288: 2.0}, 6.0),
                      STALLED + "long_scoreboard": _Metric({256: 9.0}),
                      STALLED + "long_scoreboard_not_issued": _Metric({256: 3.0})},
                     {256: (KERNEL_FILE, 10), 288: ("", 0)})
    table, totals = pc_table(action)
    assert table == {256: {"inst_executed": 4.0, STALLED + "long_scoreboard": 9.0, "file": KERNEL_FILE, "line": 10,
                           "sass": "OP100 ;"},
                     288: {"inst_executed": 2.0, "file": None, "line": None, "sass": "OP120 ;"}}
    assert totals == {"inst_executed": 6.0}


def test_a_report_read_with_pcs_gives_each_kernel_its_lines():
    from kernels.counters.measure import to_measured
    from kernels.counters.metrics import METRICS

    actions = [{"name": "counters_marker", "mangled": "counters_marker", "metrics": {METRICS["grid"]: 1}},
               {"name": "demo", "mangled": "demo", "metrics": {"smsp__inst_executed.sum": 197.0},
                "pcs": TABLE, "pc_totals": {F.SAMPLE_COUNT: 70.0}}]
    got = to_measured(actions, ["v"], {}, "none", "measured on a test table")["v"]
    lines = got.kernels[0].lines
    assert lines.to_dict()["lines"] == folded().to_dict()["lines"]
    assert lines.labels[MEASURED] == "measured on a test table"


def test_the_command_with_lines_asks_for_source_counters_and_a_lineinfo_child():
    from kernels.counters.measure import LINEINFO_FLAG, command

    cmd = command("/opt/ncu", ["a.sum"], "none", "/tmp/r.ncu-rep", {"variants": ["x"]}, lines=True)
    assert cmd[cmd.index("--section") + 1] == "SourceCounters" and "WarpStateStats" in cmd
    assert cmd[-4:-1] == ["-m", "kernels.service.counters_child", LINEINFO_FLAG]
    assert LINEINFO_FLAG not in command("/opt/ncu", ["a.sum"], "none", "/tmp/r", {})


def test_the_lineinfo_childs_numba_cache_is_its_own(tmp_path, monkeypatch):
    from kernels.counters.measure import lineinfo_cache

    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path / "app"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert lineinfo_cache("/fallback") == str(tmp_path / "app" / "numba-lineinfo")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert lineinfo_cache("/fallback") == str(tmp_path / "numba" / "lineinfo")


# --- line chains of inlined code, from the tools' text ---------------------------------------------------

SASS = """
        .type           _Z4demo,@function
_Z4demo:
\t//## File "/k.py", line 16
        /*0000*/                   LDC R1, c[0x0][0x28] ;
\t//## File "/d.py", line 7 inlined at "/d.py", line 13
\t//## File "/d.py", line 13 inlined at "/k.py", line 20
\t//## File "/k.py", line 20
        /*0010*/                   FMUL R3, R2, R3 ;
        /*0020*/                   @P0 DFMA R4, R2, R6, 1 ;
\t//## File "/d.py", line 12 inlined at "/k.py", line 20
\t//## File "/k.py", line 20
        /*0030*/                   LDG.E R2, desc[UR4][R6.64] ;
\t//## File "/k.py", line 16
\t//## File "/k.py", line 21
        /*0040*/                   STG.E [R4.64], R3 ;
        .type           $__internal_0_$__cuda_sm20_div_u64,@function
$__internal_0_$__cuda_sm20_div_u64:
        /*0050*/                   I2F.U64.RP R8, R14 ;
"""


def test_nvdisasm_markers_give_each_instruction_its_line_and_call_sites():
    from kernels.inspector.sass import parse_sass

    got = [(s.address, s.opcode, s.file, s.line, s.inlined_at) for s in parse_sass(SASS)]
    assert got == [(0x00, "LDC", "/k.py", 16, ()),
                   (0x10, "FMUL", "/d.py", 7, (("/d.py", 13), ("/k.py", 20))),
                   (0x20, "DFMA", "/d.py", 7, (("/d.py", 13), ("/k.py", 20))),
                   (0x30, "LDG.E", "/d.py", 12, (("/k.py", 20),)),
                   (0x40, "STG.E", "/k.py", 21, ()),  # a location replaced by the next is not a call site
                   (0x50, "I2F.U64.RP", None, None, ())]  # a compiler helper after the kernel: no line


def test_a_chain_the_compiler_dropped_is_taken_from_the_same_line_elsewhere():
    from kernels.inspector.sass import complete_chains, parse_sass

    lines = parse_sass(SASS + '\t//## File "/d.py", line 12\n        /*0060*/   IADD3 R1, R2, R3, RZ ;\n')
    fixed = complete_chains(lines, lambda file, line: file == "/k.py")
    assert fixed[-1].inlined_at == (("/k.py", 20),) and fixed[0].inlined_at == ()


def test_a_compiler_helper_counts_on_the_line_that_calls_it():
    from kernels.inspector.sass import parse_sass

    called = SASS.replace("        /*0040*/                   STG.E [R4.64], R3 ;",
                          "        /*0040*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm20_div_u64) ;")
    helper = parse_sass(called)[-1]
    assert (helper.opcode, helper.file, helper.line, helper.inlined_at) == ("I2F.U64.RP", "/k.py", 21, ())


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_lineinfo_everywhere_asks_for_line_information_but_not_for_numbas_own_functions():
    from tests.conftest import run_fresh_python

    done = run_fresh_python(
        "import json\n"
        "from numba.cuda import api, dispatcher\n"
        "seen = []\n"
        "fake = lambda pyfunc, *a, **k: seen.append([pyfunc.__name__, k.get('lineinfo')])\n"
        "dispatcher.compile_cuda = fake\n"
        "from kernels.backend.numba_private import lineinfo_everywhere\n"
        "def mine(): pass\n"
        "with lineinfo_everywhere():\n"
        "    dispatcher.compile_cuda(mine, None, (), debug=False, lineinfo=False)\n"
        "    dispatcher.compile_cuda(mine, None, (), debug=True, lineinfo=False)\n"
        "    dispatcher.compile_cuda(api.to_device, None, (), lineinfo=False)\n"
        "print(json.dumps([seen, dispatcher.compile_cuda is fake]))\n")
    assert done.returncode == 0, done.stderr[-1500:]
    assert json.loads(done.stdout.splitlines()[-1]) == [[["mine", True], ["mine", False], ["to_device", False]],
                                                        True]


PTX = """
\t.loc\t1 20 1
\tadd.s32 %r1, %r2, %r3;
\t.loc\t2 12 1, function_name $L__info_string0, inlined_at 1 20 1
\tld.global.f32 %f1, [%rd1];
\t.loc\t2 13 1, function_name $L__info_string0, inlined_at 1 20 1
\t.loc\t2 7 1, function_name $L__info_string1, inlined_at 2 13 1
\tfma.rn.f32 %f2, %f1, %f1, %f1;
\t.loc\t1 21 1
\tst.global.f32 [%rd2], %f2;
\t.file\t1 "/k.py"
\t.file\t2 "/d.py"
"""


def test_ptx_loc_chains_put_inlined_code_under_its_line_and_its_call_line():
    from kernels.inspector.sass import ptx_lines_by_source

    got = ptx_lines_by_source(PTX)
    assert got[("/d.py", 12)] == [4] and got[("/d.py", 7)] == [7] and got[("/d.py", 13)] == [7]
    assert got[("/k.py", 20)] == [2, 4, 7] and got[("/k.py", 21)] == [9]


def _report(sass_text, sources):
    from kernels.inspector.sass import parse_sass

    return types.SimpleNamespace(arch="sm_90", numba_cuda="0.30.4", variant="demo", sass=parse_sass(sass_text),
                                 sources=[types.SimpleNamespace(**s) for s in sources])


SOURCES = [{"name": "demo_kernel.<locals>.demo", "file": "/k.py", "first_line": 16,
            "text": "def demo(a, b, out):\n    i = cuda.grid(1)\n\n\n    total += term(a, b, i)\n    out[i] = total\n"}]


def test_static_lines_count_own_and_inlined_instructions():
    from kernels.inspector.lines import static_lines

    lines = static_lines(_report(SASS, SOURCES))
    assert lines.name == "demo"
    call = lines.row("/k.py", 20)
    assert call.get("sass_instructions", STATIC) is None  # no instruction of its own
    assert call.get("sass_instructions", STATIC, WITH_INLINED) == 3  # FMUL, DFMA (line 7) and LDG (line 12)
    assert call.get("mix.global load", STATIC, WITH_INLINED) == 1 and call.source == "total += term(a, b, i)"
    assert lines.row("/d.py", 7).get("sass_instructions", STATIC) == 2
    assert lines.row("/d.py", 13).get("sass_instructions", STATIC, WITH_INLINED) == 2
    assert lines.row("/k.py", 17).figures == {}  # a source line without instructions is still a row


def test_measured_pcs_take_the_compiles_chains_when_the_sass_matches():
    from kernels.inspector.lines import with_chains

    report = _report(SASS, SOURCES)
    base = 0x7F0000001000
    pcs = {hex(base + 0x10): {"file": "/d.py", "line": 7, "sass": "FMUL R3, R2, R3 ;", "inst_executed": 8.0},
           hex(base): {"file": "/k.py", "line": 16, "sass": "LDC R1, c[0x0][0x28] ;", "inst_executed": 8.0},
           hex(base + 0x30): {"file": "/k.py", "line": 20, "sass": "LDG.E R2, desc[UR4][R6.64] ;",
                              "inst_executed": 8.0}}
    chained, note = with_chains(pcs, report)
    assert chained[base + 0x10]["inlined_at"] == [["/d.py", 13], ["/k.py", 20]]
    assert (chained[base + 0x30]["file"], chained[base + 0x30]["line"]) == ("/d.py", 12)
    assert "1 PCs placed on another line" in note
    folded_lines = F.fold(chained, "demo")
    assert folded_lines.row("/k.py", 20).get("inst_executed", scope=WITH_INLINED) == 16
    other = dict(pcs)
    other[hex(base + 0x10)] = dict(pcs[hex(base + 0x10)], sass="IMAD R3, R2, R3, RZ ;")
    same, why = with_chains(other, report)
    assert same is other and "differs from the sm_90 compile at offset 0x10" in why


# --- the result file and the shipped references ------------------------------------------------------------


def _reference_file(folder, device="NVIDIA H100 80GB HBM3", source_ok=True):
    from kernels.inspector.line_references import file_name
    from kernels.inspector.lines import document, to_json

    lines = KernelLines("best")
    row = lines.add("kernels/reduction/gpu.py", 41, "return acc(a[index(i)])" if source_ok else "gone")
    row.set("stall_samples", 90.0, MEASURED)
    row.set("top_stall", "long_scoreboard", MEASURED)
    lines.add("kernels/reduction/gpu.py", 115, "value += cuda.shfl_down_sync(FULL_WARP, value, offset)").set(
        "stall_samples", 10.0, MEASURED)
    doc = document("reduction", "sm_90", {"best": [lines], "sequential": "no kernel was profiled for it"},
                   ["raytracer-app", "inspect"], {"name": device, "backend": "cuda"}, 1 << 20, 12.5)
    path = folder / file_name(device, "reduction")
    path.write_text(to_json(doc))
    return path, doc


def test_the_line_figures_file_carries_the_result_header(tmp_path):
    path, doc = _reference_file(tmp_path)
    assert path.name == "nvidia-h100-80gb-hbm3-lines-reduction.json"
    for key in ("schema", "date", "device", "versions", "commit", "command", "n", "measure_seconds"):
        assert key in doc, key
    assert doc["variants"][1] == {"variant": "sequential", "note": "no kernel was profiled for it"}
    lines = KernelLines.from_dict(doc["variants"][0]["kernels"][0])
    assert lines.row("kernels/reduction/gpu.py", 41).get("stall_samples") == 90


def test_references_are_shown_labelled_and_lines_that_changed_are_left_out(tmp_path):
    from kernels.inspector.line_references import load

    _reference_file(tmp_path)
    found, refused = load("reduction", "best", tmp_path)
    assert refused == [] and len(found) == 1
    ref = found[0]
    assert ref.heading().startswith("reference, measured on NVIDIA H100 80GB HBM3 on ")
    kernel = ref.kernels[0]
    assert kernel.kinds() == [REFERENCE] and kernel.labels[REFERENCE].endswith("(not this machine)")
    assert kernel.row("kernels/reduction/gpu.py", 41).get("stall_samples", REFERENCE) == 90
    (tmp_path / "x").mkdir()
    _reference_file(tmp_path / "x", source_ok=False)
    stale = load("reduction", "best", tmp_path / "x")[0][0].kernels[0]
    assert stale.row("kernels/reduction/gpu.py", 41) is None and "1 lines left out" in stale.notes[0]
    assert load("reduction", "sequential", tmp_path)[0] == []


def test_the_shipped_references_of_an_h100_and_an_h200_load_labelled_and_meet_the_goals():
    """The per-line references in assets/reference-results, one per device, each read as the window reads it:
    the strided shared access leads interleaved-strided's bank conflicts, and best's most stalled line is the
    one that waits for its vector loads (sums taken here from the loaded rows)."""
    from kernels.inspector.line_references import load

    for variant, source, key in (("interleaved-strided", "shared[index] += shared[index + stride]", "shared_conflicts"),
                                 ("best", "return acc(v[0]) + acc(v[1]) + acc(v[2]) + acc(v[3])", "stall_samples")):
        found, refused = load("reduction", variant)
        assert refused == []
        assert {ref.device for ref in found} >= {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}
        for ref in found:
            rows = [row for kernel in ref.kernels for row in kernel.rows.values()]
            figure = {row.source: row.get(key, REFERENCE) or 0 for row in rows}
            assert max(figure, key=figure.get) == source, (ref.device, variant)
            assert ref.heading() == f"reference, measured on {ref.device} on {ref.date[:10]} (not this machine)"


def test_a_bad_reference_file_is_refused_in_one_line(tmp_path):
    from kernels.inspector.line_references import load

    (tmp_path / "nvidia-h200-lines-reduction.json").write_text('{"schema": "something else"}')
    found, refused = load("reduction", "best", tmp_path)
    assert found == [] and len(refused) == 1 and "is not a line-figures file" in refused[0]


# --- the command line ------------------------------------------------------------------------------------


@pytest.mark.parametrize("args, words", [
    (["inspect", "reduction", "best", "--lines", "--measured", "--backend", "cpu"],
     "--measured reads Nsight Compute's per-line counters on a GPU, and this run has none"),
    (["inspect", "reduction", "best", "--measured", "--backend", "sim"], "on a GPU, and this run has none"),
    (["inspect", "reduction", "best", "--lines", "--n", "1024"], "--n sets the size of the measured run"),
    (["inspect", "reduction", "best", "--n", "1024"], "--n sets the size of the measured run"),
    (["inspect", "reduction", "best", "--lines", "--compare", "sequential"], "--compare sets two variants"),
    (["inspect", "reduction", "best", "--lines", "--show", "ptx"], "--show picks a part of the report"),
    (["inspect", "reduction", "best", "--lines", "--measured", "--block", "128", "--backend", "cpu"],
     "--block applies to the static figures"),
])
def test_cli_refuses_in_one_line_with_exit_2(args, words, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    if "sim" in args and len(err) == 1 and "must be chosen when the process starts" in err[0]:
        # on a GPU machine an earlier test loaded numba for real CUDA: the simulator is refused first
        pytest.skip("this process already runs numba on a real GPU, so --backend sim is refused before --measured")
    assert len(err) == 1 and words in err[0], err
