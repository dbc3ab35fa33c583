"""The Inspector's and the Access view's measured runs (Measure per line) go where the window's *Run on* control
says (docs/cluster.md): with a cluster connected, on its GPU worker, even though this machine has none; Stop
reaches the worker; back on this machine, the local reason. An in-process cluster of one worker declaring a
GPU (its GPU's facts and Nsight Compute's run are stand-ins, run by the worker). pytest-qt, offscreen."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

pytest.importorskip("distributed", reason="the cluster extra is not installed")
pytest.importorskip("pytestqt")

from tests.test_gui_lines import fake_measurement, reason_starts

WAIT = 30_000
CALLS: list = []  # what the worker's stand-in measured: (target, variants, n, the worker's name)


def gpu_facts() -> dict:
    import dataclasses

    from kernels.backend.devices import DeviceLimits

    return {"name": "NVIDIA H200", "limits": dataclasses.asdict(DeviceLimits(name="NVIDIA H200", sm_count=132)),
            "free": 100 << 30, "arch": "sm_90"}


def measure_lines(target, names, n, static, stop_name=None):
    from distributed import get_worker

    CALLS.append((target, list(names), n, get_worker().name))
    return fake_measurement(names[0], [])(target, names, None, n, on_progress=lambda *a: None)


def measure_until_stopped(target, names, n, static, stop_name=None):
    from kernels.cluster.worker_side import _StopWatch

    stop, give_up = _StopWatch(stop_name), time.monotonic() + 30
    try:
        while not stop.is_set() and time.monotonic() < give_up:  # ncu's child runs until Stop ends it
            time.sleep(0.01)
    finally:
        stop.end()
    CALLS.append(("stopped", list(names), n, stop.is_set()))
    return {}


@pytest.fixture
def gpu_cluster(qtbot, monkeypatch):
    """Run on: a connected cluster whose one worker has the resources GPU=1, H200=1."""
    from distributed import LocalCluster

    from kernels.cluster import worker_side
    from raytracer_app.gui.common.run_on import run_on

    monkeypatch.setattr(worker_side, "gpu_facts", gpu_facts)
    monkeypatch.setattr(worker_side, "measure_lines", measure_lines)
    monkeypatch.setattr("raytracer_app.gui.common.line_figures.LinesWorker._static", lambda self, job, arch=None: {})
    CALLS.clear()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      resources={"GPU": 1, "H200": 1}, dashboard_address=None) as cluster:
        where = run_on()
        where.use_cluster(cluster.scheduler_address)
        qtbot.waitUntil(lambda: where.remote, timeout=WAIT)
        try:
            yield where
        finally:
            where.use_here()


def test_the_inspectors_measure_per_line_runs_on_the_clusters_gpu(qtbot, gpu_cluster):
    from raytracer_app.gui.inspector.line_figures import SourceFigures

    figures = SourceFigures()
    qtbot.addWidget(figures)
    said = []
    figures.said.connect(said.append)
    try:
        figures.set_variant("reduction", "interleaved-strided")
        assert gpu_cluster.models == ["H200"]
        assert figures.measure.button.isEnabled(), figures.measure.button.toolTip()  # no GPU here; one there
        assert "on the cluster's H200 (Run on)" in figures.measure.button.toolTip()
        figures.measure.button.click()
        qtbot.waitUntil(lambda: isinstance(figures.measured, list) and not figures.measure.running(), timeout=WAIT)
        assert CALLS == [("reduction", ["interleaved-strided"], None, CALLS[0][3])] and CALLS[0][3] is not None
        assert figures.measured[0].labels["measured"] == "measured on a stand-in GPU with ncu 0.0"
        assert any("on the cluster's H200" in line for line in said)
        gpu_cluster.use_here()  # this machine again: its own reason, at once
        assert not figures.measure.button.isEnabled() and reason_starts(figures.measure.button.toolTip())
    finally:
        assert figures.shutdown()


def test_the_access_views_measure_per_line_runs_on_the_clusters_gpu_and_stop_reaches_it(qtbot, gpu_cluster,
                                                                                       monkeypatch):
    from kernels.backend import Backend
    from kernels.cluster import worker_side
    from raytracer_app.gui.access.line_figures import PaneFigures

    figures = PaneFigures(lambda: Backend("cpu"), "test-pane")
    said = []
    figures.said.connect(said.append)
    ask = SimpleNamespace(target="reduction", variant="interleaved-strided", label="reduction interleaved-strided")
    try:
        figures.set_traced(ask, {}, [], [])
        assert figures.measure.button.isEnabled(), figures.measure.button.toolTip()
        assert figures.start_measure(1 << 20)
        qtbot.waitUntil(lambda: isinstance(figures.measured, list) and not figures.measure.running(), timeout=WAIT)
        assert CALLS[-1][:3] == ("reduction", ["interleaved-strided"], 1 << 20)
        monkeypatch.setattr(worker_side, "measure_lines", measure_until_stopped)
        assert figures.start_measure()
        qtbot.waitUntil(lambda: len(said) and said[-1].startswith("ncu: measuring per line on the cluster's"),
                        timeout=WAIT)
        figures.measure.stop()
        qtbot.waitUntil(lambda: said[-1] == "per-line measurement stopped", timeout=WAIT)
        assert not figures.measure.running() and figures.measure.button.isEnabled()
        qtbot.waitUntil(lambda: CALLS[-1][0] == "stopped", timeout=WAIT)  # the worker's run heard the Stop
        assert CALLS[-1] == ("stopped", ["interleaved-strided"], None, True)
    finally:
        assert figures.shutdown()


# --- a benchmark panel's Measure (Nsight Compute's counters) -------------------------------------------------


def measure_counters(request, stop_name=None):
    from distributed import get_worker

    from tests.test_gui_measure import _recorded

    CALLS.append(("counters", list(request["variants"]), request["sizes"], get_worker().name))
    _, recorded = _recorded()
    return {name: recorded[name] for name in request["variants"]}


def counters_until_stopped(request, stop_name=None):
    from kernels.cluster.worker_side import _StopWatch

    stop, give_up = _StopWatch(stop_name), time.monotonic() + 30
    try:
        while not stop.is_set() and time.monotonic() < give_up:  # ncu's child runs until Stop ends it
            time.sleep(0.01)
    finally:
        stop.end()
    CALLS.append(("stopped", list(request["variants"]), request["sizes"], stop.is_set()))
    return {}


def cpu_panel(qtbot, algorithm: str = "reduction"):
    """A panel of a window whose backend is this machine's CPU (no GPU here)."""
    from PyQt6.QtCore import QObject, pyqtSignal

    from kernels.backend import Backend
    from kernels.registry import by_name
    from raytracer_app.gui.benchmarks.panel import BenchPanel
    from raytracer_app.gui.shell.timing_log import TimingLog

    cpu = Backend("cpu")

    class Model(QObject):  # what a panel reads of the window's model
        changed = pyqtSignal(str)

        def __init__(self):
            super().__init__()
            self.backend, self.limits, self.device_label = cpu, cpu.limits, "CPU"

    panel = BenchPanel(by_name(algorithm), Model(), TimingLog())
    qtbot.addWidget(panel)
    return panel


def test_a_benchmark_panels_measure_runs_on_the_clusters_gpu_and_stop_reaches_it(qtbot, gpu_cluster, monkeypatch):
    from kernels.cluster import worker_side

    monkeypatch.setattr(worker_side, "measure_counters", measure_counters)
    panel = cpu_panel(qtbot)
    measure = panel.measure
    try:
        panel.set_variants(["best", "two-kernel", "numpy"])  # GPU variants, though this machine runs none
        assert measure.button.isEnabled(), measure.button.toolTip()
        assert "on the cluster's H200 (Run on)" in measure.button.toolTip()
        with qtbot.waitSignal(measure.measured, timeout=WAIT) as got:
            measure.button.click()
            assert "with ncu on the cluster's H200" in panel.status.text()
        assert CALLS == [("counters", ["two-kernel", "best"], [panel.n.value()], CALLS[0][3])]  # the panel's order
        assert got.args[:2] == ["reduction", panel.n.value()] and set(got.args[2]) == {"best", "two-kernel"}
        assert "counters for 2 of 2 variant(s)" in panel.status.text()
        assert panel.run_button.isEnabled() and not panel.stop_button.isEnabled()
        monkeypatch.setattr(worker_side, "measure_counters", counters_until_stopped)
        measure.button.click()
        qtbot.waitUntil(lambda: panel.status.text().startswith("ncu: measuring on the cluster's H200"), timeout=WAIT)
        assert panel.stop_button.isEnabled()
        panel.stop()
        qtbot.waitUntil(lambda: not measure.running, timeout=WAIT)
        assert panel.status.text() == "measuring stopped" and measure.button.isEnabled()
        qtbot.waitUntil(lambda: CALLS[-1][0] == "stopped", timeout=WAIT)  # the worker's run heard the Stop
        assert CALLS[-1] == ("stopped", ["two-kernel", "best"], [panel.n.value()], True)
        gpu_cluster.use_here()  # this machine again: its own reason, at once
        assert not measure.button.isEnabled() and measure.button.toolTip().startswith("counters cannot be read")
    finally:
        panel.shutdown()


def test_a_panels_run_on_the_cluster_saves_the_ceilings_its_worker_measured(qtbot, gpu_cluster):
    """The run's result file (the panel saves it; Export JSON writes it) lists the ceiling the rows were judged
    against, measured by the worker that ran them, not this process's."""
    panel = cpu_panel(qtbot, "hashtable")
    try:
        panel.set_variants(["cpu"])
        panel.show_peak.setChecked(True)  # with the copy peak's line: the ceilings are measured
        panel.n.setValue(1000)
        panel.repeats.setValue(1)
        assert panel.run()
        qtbot.waitUntil(lambda: not panel.busy() and panel.results.last is not None, timeout=WAIT)
        (row,) = [r for r, _ in panel.rows if r.variant == "cpu"]
        (figure,) = panel.results.last.device["ceilings"]
        assert row.worker and figure["by"] == f"worker {row.worker}"
        assert figure["ceiling"] == row.ceiling == "cas" and figure["rate"] == row.ceiling_rate > 0
    finally:
        panel.shutdown()
