"""The Lessons place (pytest-qt, offscreen): the table has a row per step before the run, guesses lock when
a step runs, the lesson runs on the worker (the simulator's child process without a GPU), the score counts
the guesses against the published figures and says so, Stop ends a run, and the exports go through the
writer. No timing asserts."""

from __future__ import annotations

import csv

import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QSettings

from kernels.backend import Backend
from kernels.lessons.reduction_ladder import REDUCTION

WAIT = 240_000  # ms: seven kernels in the simulator's child on a slow shared machine


@pytest.fixture(autouse=True)
def settings_dir(tmp_path):
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)


@pytest.fixture
def panel(qtbot, monkeypatch, tmp_path):
    from kernels.inspector import toolchain
    from raytracer_app.gui.lessons.panel import LessonsPanel

    # the static evidence needs a real compile (tests/test_inspector.py covers it); here the table and score
    monkeypatch.setattr(toolchain, "missing", lambda: ["ptxas (nvidia-cuda-nvcc)"])
    # the shipped references are tested below and in tests/test_lesson_references.py; here none
    monkeypatch.setenv("RAYTRACER_LESSON_REFERENCES", str(tmp_path / "none"))
    p = LessonsPanel(lambda: Backend("cpu"))
    qtbot.addWidget(p)
    yield p
    p.worker.stop()
    p.thread.shutdown(timeout_ms=WAIT)
    p.pictures.shutdown()


def cell(p, row, column):
    item = p.table.item(row, column)
    return item.text() if item is not None else ""


@pytest.mark.slow  # seven kernels verified in the simulator's child
def test_rows_guesses_run_and_score(qtbot, panel, tmp_path):
    p = panel
    assert p.lesson.name == "reduction"
    p.sizes_edit.setText("512")
    p.prepare()
    assert p.table.rowCount() == len(REDUCTION.steps)
    assert [cell(p, r, 0) for r in range(p.table.rowCount())] == [s.title for s in REDUCTION.steps]
    # the paper's columns are the answers: hidden until the step's guess is made
    assert cell(p, 1, 8) == "?" and cell(p, 6, 9) == "?"
    assert "not timed" in p.table.horizontalHeaderItem(3).text() and p.table.isColumnHidden(3)
    names = [item.name() for item in p.chart.getPlotItem().listDataItems()]
    assert len(p.chart.getPlotItem().listDataItems()[0].xData) == 1  # the published curve: step 1 only
    # kernel 2 was 2.33x faster on the G80, kernel 3 2.01x: one right guess, one wrong
    p.table.cellWidget(1, 1).setCurrentText("faster")
    assert cell(p, 1, 8) == "2.33x" and cell(p, 2, 8) == "?"
    assert list(p.chart.getPlotItem().listDataItems()[0].xData) == [1, 2] and names == ["published"]
    p.table.cellWidget(2, 1).setCurrentText("slower")
    p.start()
    qtbot.waitUntil(lambda: not p.busy() and p.run_result is not None, timeout=WAIT)
    assert [cell(p, r, 2) for r in range(9)] == ["yes"] * 7 + ["skipped"] * 2
    assert all(cell(p, r, 3) == "" for r in range(9))  # nothing timed without a GPU
    assert not p.table.cellWidget(1, 1).isEnabled()  # the guess is locked once its step ran
    assert cell(p, 1, 10) == "faster ✓" and cell(p, 2, 10) == "faster ✗"
    assert cell(p, 0, 10) == "not measured"  # the first step has no step speedup to guess
    assert cell(p, 6, 9) == "30.04x"  # a step that ran shows its answers, guessed or not
    assert p.score_counts()[:2] == (1, 2)
    assert p.score.text() == "score: 1 of 2 guesses right (against the published figure (not measured here))"
    p.table.setCurrentCell(3, 0)
    assert "first add during global load" in p.explanation.text() and "verified, not measured here" in p.explanation.text()
    p.export("csv", str(tmp_path / "lesson.csv"))
    rows = list(csv.DictReader((tmp_path / "lesson.csv").open()))
    assert [r["variant"] for r in rows] == [s.variant for s in REDUCTION.steps]
    p.export("markdown", str(tmp_path / "lesson.md"))
    assert "- device: " in (tmp_path / "lesson.md").read_text()
    assert p.status.text() == f"wrote {tmp_path / 'lesson.md'}"


def test_stop_ends_a_running_lesson(qtbot, panel):
    p = panel
    p.sizes_edit.setText("4096")
    p.start()
    qtbot.waitUntil(p.busy, timeout=10_000)
    p.stop_button.click()
    qtbot.waitUntil(lambda: not p.busy(), timeout=30_000)
    assert p.run_button.isEnabled()
    assert p.status.text() == "stopped"
    assert len(p.results) < len(REDUCTION.steps)


def test_a_bad_size_is_one_line_in_the_panel(qtbot, panel):
    said = []
    panel.message.connect(said.append)
    panel.sizes_edit.setText("100000")
    panel.prepare()
    assert said and "out of range; allowed 1..65536 elements in the simulator" in said[-1]


def test_view_menu_opens_the_lessons_dock(qtbot, cpu_backend):
    from raytracer_app.gui.lessons.panel import LessonsPanel
    from raytracer_app.gui.shell.main_window import MainWindow

    w = MainWindow(cpu_backend)
    w.show()
    try:
        action = next(a for a in w.menuBar().actions() if a.text() == "&View").menu()
        lessons = next(a for a in action.actions() if a.text() == "Lesso&ns")
        assert w.lessons is None  # nothing built before it is shown
        lessons.trigger()
        qtbot.waitUntil(lambda: isinstance(w.lessons, LessonsPanel) and w.lessons.isVisible(), timeout=10_000)
        assert w.lessons.table.rowCount() == len(REDUCTION.steps)
    finally:
        w.close()
        qtbot.waitUntil(lambda: w.render_thread.isFinished() and w.lessons.thread.isFinished()
                        and w.lessons.pictures.thread.isFinished(), timeout=60_000)


# --- the references without a GPU, and the counters option ------------------------------------------------------


def test_without_gpu_the_references_show_labelled_and_counters_are_off_with_the_reason(qtbot, monkeypatch,
                                                                                      tmp_path):
    from kernels.inspector import toolchain
    from kernels.lessons import references
    from raytracer_app.gui.lessons.panel import COLUMNS, LessonsPanel
    from tests.test_lesson_references import H100, reference_file

    import kernels.counters.tool as tool

    why_not = tool.why_not
    reference_file(monkeypatch, tmp_path, counters=True)  # made with ncu faked; this test's machine has none
    monkeypatch.setattr(tool, "why_not", why_not)
    monkeypatch.setenv(references.ENV, str(tmp_path))
    monkeypatch.setattr(toolchain, "missing", lambda: ["ptxas (nvidia-cuda-nvcc)"])
    p = LessonsPanel(lambda: Backend("cpu"))
    qtbot.addWidget(p)
    try:
        headings = [p.table.horizontalHeaderItem(c).text() for c in range(p.table.columnCount())]
        assert headings[len(COLUMNS):] == ["H100 ms", "H100 step x", "H100 cum x"]
        tip = p.table.horizontalHeaderItem(len(COLUMNS)).toolTip()
        assert f"reference, measured on {H100} on " in tip and "(not this machine)" in tip and "4,194,304" in tip
        # tests.test_lessons.TIMES: 8 ms then 4 ms, 2x; nothing of this machine is timed; shown once guessed
        assert [cell(p, 1, len(COLUMNS) + k) for k in range(3)] == ["?"] * 3
        items = p.chart.getPlotItem().listDataItems()
        assert all(len(item.xData) == 1 for item in items)  # step 1 alone (1.0x), the rest hidden
        p.table.setCurrentCell(1, 0)
        assert "Guess this step first" in p.explanation.text() and "References" not in p.explanation.text()
        p.table.cellWidget(1, 1).setCurrentText("faster")
        assert [cell(p, 1, len(COLUMNS) + k) for k in range(3)] == ["4.0000", "2.00x", "2.00x"]
        assert cell(p, 1, 3) == "" and "not timed" in p.table.horizontalHeaderItem(3).text()
        assert "H100 columns are a reference, measured on" in p.summary.text()
        names = [item.name() for item in p.chart.getPlotItem().listDataItems()]
        assert "published" in names and any(n.startswith("H100 reference (not this machine)") for n in names)
        p.table.setCurrentCell(1, 0)
        text = p.explanation.text()
        assert "References (not this machine, n = 4,194,304): on an H100: 2.00x" in text
        assert "H100 reference, measured: DRAM" in text
        # counters need a GPU: the option is off, and says why
        assert not p.counters_box.isEnabled() and not p.counters_box.isChecked()
        assert "counters cannot be read: needs a CUDA GPU" in p.counters_box.toolTip()
    finally:
        p.worker.stop()
        p.thread.shutdown(timeout_ms=WAIT)
        p.pictures.shutdown()


def test_measure_counters_shows_the_measured_evidence(qtbot, monkeypatch, tmp_path):
    from kernels.lessons import references
    from kernels.lessons import run as lesson_run
    from kernels.harness.peak import Peak
    from raytracer_app.gui.lessons.panel import LessonsPanel
    from tests.test_lessons import FakeGPU, fake_counters, fake_run

    calls = fake_counters(monkeypatch)  # ncu replaced at the seam `lesson --counters` uses; why_not says ''
    fake_run(monkeypatch)  # timings and static evidence given (a fake GPU)
    monkeypatch.setattr(lesson_run, "copy_peak", lambda backend: Peak(20.0, "test copy"))
    monkeypatch.setattr(lesson_run, "sizes_for", lambda lesson, backend, sizes=None: [2**22])
    monkeypatch.setattr("raytracer_app.gui.lessons.panel.sizes_for", lambda lesson, backend, sizes=None: [2**22])
    monkeypatch.setenv(references.ENV, str(tmp_path / "none"))
    p = LessonsPanel(lambda: FakeGPU())
    qtbot.addWidget(p)
    try:
        assert p.counters_box.isEnabled() and p.table.columnCount() == 11  # a GPU: no reference columns
        p.counters_box.setChecked(True)
        p.arch_box.setCurrentIndex(p.arch_box.findData("sm_90"))  # the fake GPU has no architecture to ask
        calls.clear()
        with qtbot.waitSignal(p.worker.finished, timeout=30_000):
            p.start()
        qtbot.waitUntil(lambda: not p.busy(), timeout=30_000)
        assert p.run_result is not None, p.status.text()
        assert calls and p.run_result.counters.startswith("Nsight Compute")
        p.table.setCurrentCell(1, 0)
        text = p.explanation.text()
        assert "measured: DRAM 20.0% of peak" in text and "bank conflicts per request" in text
        assert "pays here: 2.00x over interleaved-divergent" in text and "measured:" in p.run_result.results[1].verdict
    finally:
        p.worker.stop()
        p.thread.shutdown(timeout_ms=WAIT)
        p.pictures.shutdown()


@pytest.mark.slow
def test_a_step_shows_the_warp_request_it_changes(qtbot, panel):
    """Issue 36: step 3 (sequential) shows the bank picture of the conflict it removes: kernel 2's tree load with
    replays beside kernel 3's without; the atomics lesson shows 32 lanes on one counter."""
    from kernels.lessons import catalog

    p = panel
    p.sizes_edit.setText("512")
    p.prepare()
    p.table.setCurrentCell(2, 0)  # 3 sequential addressing
    box = p.pictures
    assert not box.isHidden() and "step 3 removes" in box.title.text()
    qtbot.waitUntil(lambda: all(d.request is not None for d in box.drawings), timeout=WAIT)
    before, after = (d.request for d in box.drawings)
    assert before.space == after.space == "shared" and before.conflicts > 0 and after.conflicts == 0
    assert "bank conflict" in box.texts[0].text() and "no bank conflict" in box.texts[1].text()
    p.table.setCurrentCell(3, 0)  # a step without a picture
    assert box.isHidden()
    p.lesson_box.setCurrentIndex(p.lesson_box.findData("atomics"))
    one = next(i for i, s in enumerate(catalog.by_name("atomics").steps) if s.label == "global-atomics entropy-0.000")
    p.table.setCurrentCell(one, 0)
    qtbot.waitUntil(lambda: box.drawings[0].request is not None, timeout=WAIT)
    request = box.drawings[0].request
    assert request.op == "red" and request.active == 32 and len({a for a in request.lanes}) == 1  # one counter
    assert len(request.sectors()) == 1 and box.drawings[1].isHidden()
