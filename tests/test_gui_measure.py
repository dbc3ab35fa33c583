"""The benchmark panel's Measure action and the Inspector's Measured tab (Nsight Compute's counters)."""

import json
from pathlib import Path

import pytest
from PyQt6.QtCore import QSettings

WAIT = 20000


@pytest.fixture(autouse=True)
def settings_dir(tmp_path):
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, cpu_backend):
    from raytracer_app.gui.shell.main_window import MainWindow

    w = MainWindow(cpu_backend)
    w.show()
    yield w
    for panel in w.panels.values():
        panel.stop()
    w.close()
    qtbot.waitUntil(lambda: all(p.thread.isFinished() and p.measure.thread.isFinished() for p in w.panels.values()),
                    timeout=WAIT)


def _recorded():
    from kernels.counters.measure import to_measured

    doc = json.loads((Path(__file__).parent / "data" / "counters" / "reduction-h100.json").read_text())
    return doc, to_measured(doc["actions"], doc["variants"], {}, "none")


def test_measure_is_disabled_with_the_reason_without_a_gpu(window):
    button = window.panels["Reduction"].measure.button
    assert not button.isEnabled()
    assert button.toolTip().startswith("counters cannot be read: needs a CUDA GPU")


def test_measure_fills_tooltips_and_the_measured_tab(window, qtbot, monkeypatch):
    from kernels.counters import measure as measure_module
    from raytracer_app.gui.benchmarks.measure import MeasureControl

    doc, recorded = _recorded()
    calls = []

    def fake_measure(request, backend, on_progress=None, should_stop=None):
        calls.append(request)
        names = request["variants"]
        for i, name in enumerate(names):
            on_progress(i, len(names), f"{i + 1}/{len(names)} {name}")
        return {name: recorded[name] for name in names}

    monkeypatch.setattr(measure_module, "measure", fake_measure)
    monkeypatch.setattr(MeasureControl, "reason", lambda self: "")
    panel = window.panels["Reduction"]
    request = panel.request(sizes=(doc["n"],), variants=("best", "two-kernel"), repeats=1, rounds=1)
    monkeypatch.setattr(panel.measure, "job", lambda: dict(request=request.to_json(), backend=None))
    panel.measure.refresh()
    assert panel.measure.button.isEnabled()
    inspector = window.ensure_inspector()
    assert not inspector.tabs.isTabEnabled(inspector.measured_index)
    with qtbot.waitSignal(panel.measure.measured, timeout=WAIT):
        panel.measure.button.click()
    assert calls and calls[0]["variants"] == ["best", "two-kernel"]
    assert "counters for 2 of 2 variant(s)" in panel.status.text()
    assert inspector.tabs.isTabEnabled(inspector.measured_index)
    text = inspector.measured_text.toPlainText()
    assert "Memory-bound: DRAM at 92.5% of its peak" in text and "block_sums#2" in text
    assert panel.run_button.isEnabled() and not panel.stop_button.isEnabled()
    # the roofline: each measured variant a star from its DRAM bytes and ncu's time
    measured = dict(inspector.measured_points["reduction"])
    assert set(measured) == {"best", "two-kernel"}
    best = recorded["best"]
    assert measured["best"].achieved_gbs == pytest.approx(best.dram_bytes / (best.duration_ms / 1e3) / 1e9)
    assert "2 measured by ncu (stars)" in inspector.roofline_note.text()


@pytest.mark.gpu
def test_measure_on_a_gpu(qtbot):
    from kernels import backend as backends
    from kernels.counters.metrics import Measured
    from kernels.counters.tool import why_not
    from raytracer_app.gui.shell.main_window import MainWindow

    backend = backends.resolve("cuda")
    if why_not(backend):
        pytest.skip(why_not(backend))
    w = MainWindow(backend)
    w.show()
    try:
        panel = w.panels["Reduction"]
        panel.set_variants(["best", "two-kernel"])
        panel.n.setValue(1 << 24)
        assert panel.measure.button.isEnabled(), panel.measure.button.toolTip()
        with qtbot.waitSignal(panel.measure.measured, timeout=180000):
            panel.measure.button.click()
        best = panel.measure.results["best"]
        assert isinstance(best, Measured) and best.dram_bytes >= 4 * (1 << 24) * 0.9
        assert len(panel.measure.results["two-kernel"].kernels) == 2
    finally:
        w.close()
        qtbot.waitUntil(lambda: all(p.thread.isFinished() and p.measure.thread.isFinished()
                                    for p in w.panels.values()), timeout=WAIT)
