"""The render path at scale in the window (issues 11 and 13): the sphere count control's limits per memory,
binned tiles in the window, Julia's automatic float64 and Copy view, the time outside the kernel in the
status line, the sphere count curve, and the Inspector dock opened from a benchmark panel.
pytest-qt, offscreen; QSettings in a temp dir; no timing asserts."""

from __future__ import annotations

import re
import shlex
import statistics

import numpy as np
import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtWidgets import QApplication

from tests.references import spheres_reference
from tests.test_gui import WAIT, make_window, preset, settings_dir, wait_frame  # noqa: F401

CONSTANT_BYTES, SPHERE_BYTES = 64 * 1024, 28  # the constant bank and one sphere record (7 float32)


# ---------------------------------------------------------------------------------------------- count control
def _controls(qtbot, backend):
    from raytracer_app.gui.render.controls import Controls
    from raytracer_app.gui.render.models import RenderModel

    model = RenderModel(backend)
    controls = Controls(model)
    qtbot.addWidget(controls)
    return model, controls


def test_count_control_limits_per_memory(qtbot, cuda_backend, monkeypatch):
    """With the simulator's own cap lifted the model behaves as on a GPU: a million spheres for global,
    shared and binned memory, the constant bank's capacity for constant memory, shown with the reason."""
    import dataclasses

    import kernels.backend as backends

    monkeypatch.setitem(backends._CAPS, "sim", dataclasses.replace(backends._CAPS["sim"], max_spheres=10**9))
    model, controls = _controls(qtbot, cuda_backend)
    capacity = min(CONSTANT_BYTES, cuda_backend.limits.total_constant_memory) // SPHERE_BYTES
    for memory, expected in (("global", 1_000_000), ("shared", 1_000_000), ("binned", 1_000_000),
                             ("constant", capacity)):
        controls.memory_buttons[memory].click()
        assert model.memory == memory
        assert controls.count.maximum() == expected
        assert f"{expected:,}" in controls.count.limit.text()
    assert "constant memory" in controls.count.limit.text()  # why: the 64 KiB bank / 28 bytes
    # typed past the limit: clamped to it
    controls.memory_buttons["global"].click()
    controls.count.spin.setValue(2_000_000)
    assert model.scene.count == 1_000_000
    # switching to constant with more spheres than it holds clamps the random scene and says so
    messages = []
    model.message.connect(messages.append)
    controls.count.spin.setValue(5000)
    controls.memory_buttons["constant"].click()
    assert (model.memory, model.scene.count) == ("constant", capacity)
    assert messages and f"{capacity:,}" in messages[-1]


def test_a_loaded_scene_larger_than_constant_memory_keeps_its_memory(qtbot, cuda_backend, monkeypatch):
    from kernels.spheres.scene import Scene
    import dataclasses

    import kernels.backend as backends

    monkeypatch.setitem(backends._CAPS, "sim", dataclasses.replace(backends._CAPS["sim"], max_spheres=10**9))
    model, controls = _controls(qtbot, cuda_backend)
    spheres = np.tile(np.array([[1, 0, 0, 5, 0, 0, 0]], np.float32), (3000, 1))
    model.set_scene(Scene(spheres, "big"), "big.json")
    messages = []
    model.message.connect(messages.append)
    controls.memory_buttons["constant"].click()
    assert model.memory == "global" and model.scene.count == 3000
    assert controls.memory_buttons["global"].isChecked()
    assert messages and "3,000" in messages[-1]


def test_simulator_keeps_its_own_small_cap(qtbot, cuda_backend):
    from raytracer_app.gui.common.sim_limits import SIM_MAX_SPHERES

    if not cuda_backend.is_simulator:
        pytest.skip("the simulator's cap applies to the simulator only; this session has a GPU")
    model, controls = _controls(qtbot, cuda_backend)
    for memory in ("global", "binned"):
        controls.memory_buttons[memory].click()
        assert controls.count.maximum() == SIM_MAX_SPHERES
        assert "simulator" in controls.count.limit.text()


def test_count_slider_is_logarithmic():
    from raytracer_app.gui.render.count_control import SLIDER_STEPS, count_at, position_of

    assert count_at(0, 1_000_000) == 1 and count_at(SLIDER_STEPS, 1_000_000) == 1_000_000
    assert count_at(SLIDER_STEPS // 2, 1_000_000) == 1000  # halfway in the exponent
    assert position_of(1000, 1_000_000) == SLIDER_STEPS // 2


def test_random_scene_is_laid_out_for_the_image(qtbot, cpu_backend):
    model, _ = _controls(qtbot, cpu_backend)
    model.set_size((200, 100), "spheres")
    model.set_sphere_count(500)
    xs, ys = model.scene.spheres[:, 4], model.scene.spheres[:, 5]
    assert xs.min() >= -100 and xs.max() <= 100 and ys.min() >= -50 and ys.max() <= 50


# ---------------------------------------------------------------------------------------------- binned in the window
@pytest.mark.slow
def test_binned_tiles_render_the_same_image_as_global(qtbot, make_window, cuda_backend):
    preset(cuda_backend.kind, **{"render/size_spheres": "24x24", "spheres/count": 6, "spheres/seed": 3})
    w = make_window(cuda_backend)
    first = wait_frame(qtbot, w, memory="global", spheres=6)
    w.controls.mem_binned.click()
    binned = wait_frame(qtbot, w, memory="binned")
    np.testing.assert_array_equal(binned.image, first.image)
    np.testing.assert_array_equal(binned.image, spheres_reference(w.model.scene.spheres, 24, 24))


# ---------------------------------------------------------------------------------------------- Julia deep zoom
def _float32_resolves(center, zoom, w, h, scale=1.5, min_ulps=16) -> bool:
    """Written from the definition: a pixel must span at least 16 float32 steps at the view's edge."""
    step = scale / zoom / (min(w, h) // 2)
    largest = max(abs(center[0]) + step * (w / 2 + 1), abs(center[1]) + step * (h / 2 + 1))
    return step / float(np.spacing(np.float32(largest))) >= min_ulps


def test_julia_auto_precision_switches_and_says_so(qtbot, make_window, cpu_backend):
    preset(**{"render/size_julia": "48x48", "view/tab": "julia"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w, "julia")
    w.controls.precision.setCurrentText("auto")
    w.controls.precision.textActivated.emit("auto")
    center = (0.3, 0.5)
    for zoom in (1e3, 1e5, 1e2):
        w.model.set_julia(center=center, zoom=zoom)
        expected = "float32" if _float32_resolves(center, zoom, 48, 48) else "float64"
        assert w.model.julia.precision == expected
        wait_frame(qtbot, w, "julia", precision=expected)
        if zoom == 1e5:
            assert expected == "float64" and "float64" in w.statusBar().currentMessage()
    w.controls.precision.setCurrentText("float32")
    w.controls.precision.textActivated.emit("float32")
    w.model.set_julia(zoom=1e6)
    assert w.model.julia.precision == "float32"  # a fixed choice is kept


def test_copy_view_puts_a_render_command_on_the_clipboard(qtbot, make_window, cpu_backend):
    preset(**{"render/size_julia": "40x30", "view/tab": "julia"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w, "julia")
    w.model.set_julia(center=(-0.7436438870371587, 0.1318259042053988), zoom=123456.789, c=complex(-0.8, 0.156))
    w.controls.copy_view.click()
    words = shlex.split(QApplication.clipboard().text())
    assert words[:3] == ["raytracer-app", "render", "julia"]
    options = dict(re.match(r"--([a-z]+)=?(.*)", a).groups() if "=" in a else (a[2:], b)
                   for a, b in zip(words[3:], words[4:] + [""]) if a.startswith("--"))
    cx, cy = map(float, options["center"].split(","))
    assert (cx, cy) == (-0.7436438870371587, 0.1318259042053988)  # every digit: the view is reproducible
    assert float(options["zoom"]) == 123456.789
    assert options["size"] == "40x30"
    assert options["precision"] == w.model.julia.precision
    assert "-0.7436438870371587" in w.controls.view_label.text()


# ---------------------------------------------------------------------------------------------- status line
def test_status_line_shows_time_outside_the_kernel(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "64x64"})
    w = make_window(cpu_backend)
    frame = wait_frame(qtbot, w)
    w.request_render(force=True)
    qtbot.waitUntil(lambda: w.last["spheres"][0] is not frame, timeout=WAIT)
    frame = w.last["spheres"][0]
    samples = frame.frame_timing.samples_ms if frame.frame_timing else [frame.frame_ms]
    outside = statistics.median(f - k for f, k in zip(samples, frame.kernel.samples_ms))
    shown = float(re.search(r"outside kernel ([0-9.]+) ms", w.status["outside"].text()).group(1))
    assert shown == pytest.approx(outside + w.display_ms["spheres"], abs=0.006)


# ---------------------------------------------------------------------------------------------- count curve
def test_sphere_count_curve_runs_and_cancels(qtbot, make_window, cpu_backend, monkeypatch):
    from raytracer_app.gui.render import count_curve

    monkeypatch.setattr(count_curve, "CPU_COUNTS", (20, 40, 80))
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    dialog = w.sphere_count_curve()
    with qtbot.waitSignal(dialog.finished_run, timeout=WAIT) as done:
        pass
    assert done.args == [False]
    assert sorted(r.n for r in dialog.rows) == [20, 20, 40, 40, 80, 80]  # the row twin and the tiled one
    for line in ("cpu", "cpu-tiles"):
        xs, ys = dialog.lines[line].getOriginalDataset()  # before the log axes
        assert list(xs) == [20, 40, 80] and all(y > 0 for y in ys)
    assert dialog.plot.getPlotItem().ctrl.logXCheck.isChecked()
    with qtbot.waitSignal(dialog.finished_run, timeout=WAIT) as done:
        dialog.start()
        dialog.cancel()
    assert done.args == [True]
    assert len(dialog.rows) < 6
    dialog.close()


# ---------------------------------------------------------------------------------------------- inspector dock
def _window_with_inspector(make_window, backend):
    """A window with its Inspector built, and its Reduction panel; skipped without the compiler packages."""
    from kernels.inspector import toolchain

    if toolchain.missing():
        pytest.skip(f"the compiler packages are not installed: {toolchain.EXTRA_HINT}")
    w = make_window(backend)
    return w, w.ensure_inspector(), w.panels["Reduction"]


@pytest.mark.slow  # a real compile
def test_inspector_dock_opens_from_a_table_row_and_follows_the_block_slider(qtbot, make_window, cpu_backend):
    from kernels.inspector.occupancy import occupancy

    w, inspector, panel = _window_with_inspector(make_window, cpu_backend)
    panel.set_variants(["best"])
    panel.n.setValue(4096)
    panel.show_peak.setChecked(False)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.table.rowCount() == 1, timeout=WAIT)
    panel.table.cellClicked.emit(0, 0)
    assert w.inspector_dock.isVisible()
    qtbot.waitUntil(lambda: inspector.panel.report is not None, timeout=WAIT * 3)
    report = inspector.panel.report
    assert (report.target, report.variant) == ("reduction", "best")
    assert report.ptx and report.sass
    panel.block.setValue(0)  # the smallest block of the sweep
    threads = panel.block_size()
    xs, ys = inspector.panel.marker.getData()
    expected = occupancy(report.arch, threads, report.resources.registers,
                         report.resources.static_shared + 0)
    assert list(xs) == [threads]
    assert ys[0] == pytest.approx(expected.percent)


def test_inspector_roofline_places_benchmark_rows_with_the_panels_bandwidth(qtbot):
    from types import SimpleNamespace

    from kernels.harness.rows import Row
    from kernels.timing import Timing
    from raytracer_app.gui.inspector.dock import InspectorDock

    dock = InspectorDock()
    qtbot.addWidget(dock)
    try:
        dock.peaks["reduction"] = SimpleNamespace(gbps=1000.0, arch="sm_90")  # measured on an sm_90 GPU
        n, blocks, seconds = 1 << 20, 264, 0.5e-3
        row = Row("best", "sum", "int32", n, "cuda", "test", block="256", grid=str(blocks), repeats=1,
                        timing=Timing((seconds * 1e3,), "cuda-events"))
        assert dock.add_row("reduction", row)
        assert not dock.add_row("reduction", Row("numpy", "sum", "int32", n, "cpu", "test"))  # CPU: no kernel
        (variant, point), = dock.points["reduction"]
        moved = 4 * n + 8 * blocks  # n int32 read once, one int64 atomic per block
        assert variant == "best"
        assert point.achieved_gbs == pytest.approx(moved / seconds / 1e9)
        assert point.intensity == pytest.approx(n / moved)
        assert "1000 GB/s" in dock.roofline_note.text()
    finally:
        dock.shutdown()


def test_the_roofline_of_an_architecture_uses_its_own_peaks_and_names_the_inspected_target(qtbot):
    """Issue 35: sm_90's roofline used this CPU's copy bandwidth (21 GB/s) under the H100's compute peak, and
    its title named the hash table while the reduction was inspected."""
    from types import SimpleNamespace

    from kernels.inspector.roofline import PUBLISHED
    from raytracer_app.gui.inspector.dock import InspectorDock

    dock = InspectorDock()
    qtbot.addWidget(dock)
    try:
        chart = dock.roofline_chart
        dock.peaks["hashtable"] = SimpleNamespace(gbps=21.0, arch=None)  # a CPU's copy: no GPU's roof
        dock.peaks["reduction"] = SimpleNamespace(gbps=21.0, arch=None)
        dock.panel.target_box.setCurrentText("reduction")
        for arch in ("sm_90", "sm_80"):
            dock.panel.arch_box.setCurrentText(arch)
            assert chart.ceilings("reduction") == PUBLISHED[arch]  # that part's own bandwidth and peak
            assert f"{PUBLISHED[arch].bandwidth_gbs:.0f} GB/s" in chart.note.text() + str(chart.legend.items[0][1].text)
            assert chart.info["target"] == "Roofline: reduction"
        dock.peaks["reduction"] = SimpleNamespace(gbps=1500.0, arch="sm_80")  # an A100 measured: on sm_80 only
        assert chart.ceilings("reduction").bandwidth_gbs == 1500.0
        dock.panel.arch_box.setCurrentText("sm_90")
        assert chart.ceilings("reduction") == PUBLISHED["sm_90"]
    finally:
        dock.shutdown()


@pytest.mark.slow  # real compiles
def test_inspector_opens_from_a_variant_name_and_compares_two_variants(qtbot, make_window, cpu_backend):
    from PyQt6.QtCore import QPoint, Qt

    w, inspector, panel = _window_with_inspector(make_window, cpu_backend)
    box = panel.checks["sequential"]
    checked = box.isChecked()
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(box.width() - 4, box.height() // 2))  # the name
    assert box.isChecked() == checked  # the name inspects; only the box toggles
    assert w.inspector_dock.isVisible()
    qtbot.waitUntil(lambda: inspector.panel.report is not None and inspector.panel.report.variant == "sequential",
                    timeout=WAIT * 3)
    assert inspector.panel.report.block == (panel.block_size(),)
    inspector.compare("sequential", "interleaved-divergent")
    qtbot.waitUntil(lambda: inspector.compare_table.rowCount() > 0, timeout=WAIT * 3)
    header = [inspector.compare_table.horizontalHeaderItem(c).text() for c in (1, 2)]
    assert header == ["sequential", "interleaved-divergent"]
    registers = {inspector.compare_table.item(r, 0).text(): r for r in range(inspector.compare_table.rowCount())}
    assert "registers per thread" in registers
    assert "sequential" in inspector.compare_status.text() or "interleaved" in inspector.compare_status.text()


def test_a_cpu_rows_click_says_so_in_the_panel_and_leaves_the_inspector(qtbot, make_window, cpu_backend):
    """Clicking the numpy row opened the Inspector on another variant with empty panes: now the panel says
    there is no GPU kernel to inspect, and the window stays where it is."""
    w = make_window(cpu_backend)
    inspector, panel = w.ensure_inspector(), w.panels["Reduction"]
    w.workspaces.select("Benchmarks")
    panel.set_variants(["numpy"])
    panel.n.setValue(4096)
    panel.repeats.setValue(1)
    panel.show_peak.setChecked(False)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.table.rowCount() == 1, timeout=WAIT)
    said = []
    panel.message.connect(said.append)
    panel.table.cellClicked.emit(0, 0)
    assert w.workspaces.current().name == "Benchmarks" and not w.inspector_dock.isVisible()
    assert "no GPU kernel of ours to inspect" in panel.status.text() and said
    assert inspector.panel.report is None
