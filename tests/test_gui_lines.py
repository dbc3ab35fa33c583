"""Figures per Python line in the window (issue 37, item 3): the Inspector's source pane shows the static SASS
instructions per line, a shipped H100 reference labelled as one, and measured figures from a per-line
measurement (here a stand-in for Nsight Compute) with the sentence naming the hottest line in the Measured
tab; without a GPU the measurement is disabled with the reason. The Access view's source column switches from
the trace's ratios to figures per line. Checked against the compile's own SASS lines, the reference file
read here with json, the trace's raw counts and hand-made figures. pytest-qt, offscreen; no GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from kernels.inspector import toolchain
from tests.test_gui import WAIT, make_window, preset, settings_dir  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
KERNEL_FILE = "kernels/reduction/gpu_harris.py"
REFERENCE = ROOT / "assets" / "reference-results" / "nvidia-h100-80gb-hbm3-lines-reduction.json"
STRIDED = "shared[index] += shared[index + stride]"
LOOP = "while stride < cuda.blockDim.x:"
needs_compiler = pytest.mark.skipif(bool(toolchain.missing()), reason="the compiler packages are not installed "
                                    f"({toolchain.EXTRA_HINT})")


def line_number(text: str, after: str = "def interleaved_strided(") -> int:
    """The line of ``text`` in interleaved-strided's kernel, read from the file."""
    lines = (ROOT / KERNEL_FILE).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i + 1 for i in range(start, len(lines)) if lines[i].strip() == text)


def reference_label() -> str:
    """How the window labels the shipped H100 per-line reference: its device and the date it was made on."""
    return f"reference, measured on NVIDIA H100 80GB HBM3 on {json.loads(REFERENCE.read_text())['date'][:10]} (not this machine)"


def reference_figure(variant: str, source: str, key: str):
    """A figure of the shipped H100 per-line reference, read from the file as it is."""
    doc = json.loads(REFERENCE.read_text())
    entry = next(v for v in doc["variants"] if v["variant"] == variant)
    row = next(r for r in entry["kernels"][0]["lines"] if r["source"] == source)
    return row["figures"]["measured/own"][key]


def source_cell(panel, line: int) -> str:
    """The figure the Inspector's source pane shows beside ``line`` of the kernel file (between the line number
    and the code)."""
    for text, where in zip(panel.source_view.toPlainText().splitlines(), panel._source_lines):
        if where is not None and where[1] == line and where[0].endswith(KERNEL_FILE):
            code = next(code for code, at in panel._source_rows if at is not None and at[1] == line
                        and at[0] == KERNEL_FILE)
            return text[len(f"{line:5d}"):len(text) - len(code)].strip()
    raise AssertionError(f"line {line} is not in the source pane")


def fake_measurement(variant: str, calls: list):
    """A stand-in for measure_lines: hand-made measured figures on two lines of the kernel."""
    from kernels.counters.lines import MEASURED, KernelLines

    def measure_lines(target, variants, backend, n=None, on_progress=None, should_stop=None, static=None):
        calls.append((target, list(variants), n, should_stop is not None))
        on_progress(1, 1, "profiling 1 of 1")
        lines = KernelLines("interleaved_strided", labels={MEASURED: "measured on a stand-in GPU with ncu 0.0"})
        for text, samples, stall in ((STRIDED, 620, "short_scoreboard"), (LOOP, 380, "barrier")):
            row = lines.add(KERNEL_FILE, line_number(text), text)
            row.set("stall_samples", samples, MEASURED)
            row.set(f"stall.{stall}", samples, MEASURED)
            row.set("stall_pct", 100.0 * samples / 1000, MEASURED)
            row.set("top_stall", stall, MEASURED)
            row.set("inst_executed", 4096, MEASURED)
        return {variant: [lines]}

    return measure_lines


def reason_starts(text: str) -> bool:
    return text.startswith("counters cannot be read: needs a CUDA GPU (this run uses the CPU backend")


@pytest.mark.slow  # a real compile (cached for the session)
@needs_compiler
def test_the_inspector_shows_static_sass_the_reference_and_measured_lines(qtbot, make_window, cpu_backend,
                                                                          monkeypatch):
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    dock = w.ensure_inspector()
    panel, figures = dock.panel, dock.panel.figures
    panel.inspect("reduction", "interleaved-strided", "sm_90", (256,))
    qtbot.waitUntil(lambda: panel.report is not None and figures.static is not None, timeout=WAIT * 3)
    # static: each line's SASS instructions, as many as the compile's SASS lists for it (own code only)
    assert figures.figure_box.currentText() == "SASS (static)"
    strided, loop = line_number(STRIDED), line_number(LOOP)
    own = [ins for ins in panel.report.sass if ins.file == panel.report.sources[0].file and ins.line == strided]
    assert own and source_cell(panel, strided) == str(len(own))
    assert "static: the sm_90 SASS" in figures.note.text()
    # no GPU: Measure per line is disabled, the reason its tooltip; the reference offered instead
    assert not figures.measure.button.isEnabled() and reason_starts(figures.measure.button.toolTip())
    assert "the shipped reference is offered instead" in figures.note.text()
    assert figures.reference_box.isEnabled() and figures.reference_box.itemText(1) == "H100 reference"
    figures.reference_box.setCurrentIndex(1)
    assert figures.figure_box.currentText() == "stall % (reference)"
    assert source_cell(panel, loop) == f"{reference_figure('interleaved-strided', LOOP, 'stall_pct'):.1f}%"
    assert reference_label() in figures.note.text()
    panel.select_source_line(panel.report.sources[0].file, strided)
    assert f"line {strided}: static: SASS {len(own)}" in figures.note.text()
    assert "reference: stall %" in figures.note.text()
    # a call line: its own instructions and, with what its call inlined, every instruction whose chain passes it
    call = line_number("shared[t] = thread_partial(a, b)")
    kernel_file = panel.report.sources[0].file
    mine = sum(ins.file == kernel_file and ins.line == call for ins in panel.report.sass)
    through = sum((kernel_file, call) in ins.chain for ins in panel.report.sass)
    assert 0 < mine < through
    panel.select_source_line(kernel_file, call)
    assert f"line {call}: static: SASS {mine} ({through} with inlined code)" in figures.note.text()
    figures.reference_box.setCurrentIndex(0)  # the reference put away: its figures go with it
    figures.inlined_box.setChecked(True)
    assert source_cell(panel, call) == str(through) and source_cell(panel, strided) == str(len(own))
    figures.inlined_box.setChecked(False)
    assert not any(c.kind == "reference" for c in figures.options)

    # measured: a stand-in for ncu's per-line run fills the column and the Measured tab's sentence
    calls = []
    monkeypatch.setattr("kernels.counters.tool.why_not", lambda backend: "")
    monkeypatch.setattr("kernels.inspector.lines.measure_lines", fake_measurement("interleaved-strided", calls))
    figures.measure.refresh()
    assert figures.measure.button.isEnabled()
    figures.measure.button.click()
    qtbot.waitUntil(lambda: isinstance(figures.measured, list) and not figures.measure.running(), timeout=WAIT * 3)
    assert calls == [("reduction", ["interleaved-strided"], None, True)]
    assert figures.figure_box.currentText() == "stall % (measured)"
    assert source_cell(panel, strided) == "62.0%" and source_cell(panel, loop) == "38.0%"
    figures.choose("top_stall", "measured")
    assert source_cell(panel, strided) == "short_scoreboard"
    assert dock.tabs.isTabEnabled(dock.measured_index)
    said = dock.measured_text.toPlainText()
    assert (f"62% of the stall samples at line {strided} of {KERNEL_FILE}: `{STRIDED}`, most on short_scoreboard"
            in said)
    assert "measured on a stand-in GPU" in said


@pytest.mark.slow
def test_the_access_views_source_column_switches_to_figures_per_line(qtbot, make_window, cpu_backend, monkeypatch):
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    assert w.open_access("reduction", "interleaved-strided")
    view = w.access
    pane = view.panes[0]
    qtbot.waitUntil(lambda: all(p.result is not None and p.figures.tables for p in view.panes) and not view.busy(),
                    timeout=WAIT)
    rows = pane.listings[pane.kernel.name]
    tree = next(r for r, line in enumerate(rows) if STRIDED in line.text)
    store = next(r for r, line in enumerate(rows) if "shared[t] = thread_partial" in line.text)
    # the trace's ratio first, then its totals per line: the tree line's conflicts as the trace counted them
    assert view.figure_box.currentText() == "conflicts / request"
    assert view.choose_figure("shared_conflicts", "predicted")
    assert view.figure_box.currentText() == "conflicts (predicted)"
    counted = sum(v for k, v in rows[tree].access.metrics.items() if k.startswith("l1tex__data_bank_conflicts_"))
    assert counted > 0 and pane.table.item(tree, 0).text() == str(counted)
    assert pane.table.item(store, 0).text() == "0"  # stride 1: no conflict
    assert "predicted by the CUDA simulator's trace" in pane.summary.text()
    # no GPU: Measure per line is disabled with the reason; the H100 reference is offered instead
    assert not pane.measure_button.isEnabled() and reason_starts(pane.measure_button.toolTip())
    pane.figures.reference_box.setCurrentIndex(1)
    assert view.figure_box.currentText() == "stall % (reference)"
    loop = next(r for r, line in enumerate(rows) if line.text.strip() == LOOP)
    assert pane.table.item(loop, 0).text() == f"{reference_figure('interleaved-strided', LOOP, 'stall_pct'):.1f}%"
    assert reference_label() in pane.summary.text()
    assert "sequential has no stall % (reference) figures: pick its reference" in view.panes[1].summary.text()
    # measured (a stand-in for ncu): the column fills, the note names the hottest line
    calls = []
    monkeypatch.setattr("kernels.counters.tool.why_not", lambda backend: "")
    monkeypatch.setattr("kernels.inspector.lines.measure_lines", fake_measurement("interleaved-strided", calls))
    monkeypatch.setattr("raytracer_app.gui.common.line_figures.LinesWorker._static", lambda self, job: {})
    pane.figures.measure.refresh()
    pane.measure_button.click()
    qtbot.waitUntil(lambda: isinstance(pane.figures.measured, list) and not pane.measuring(), timeout=WAIT)
    assert calls == [("reduction", ["interleaved-strided"], None, True)]
    assert view.figure_box.currentText() == "stall % (measured)"
    assert pane.table.item(tree, 0).text() == "62.0%" and pane.table.item(loop, 0).text() == "38.0%"
    assert f"62% of the stall samples at line {rows[tree].number} of {KERNEL_FILE}" in pane.summary.text()
    view.figure_box.setCurrentText("conflicts / request")  # and back to the trace's ratio
    assert float(pane.table.item(tree, 0).text()) > 1.0


@pytest.mark.slow  # a real compile (cached for the session)
@needs_compiler
def test_a_panels_measure_brings_its_lines_to_the_inspectors_source(qtbot, make_window, cpu_backend):
    from kernels.counters.metrics import KernelCounters, Measured

    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    dock = w.ensure_inspector()
    panel, figures = dock.panel, dock.panel.figures
    # counters of a panel's Measure (here made by hand) arrive before the variant is inspected: kept for it
    lines = fake_measurement("interleaved-strided", [])("reduction", ["interleaved-strided"], None,
                                                        on_progress=lambda *a: None)["interleaved-strided"][0]
    measured = Measured((KernelCounters("interleaved_strided", {"duration_ns": 1000.0}, {}, lines),), "none")
    dock.show_measured("reduction", 1 << 20, {"interleaved-strided": measured, "sequential": "skipped: a reason"})
    assert "62% of the stall samples at line" in dock.measured_text.toPlainText()  # the guided analysis's sentence
    panel.inspect("reduction", "interleaved-strided", "sm_90", (256,))
    qtbot.waitUntil(lambda: panel.report is not None and figures.static is not None, timeout=WAIT * 3)
    assert figures.choose("stall_pct", "measured")
    assert source_cell(panel, line_number(STRIDED)) == "62.0%" and source_cell(panel, line_number(LOOP)) == "38.0%"
    assert "measured on a stand-in GPU" in figures.note.text()


def test_stop_ends_a_per_line_measurement(qtbot, monkeypatch):
    import time

    from raytracer_app.gui.inspector.line_figures import SourceFigures

    def measure_lines(target, variants, backend, n=None, on_progress=None, should_stop=None, static=None):
        give_up = time.monotonic() + 30
        while not should_stop() and time.monotonic() < give_up:  # ncu's child runs until Stop ends it
            time.sleep(0.01)
        return {}

    monkeypatch.setattr("kernels.counters.tool.why_not", lambda backend: "")
    monkeypatch.setattr("kernels.inspector.lines.measure_lines", measure_lines)
    monkeypatch.setattr("raytracer_app.gui.common.line_figures.LinesWorker._static", lambda self, job: {})
    figures = SourceFigures()
    qtbot.addWidget(figures)
    said = []
    figures.said.connect(said.append)
    try:
        figures.set_variant("reduction", "sequential")
        assert not figures.stop_button.isEnabled()
        figures.measure.button.click()
        qtbot.waitUntil(lambda: figures.stop_button.isEnabled(), timeout=WAIT)
        assert not figures.measure.button.isEnabled()  # one measurement at a time
        t0 = time.perf_counter()
        figures.stop_button.click()
        qtbot.waitUntil(lambda: not figures.measure.running() and not figures.stop_button.isEnabled(), timeout=WAIT)
        assert time.perf_counter() - t0 < 5 and said[-1] == "per-line measurement stopped"
        assert figures.measured is None and figures.measure.button.isEnabled()
    finally:
        assert figures.shutdown()


@pytest.mark.gpu
def test_measure_per_line_on_a_gpu(qtbot):
    """On a GPU with ncu: the Inspector's and an Access pane's Measure per line fill the measured columns; for
    interleaved-strided the strided shared line leads the measured bank conflicts (issue 37's goal)."""
    from kernels import backend as backends
    from kernels.counters.lines import MEASURED
    from kernels.counters.tool import why_not
    from raytracer_app.gui.shell.main_window import MainWindow

    backend = backends.resolve("cuda")
    if why_not(backend):
        pytest.skip(why_not(backend))
    w = MainWindow(backend)
    w.show()
    try:
        dock = w.ensure_inspector()
        panel, figures = dock.panel, dock.panel.figures
        panel.inspect("reduction", "interleaved-strided")
        qtbot.waitUntil(lambda: panel.status.text().startswith(("reduction interleaved-strided:", "PTX, SASS")),
                        timeout=WAIT * 3)
        assert figures.measure.button.isEnabled(), figures.measure.button.toolTip()
        figures.measure.button.click()
        qtbot.waitUntil(lambda: figures.measured is not None and not figures.measure.running(), timeout=240_000)
        assert isinstance(figures.measured, list), figures.measured
        assert figures.figure_box.currentText() == "stall % (measured)"
        kernel = figures.current
        conflicts = kernel.values("shared_conflicts", MEASURED)
        strided = next(where for where, row in kernel.rows.items() if row.source == STRIDED)
        assert conflicts.get(strided, 0) > 0 and conflicts[strided] == max(conflicts.values())
        assert "of the stall samples at line" in dock.measured_text.toPlainText()
        assert w.open_access("reduction", "interleaved-strided")
        pane = w.access.panes[0]
        qtbot.waitUntil(lambda: pane.result is not None and not pane.busy() and bool(pane.figures.tables), timeout=WAIT)
        assert pane.measure_button.isEnabled(), pane.measure_button.toolTip()
        pane.measure_button.click()
        qtbot.waitUntil(lambda: pane.figures.measured is not None and not pane.measuring(), timeout=240_000)
        assert w.access.figure_box.currentText() == "stall % (measured)"
        rows = pane.listings[pane.kernel.name]
        tree = next(r for r, line in enumerate(rows) if STRIDED in line.text)
        assert pane.table.item(tree, 0).text().endswith("%")
    finally:
        w.close()
        qtbot.waitUntil(lambda: all(p.thread.isFinished() for p in w.panels.values()), timeout=WAIT)
