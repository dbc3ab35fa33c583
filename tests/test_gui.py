"""GUI tests (pytest-qt, offscreen; QSettings in a temp dir). No timing asserts."""

from __future__ import annotations

import csv

import numpy as np
import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QSettings
from PyQt6.QtGui import QImage

from kernels.harness.rows import CSV_COLUMNS, FAILED, Row
from kernels.backend import resolve
from raytracer_app.gui.benchmarks.panel import TABLE_COLUMNS

WAIT = 60_000  # ms; generous for slow CI machines (the simulator, the first JIT compile)


@pytest.fixture(autouse=True)
def settings_dir(tmp_path):
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    yield tmp_path / "settings"


def preset(backend: str = "", **values):
    """Write settings the window reads at start (small images keep the tests fast). With ``backend`` they
    go to that backend kind's own settings (the simulator never reads the shared ones)."""
    from raytracer_app.gui.shell.backend_settings import GROUP
    from raytracer_app.gui.common.settings import make_settings

    s = make_settings()
    prefix = GROUP.format(backend) + "/" if backend else ""
    for key, value in values.items():
        s.setValue(prefix + key, value)
    s.sync()


@pytest.fixture
def make_window(qtbot):
    from raytracer_app.gui.shell.main_window import MainWindow

    windows = []

    def make(backend):
        w = MainWindow(backend)
        windows.append(w)
        w.show()
        return w

    yield make
    for w in windows:
        for panel in w.panels.values():
            panel.stop()
        w.close()
        qtbot.waitUntil(lambda w=w: w.render_thread.isFinished() and all(p.thread.isFinished() for p in w.panels.values()),
                        timeout=WAIT)


def shown(w, tab="spheres"):
    return w.last.get(tab, (None, None))[0]


def wait_frame(qtbot, w, tab="spheres", **meta):
    """The first kernel frame with ``meta`` (a window's first picture is the fast start's preview)."""
    def ok():
        f = shown(w, tab)
        assert f is not None and not f.preview and all(f.meta.get(k) == v for k, v in meta.items())

    qtbot.waitUntil(ok, timeout=WAIT)
    return shown(w, tab)


def test_window_opens_and_sphere_slider_renders(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "256x256"})
    w = make_window(cpu_backend)
    assert w.windowTitle()
    wait_frame(qtbot, w)
    w.controls.count.spin.setValue(7)  # typed (the slider is logarithmic)
    frame = wait_frame(qtbot, w, spheres=7)
    assert frame.image.shape == (256, 256, 4)
    assert np.shares_memory(w.view.view("spheres").item.image, frame.image)  # shown without a copy
    assert "256x256" in w.status["size"].text() and "kernel" in w.status["kernel"].text()
    # the CPU backend has no memory spaces: the toggle is disabled and says why
    assert not w.controls.mem_constant.isEnabled()
    assert "CPU backend" in w.controls.mem_constant.toolTip()
    assert not w.compare_action.isEnabled()


def _visible_seed(count: int, size) -> int:
    """A seed whose random scene shows at least one sphere in a small image (CPU twin, same pixels)."""
    from kernels.spheres.renderer import SphereRenderer
    from kernels.spheres.scene import generate_scene

    r = SphereRenderer(resolve("cpu"))
    for seed in range(200):
        if r.render(generate_scene(count, seed), size).image[..., :3].any():
            return seed
    raise AssertionError("no visible scene")


@pytest.mark.slow
def test_memory_toggle_same_image_new_timing_and_compare(qtbot, make_window, cuda_backend):
    seed = _visible_seed(8, (32, 32))  # a small image: the simulator runs a thread per pixel, in Python
    preset(cuda_backend.kind, **{"render/size_spheres": "32x32", "spheres/count": 8, "spheres/seed": seed})
    w = make_window(cuda_backend)
    assert w.controls.mem_constant.isEnabled()
    first = wait_frame(qtbot, w, memory="global", spheres=8)
    assert first.image[..., :3].any()
    w.controls.mem_constant.click()
    second = wait_frame(qtbot, w, memory="constant")
    np.testing.assert_array_equal(first.image, second.image)
    assert second.kernel is not first.kernel
    w.controls.mem_shared.click()
    third = wait_frame(qtbot, w, memory="shared")
    np.testing.assert_array_equal(first.image, third.image)
    # Compare memory charts both timings side by side
    w.controls.compare_repeats.setValue(2)
    assert w.compare_memory()
    qtbot.waitUntil(lambda: w.compare_dialog is not None and w.compare_dialog.chart.bars is not None, timeout=WAIT)
    assert len(w.compare_dialog.chart.bars.opts["height"]) == 2
    variants = [r.variant for r in w.log.rows]
    assert "spheres-global" in variants and "spheres-constant" in variants


def test_backend_entries(qtbot, make_window, cpu_backend):
    from kernels.backend import gpu_count, simulator_active

    w = make_window(cpu_backend)
    items = w.controls.backend.model()
    names = [w.controls.backend.itemText(i) for i in range(w.controls.backend.count())]
    assert names == ["auto", "cuda", "cpu", "sim"]
    if not w.controls.backends_checked:  # a CPU window asks for GPUs once its first frame is shown
        assert not items.item(1).isEnabled() and "checking for a CUDA GPU" in items.item(1).toolTip()
    qtbot.waitUntil(lambda: w.controls.backends_checked, timeout=WAIT)
    assert w.first_frame_s is not None
    assert items.item(3).isEnabled() == simulator_active()
    assert items.item(1).isEnabled() == (gpu_count() > 0)
    if not simulator_active():
        assert "--backend sim" in items.item(3).toolTip()


@pytest.mark.slow
def test_switching_backend_renders_there(qtbot, make_window, cpu_backend, cuda_backend):
    preset(**{"render/size_spheres": "48x48", "spheres/count": 4})
    preset(cuda_backend.kind, **{"render/size_spheres": "32x32"})  # not the simulator's 64x64: a thread a pixel
    w = make_window(cpu_backend)
    assert wait_frame(qtbot, w).backend == "cpu"
    assert w.panels["Reduction"].selected_variants() == ["numpy", "cpu-parallel"]
    w.controls._backend_chosen(cuda_backend.kind)
    frame = wait_frame(qtbot, w, memory="global")
    assert frame.backend == cuda_backend.kind and frame.block == w.model.block
    # the panel now checks exactly the variants that run on this backend (in the simulator: no shuffles, no peers)
    from kernels.reduction import VARIANTS

    runnable = [v.name for v in VARIANTS if v.skip_reason(cuda_backend) is None]
    assert w.panels["Reduction"].selected_variants() == runnable
    assert ("best" in runnable) == cuda_backend.is_gpu
    assert w.controls.mem_constant.isEnabled() and w.compare_action.isEnabled()


def test_typing_a_block_side_keeps_it_and_shrinks_the_other(qtbot, make_window, cuda_backend):
    """Typing 64 into Block height beside a width of 32 gives 64 (the width shrinks to keep the product within
    the limit); a range of 1..32 used to refuse the second digit and leave 6."""
    from PyQt6.QtCore import Qt

    preset("sim" if cuda_backend.is_simulator else "", **{"render/size_spheres": "8x8", "spheres/count": 2})
    w = make_window(cuda_backend)
    c, limit = w.controls, w.model.limits.max_threads_per_block
    w.model.set_block(32, 32)
    assert c.by.spin.maximum() >= 64 and c.by.slider.maximum() >= 64
    line = c.by.spin.lineEdit()
    c.by.spin.setFocus()
    line.selectAll()
    qtbot.keyClicks(line, "64")
    qtbot.keyClick(c.by.spin, Qt.Key.Key_Return)
    assert w.model.block == (limit // 64, 64) and c.by.value() == 64 and c.bx.value() == limit // 64
    c.bx.spin.setValue(limit)  # the other way round: the width kept, the height shrinks
    assert w.model.block == (limit, 1)
    c.by.spin.setValue(5000)  # beyond any side: the box holds the device's limit
    assert w.model.block[0] * w.model.block[1] <= limit


def _run_panel(qtbot, panel, n=4096, repeats=2):
    panel.n.setValue(n)
    panel.repeats.setValue(repeats)
    assert panel.run()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)


@pytest.mark.slow
def test_the_hash_table_panel_charts_ops_per_second_against_the_load_factor(qtbot, make_window, cpu_backend):
    """Mode "sweep load" runs every suggested load factor, one row each; with two ops typed, the chart draws
    one line per variant and op, each point at its row's own load."""
    w = make_window(cpu_backend)
    panel = w.panels["Hash table"]
    panel.set_variants(["cpu-two-choice"])
    panel.options["op"].setEditText("insert,find")
    panel.sweep.setCurrentText("sweep load")
    request = panel.request()
    assert request.option_values["load"] == (0.5, 0.8, 0.9, 0.95)
    assert request.option_values["op"] == ("insert", "find")
    _run_panel(qtbot, panel, n=512, repeats=1)
    assert len(panel.rows) == 8 and all(r.ok for r, _ in panel.rows)
    assert sorted(panel.chart.lines) == ["cpu-two-choice · find", "cpu-two-choice · insert"]
    xs, _ = panel.chart.lines["cpu-two-choice · find"].getData()
    assert list(xs) == [0.5, 0.8, 0.9, 0.95]
    assert panel.chart.getPlotItem().getAxis("bottom").labelText == "load"


@pytest.mark.slow
@pytest.mark.parametrize("title", ["Reduction", "Histogram", "Hash table"])
def test_benchmark_panel_fills_chart_table_and_csv(qtbot, make_window, cpu_backend, tmp_path, title):
    w = make_window(cpu_backend)
    panel = w.panels[title]
    names = panel.selected_variants()
    assert names, "the CPU variants are checked by default on the cpu backend"
    panel.show_peak.setChecked(title == "Reduction")
    _run_panel(qtbot, panel)
    assert panel.table.rowCount() == len(names)
    assert panel.chart.bar_count() == len(names)
    verified = panel.table.item(0, TABLE_COLUMNS.index("verified")).text()
    assert verified == "yes", verified
    if title == "Reduction":
        assert panel.chart.peak_gbps and panel.chart.peak_line.scene() is not None
    path = tmp_path / "results.csv"
    assert panel.export_csv(path)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert tuple(reader.fieldnames) == CSV_COLUMNS
    assert [r["variant"] for r in rows] == names and all(r["verified"] == "yes" for r in rows)
    assert panel.export_chart(tmp_path / "chart.png")
    assert QImage(str(tmp_path / "chart.png")).width() > 0
    # File > Export Timings CSV has the renders and the benchmark rows, same columns
    wait_frame(qtbot, w)
    all_path = tmp_path / "timings.csv"
    assert w.menus.export_timings(all_path)
    with open(all_path, newline="") as f:
        reader = csv.DictReader(f)
        timings = list(reader)
    assert tuple(reader.fieldnames) == CSV_COLUMNS
    assert set(names) <= {r["variant"] for r in timings}
    frames = [r for r in timings if r["dtype"] == "rgba8"]  # the rendered frames: shown, never "skipped"
    assert frames and all(r["verified"] == "not checked" for r in frames)


def test_a_panels_run_is_one_request_in_the_panels_words(qtbot, make_window, cpu_backend):
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    panel.set_variants(["numpy"])
    panel.n.setValue(3000)
    panel.warmup.setValue(4)
    panel.repeats.setValue(3)
    request = panel.request()
    assert (request.sizes, request.variants, request.repeats, request.warmup) == ((3000,), ("numpy",), 3, 4)
    assert request.policy.warmup == 4
    panel.rounds.setValue(3)
    panel.repeats.setValue(2)
    assert not panel.run()  # refused before anything runs, in the panel's own words
    assert "Rounds 3 is more than Repeats 2" in panel.status.text()


def test_failed_verification_is_red_and_says_what_came_out(qtbot, make_window, cpu_backend):
    from raytracer_app.gui.benchmarks.panel import FAILED_BG

    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    row = Row("numpy", "sum", "int32", 10, "cpu", "cpu", verified=FAILED, result=41, expected=42,
                    note="off by one")
    panel._add_table_row(row)
    item = panel.table.item(0, TABLE_COLUMNS.index("verified"))
    assert "got 41" in item.text() and "expected 42" in item.text()
    assert item.background().color() == FAILED_BG


def test_stop_ends_a_sweep(qtbot, make_window, cpu_backend):
    w = make_window(cpu_backend)
    panel = w.panels["Reduction"]
    panel.show_peak.setChecked(False)
    panel.sweep.setCurrentText("sweep N")
    panel.n.setValue(1 << 22)
    panel.repeats.setValue(200)
    assert panel.run()
    total = panel.progress.maximum()
    qtbot.waitUntil(lambda: len(panel.rows) >= 1, timeout=WAIT)
    panel.stop_button.click()
    qtbot.waitUntil(lambda: not panel.busy() and panel.run_button.isEnabled(), timeout=WAIT)
    assert len(panel.rows) < total
    assert "stopped" in panel.status.text()
    assert panel.chart.line_count() >= 1 and panel.chart.getPlotItem().getAxis("bottom").logMode


def test_save_image_writes_png_of_the_frame_size(qtbot, make_window, cpu_backend, tmp_path):
    from raytracer_app.png import read_png_text

    preset(**{"render/size_spheres": "200x120"})
    w = make_window(cpu_backend)
    frame = wait_frame(qtbot, w)
    path = tmp_path / "frame.png"
    assert w.menus.save_image(path)
    img = QImage(str(path))
    assert (img.width(), img.height()) == (200, 120)
    y, x = np.argwhere(frame.image[..., :3].any(axis=2))[0] if frame.image[..., :3].any() else (0, 0)
    px = img.pixelColor(int(x), int(y))
    assert (px.red(), px.green(), px.blue()) == tuple(int(v) for v in frame.image[y, x, :3])
    text = read_png_text(path)
    assert "raytracer:kernel_ms" in text and "raytracer:scene_json" in text
    shot = tmp_path / "window.png"
    assert w.menus.save_screenshot(shot) and QImage(str(shot)).width() > 0


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_closing_during_a_run_exits_cleanly(qtbot, make_window, cpu_backend):
    w = make_window(cpu_backend)
    panel = w.panels["Histogram"]
    panel.show_peak.setChecked(False)
    panel.sweep.setCurrentText("sweep N")
    panel.n.setValue(1 << 22)
    panel.repeats.setValue(200)
    assert panel.run()
    qtbot.waitUntil(panel.busy, timeout=WAIT)
    w.close()
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=WAIT)
    qtbot.waitUntil(lambda: w.render_thread.isFinished() and panel.thread.isFinished(), timeout=WAIT)


def test_failed_render_shows_message_and_next_render_succeeds(qtbot, make_window, cpu_backend, monkeypatch):
    from kernels.spheres.renderer import SphereRenderer

    preset(**{"render/size_spheres": "64x64"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    real, calls = SphereRenderer.render, []

    def flaky(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("simulated launch failure")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SphereRenderer, "render", flaky)
    w.controls.count.spin.setValue(3)
    qtbot.waitUntil(lambda: "render failed" in w.statusBar().currentMessage(), timeout=WAIT)
    assert "simulated launch failure" in w.statusBar().currentMessage()
    w.controls.count.spin.setValue(4)
    wait_frame(qtbot, w, spheres=4)


def test_julia_pan_follows_pointer_and_reset(qtbot, make_window, cpu_backend):
    preset(**{"view/tab": "julia", "render/size_julia": "96x64", "julia/colormap": "smooth"})
    w = make_window(cpu_backend)
    before = wait_frame(qtbot, w, "julia").image
    w.view.boxes["julia"].panRequested.emit(6.0, 4.0)
    cx, cy = w.model.julia.center
    assert (cx, cy) != (0.0, 0.0)
    after = wait_frame(qtbot, w, "julia", center=f"{cx},{cy}").image
    # the picture moved with the pointer: what was at (x, y) is now at (x + 6, y + 4)
    same = np.mean(np.all(after[4:, 6:] == before[:-4, :-6], axis=2))
    assert same > 0.97, same
    w.view.boxes["julia"].zoomRequested.emit(2.0, 10.0, 20.0)
    qtbot.waitUntil(lambda: w.model.julia.zoom == 2.0, timeout=WAIT)
    w.reset_view()
    assert w.model.julia.center == (0.0, 0.0) and w.model.julia.zoom == 1.0


def test_settings_persist(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "64x64"})
    w = make_window(cpu_backend)
    wait_frame(qtbot, w)
    w.controls.count.spin.setValue(11)
    w.view.select("julia")
    w.panels["Histogram"].n.setValue(12345)
    w.panels["Histogram"].sweep.setCurrentText("sweep N")  # block size: disabled on the cpu backend
    w.close()
    qtbot.waitUntil(lambda: w.render_thread.isFinished(), timeout=WAIT)
    w2 = make_window(cpu_backend)
    assert w2.model.scene.count == 11 and w2.model.tab == "julia"
    assert w2.controls.count.value() == 11 and w2.view.current_name() == "julia"
    assert w2.panels["Histogram"].n.value() == 12345
    assert w2.panels["Histogram"].sweep.currentText() == "sweep N"


def test_run_gui_entry_point(qtbot, monkeypatch):
    import sys

    from PyQt6.QtCore import QTimer
    from PyQt6.QtWidgets import QApplication

    from raytracer_app.gui import run_gui
    from raytracer_app.gui.shell.main_window import MainWindow

    preset(**{"render/size_spheres": "64x64", "backend/name": "cpu"})
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # run_gui installs its own
    seen = []

    def close_after_first_frame():
        for w in QApplication.topLevelWidgets():
            if isinstance(w, MainWindow) and w.isVisible() and w.first_frame_s is not None:
                seen.append(w.model.backend.kind)
                w.close()
                return
        QTimer.singleShot(20, close_after_first_frame)

    QTimer.singleShot(0, close_after_first_frame)
    guard = QTimer()  # never hang the test run
    guard.setSingleShot(True)
    guard.timeout.connect(QApplication.quit)
    guard.start(WAIT)
    try:
        assert run_gui("auto") == 0
    finally:
        guard.stop()
    assert seen == ["cpu"]  # 'auto' reopens the backend saved last time


def test_render_worker_coalesces_requests(qtbot):
    """While a frame renders, newer requests overwrite one pending slot: only the newest is rendered next."""
    import threading

    from raytracer_app.gui.common.workers import WorkerThread
    from raytracer_app.gui.render.worker import RenderWorker

    worker = RenderWorker()
    started, release, rendered, shown = threading.Event(), threading.Event(), [], []

    def fake_render(request, memory=None, repeats=None):
        rendered.append(request)
        started.set()
        release.wait(WAIT / 1000)
        return f"frame {request}"

    worker._start_frame = lambda request, memory=None, repeats=None: lambda: fake_render(request)
    thread = WorkerThread(worker, "test-render")
    worker.frameReady.connect(lambda frame, request: (shown.append(request), worker.ack()))
    thread.start()
    try:
        worker.submit(0)
        assert started.wait(WAIT / 1000)
        for seq in range(1, 50):  # a slider dragged while frame 0 renders
            worker.submit(seq)
        release.set()
        qtbot.waitUntil(lambda: shown == [0, 49] and worker.idle(), timeout=WAIT)
        assert rendered == [0, 49]
    finally:
        release.set()
        assert thread.shutdown()


def test_render_worker_renders_one_frame_ahead_and_holds_it_until_the_ack(qtbot):
    """While the GUI shows frame 0 (no ack yet), the worker renders the next request but delivers it only
    on the ack, and renders nothing further until then: one result in flight, one held."""
    from raytracer_app.gui.common.workers import WorkerThread
    from raytracer_app.gui.render.worker import RenderWorker

    worker = RenderWorker()
    rendered, shown = [], []

    def fake_render(request, memory=None, repeats=None):
        rendered.append(request)
        return f"frame {request}"

    worker._start_frame = lambda request, memory=None, repeats=None: lambda: fake_render(request)
    thread = WorkerThread(worker, "test-render-ahead")
    worker.frameReady.connect(lambda frame, request: shown.append(request))  # no ack: the GUI is busy
    thread.start()
    try:
        worker.submit(0)
        qtbot.waitUntil(lambda: shown == [0], timeout=WAIT)
        worker.submit(1)
        qtbot.waitUntil(lambda: rendered == [0, 1], timeout=WAIT)  # rendered ahead...
        worker.submit(2)
        qtbot.wait(100)
        assert shown == [0] and rendered == [0, 1] and not worker.idle()  # ...held; 2 waits for the ack
        worker.ack()
        qtbot.waitUntil(lambda: shown == [0, 1] and rendered == [0, 1, 2], timeout=WAIT)
        worker.ack()
        qtbot.waitUntil(lambda: shown == [0, 1, 2], timeout=WAIT)
        worker.ack()
        qtbot.waitUntil(worker.idle, timeout=WAIT)
    finally:
        assert thread.shutdown()


def test_render_worker_queues_the_next_frame_before_handing_over_the_finished_one(qtbot):
    """A finished frame goes to the GUI only once the next request's GPU work is queued (the GUI holds the
    GIL through its repaint, so a launch after the hand-over would wait for it): the order is launch 2,
    then frame 1 shown, then frame 2 completed; and ``started`` follows the hand-over."""
    from raytracer_app.gui.common.workers import WorkerThread
    from raytracer_app.gui.render.worker import RenderWorker

    worker = RenderWorker()
    events = []

    def start(request, memory=None, repeats=None):
        events.append(("launch", request))
        return lambda: (events.append(("done", request)), f"frame {request}")[1]

    worker._start_frame = start
    thread = WorkerThread(worker, "test-render-handoff")
    worker.frameReady.connect(lambda frame, request: events.append(("shown", request)))
    worker.started.connect(lambda request: events.append(("started", request)))
    thread.start()
    try:
        worker.submit(0)
        qtbot.waitUntil(lambda: ("shown", 0) in events, timeout=WAIT)
        worker.submit(1)
        qtbot.waitUntil(lambda: ("done", 1) in events, timeout=WAIT)  # held: 0 is not acked
        worker.submit(2)
        worker.ack()
        qtbot.waitUntil(lambda: ("done", 2) in events and ("shown", 1) in events, timeout=WAIT)
        after = events[events.index(("done", 1)) + 1:]
        assert after.index(("launch", 2)) < after.index(("shown", 1)) < after.index(("started", 2))
        worker.ack()
        qtbot.waitUntil(lambda: ("shown", 2) in events, timeout=WAIT)  # nothing waits: handed over at once
        worker.ack()
        qtbot.waitUntil(worker.idle, timeout=WAIT)
    finally:
        assert thread.shutdown()


def test_render_worker_says_started_only_for_frames_not_queued_on_the_gpu(qtbot):
    """A frame whose GPU work is queued already (an untimed continuous frame) finishes within a frame's time:
    no ``started`` for it, one signal less to the GUI per frame; any other request still says so."""
    from kernels.harness.frames import Queued
    from raytracer_app.gui.common.workers import WorkerThread
    from raytracer_app.gui.render.worker import RenderWorker

    worker = RenderWorker()
    worker._preview_first = False
    events = []

    def start(request, memory=None, repeats=None):
        complete = lambda: f"frame {request}"  # noqa: E731
        return Queued(complete) if request % 2 else complete

    worker._start_frame = start
    thread = WorkerThread(worker, "test-render-started")
    worker.frameReady.connect(lambda frame, request: (events.append(("shown", request)), worker.ack()))
    worker.started.connect(lambda request: events.append(("started", request)))
    thread.start()
    try:
        for request in range(4):
            worker.submit(request)
            qtbot.waitUntil(lambda request=request: ("shown", request) in events, timeout=WAIT)
        qtbot.waitUntil(worker.idle, timeout=WAIT)
        assert [r for kind, r in events if kind == "started"] == [0, 2]
    finally:
        assert thread.shutdown()


def test_a_frame_view_calls_back_after_the_paint_or_at_once_when_hidden(qtbot):
    """The window acks a frame once it is painted (so a frame rendered ahead never replaces an unpainted
    one); a hidden view cannot paint and answers at once."""
    import numpy as np

    from raytracer_app.gui.render.view import FrameView

    class Shown:
        image = np.zeros((8, 8, 4), np.uint8)

    view = FrameView()
    qtbot.addWidget(view)
    calls = []
    view.show_frame(Shown())
    view.when_painted(lambda: calls.append("hidden"))
    assert calls == ["hidden"]
    view.resize(64, 64)
    view.show()
    qtbot.waitExposed(view)
    paints = []
    view.item.painted = lambda: (paints.append(1), view._painted())
    view.show_frame(Shown())
    view.when_painted(lambda: calls.append("painted"))
    qtbot.waitUntil(lambda: calls == ["hidden", "painted"], timeout=WAIT)
    assert paints  # it came from the paint, not the fallback timer (which would leave paints empty)


def test_the_menus_are_built_for_the_window(qtbot, make_window, cpu_backend):
    """menus.Menus builds the menu bar: four menus, the actions the window keeps using by name, and the File
    and Help handlers on the Menus object."""
    w = make_window(cpu_backend)
    bar = w.menuBar()
    assert [a.text() for a in bar.actions()] == ["&File", "&View", "&Render", "&Help"]
    assert (w.continuous_action, w.compare_action, w.restart_action) == (w.menus.continuous, w.menus.compare,
                                                                         w.menus.restart)
    texts = {a.text(): a for menu in bar.actions() for a in menu.menu().actions() if a.text()}
    assert texts["&Export Timings CSV…"].shortcut().toString() == "Ctrl+E"
    assert texts["Render &Continuously"] is w.continuous_action and w.continuous_action.isCheckable()
    assert w.menus.save_image.__self__ is w.menus and not hasattr(w, "save_image")  # File handlers live in Menus
    wait_frame(qtbot, w)
    texts["Render &Continuously"].setChecked(True)
    assert w.continuous
    w.continuous_action.setChecked(False)
    assert not w.continuous
