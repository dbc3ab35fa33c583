"""Measure the desktop app's speed as a user sees it: time from launch to the first frame, and frames per
second with View > Render Continuously (render + copy back + display), 1024x1024 with 20 spheres, counted
once the worker renders with the kernel. For the frames per second the docks are hidden and the window
sized so that the render view is 1024x1024 px, the frame painted 1:1 as scripts/bare_loop.py paints it
(both print the view's size and the scale the image is drawn at), so the two figures are like for like. The first frame is the fast start's preview (numpy) unless
RAYTRACER_FAST_START=0; the time to the kernel's first frame is printed too.

    QT_QPA_PLATFORM=offscreen python scripts/gui_fps.py [--backend auto|cuda|cpu] [--memory M] [--seconds S]
        [--profile N]   (also print the GUI thread's N most expensive functions over the count)

The window opens through the app's own start (raytracer_app.gui.open_window), with a throw-away QSettings
folder, so your settings are neither read nor changed. Launch is this script's first line: the Python
interpreter's own start (about 0.03 s) is not counted.
"""

from __future__ import annotations

import time

T_LAUNCH = time.perf_counter()

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402


def main() -> int:
    from kernels.spheres.scene import MEMORIES  # imports no numba: the backend is chosen below

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--memory", default="constant", choices=MEMORIES)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print the GUI thread's N most expensive functions (own time) over the count")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gui-fps-") as folder:
        return measure(args, folder)


def wait_until(ready, deadline: float) -> None:
    """Run Qt's event loop until ``ready()`` (checked every 5 ms) or the deadline. Not a Python loop around
    processEvents: that holds the GIL the render worker compiles and renders with, and measured a cold first
    kernel frame 6-8 s after launch where the app alone took 3.6 s."""
    from PyQt6.QtCore import QEventLoop, QTimer

    if ready():
        return
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: (ready() or time.perf_counter() > deadline) and loop.quit())
    timer.start()
    loop.exec()
    timer.stop()


def measure(args, folder: str) -> int:
    from PyQt6.QtCore import QSettings

    from raytracer_app.gui import open_window
    from raytracer_app.gui.common.settings import Keys, make_settings

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, folder)
    settings = make_settings()  # what the window reads at start: the measured frame from its first frame on
    settings.setValue(Keys.SIZE.format("spheres"), "1024x1024")
    settings.setValue(Keys.COUNT, 20)
    settings.setValue(Keys.MEMORY, args.memory)
    settings.setValue(Keys.TAB, "spheres")
    settings.sync()
    opened = open_window(args.backend, None, T_LAUNCH)
    if isinstance(opened, int):
        return opened
    app, window = opened
    backend = window.model.backend
    deadline = time.perf_counter() + 120
    wait_until(lambda: window.first_frame_s is not None, deadline)
    # what this process had loaded when the first frame showed (the preview needs neither)
    loaded_at_first = ", ".join(f"{m} {'loaded' if m in window.first_frame_loaded else 'not loaded'}"
                                for m in ("numba", "numba.cuda"))

    def frame_shown():
        return window.last.get("spheres", (None, None))[0]

    first = frame_shown()
    if first is not None and first.preview:  # the kernel's own first frame follows the preview by itself
        wait_until(lambda: frame_shown() is not first, deadline)
    kernel_first_s = time.perf_counter() - T_LAUNCH
    first_kernel = frame_shown()
    # Qt's offscreen screen is 800x800: the window must outgrow it for a 1024x1024 view, and the window's
    # own check once shown (layout.check_fit) would fit it back onto that screen mid-count
    from PyQt6.QtCore import QRect

    from raytracer_app.gui.shell import layout

    layout.available_geometry = lambda _window: QRect(0, 0, 4096, 4096)
    window.setProperty("fitted_by_guess", False)  # else that check, due 1.5 s after show, fills the 4096 px
    view = fit_view(app, window, VIEW_SIZE)
    window.continuous_action.setChecked(True)
    # counted from the next frame on, so the rate is a steady one
    second = frame_shown()
    wait_until(lambda: frame_shown() is not second, deadline)
    # counted inside a Qt event loop, as the app runs (app.exec): a Python loop polling processEvents here
    # would hold the GIL the render worker needs between its GPU waits, and slow the window it measures
    from PyQt6.QtCore import QEventLoop, QTimer

    shown, shown_at = [], []

    def count(frame, request):  # connected after the window's own slot: the frame is shown by now
        if not frame.preview and request.kind == "spheres":
            shown.append(frame)
            shown_at.append(time.perf_counter() - T_LAUNCH)

    profile = _start_profile() if args.profile else None
    window.worker.frameReady.connect(count)
    loop = QEventLoop()
    QTimer.singleShot(round(args.seconds * 1000), loop.quit)
    loop.exec()
    counted = len(shown)
    window.continuous_action.setChecked(False)
    # a cold start on a GPU draws from the kernel's shipped image; numba compiles the same kernel at the first
    # pause in the frames (not while they come, which it would slow): when numba's kernel drew, if it did
    numba_s = next((t for f, t in zip(shown, shown_at) if not _from_image(f)), None)
    if backend.is_gpu and numba_s is None and any(_from_image(f) for f in shown):
        wait_until(lambda: window.worker.gpu_kernels_ready, deadline)  # compiled in the pause that follows the count
        window.request_render(force=True)
        wait_until(lambda: any(not _from_image(f) for f in shown), deadline)
        numba_s = next((t for f, t in zip(shown, shown_at) if not _from_image(f)), None)
    window.worker.frameReady.disconnect(count)
    frame = shown[counted - 1] if counted else frame_shown()
    if profile is not None:
        _print_profile(profile, args.profile, counted)
    if (window.view.currentWidget().width(), window.view.currentWidget().height()) != view:
        print(f"the view changed size while counting: {view} -> {window.view.currentWidget().width()}x"
              f"{window.view.currentWidget().height()}", file=sys.stderr)
    timed = window.timed.get("spheres")  # continuous frames on a GPU are timed a few times a second only
    kernel = timed.kernel.median_ms if timed is not None else float("nan")
    n_timed = sum(f.kernel is not None for f in shown[:counted])
    image_frames = sum(_from_image(f) for f in shown[:counted])
    print(f"backend {backend.label}, memory {frame.meta.get('memory') if frame else '-'}, "
          f"{frame.image.shape[1] if frame else 0}x{frame.image.shape[0] if frame else 0}: first frame "
          f"{window.first_frame_s:.2f} s after launch ({'preview' if first is not None and first.preview else 'kernel'}, "
          f"{loaded_at_first} by then), kernel's first frame {kernel_first_s:.2f} s"
          f"{_image_text(first_kernel, image_frames, numba_s)}; "
          f"{counted / args.seconds:.0f} frames per second shown "
          f"over {args.seconds:.0f} s ({n_timed} of them timed; last kernel {kernel:.3f} ms, "
          f"{timed.kernel.method if timed else ''}); "
          f"{view_text(window.view.currentWidget())}")
    window.close()  # stops the workers; wait for them as the app does on quit
    while not window.render_thread.isFinished() and time.perf_counter() < deadline + 10:
        app.processEvents()
    return 0


def _from_image(frame) -> bool:
    """Drawn from a kernel's shipped image (kernels/launch/images.py), not by numba's kernel."""
    return frame.kernel is not None and "shipped" in frame.kernel.method


def _image_text(first_kernel, image_frames: int, numba_s) -> str:
    if first_kernel is None or not _from_image(first_kernel):
        return ""
    numba = (f"numba's kernel drew at {numba_s:.2f} s, compiled at the first pause in the frames"
             if numba_s is not None else "numba's kernel not drawing yet")
    return f" (from the shipped image: {first_kernel.kernel.method}; {image_frames} image frames, {numba})"


def _start_profile():
    import cProfile

    profile = cProfile.Profile()  # this thread only: the GUI thread, where the window's own work is done
    profile.enable()
    return profile


def _print_profile(profile, top: int, frames: int) -> None:
    import pstats

    profile.disable()
    print(f"GUI thread over {frames} frames, by own time (the count's polling loop included):")
    pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(top)


VIEW_SIZE = (1024, 1024)  # the render view's size for the frames-per-second count: the frame's own


def fit_view(app, window, size) -> tuple[int, int]:
    """Hide every dock and size the window so that the spheres view is ``size`` px (the window's frame,
    menu bar, tab bar and status line around it); returns the size reached."""
    from PyQt6.QtWidgets import QDockWidget

    for dock in window.findChildren(QDockWidget):
        dock.hide()
    window.run_on.hide()  # *Run on* widens the status line past a 1024 px view; the count needs no cluster
    view = window.view.currentWidget()
    for _ in range(5):  # a resize can move the tab bar or the status line: settle in a few steps
        app.processEvents()
        dw, dh = size[0] - view.width(), size[1] - view.height()
        if not dw and not dh:
            break
        window.resize(window.width() + dw, window.height() + dh)
    app.processEvents()
    view.reset_view()
    app.processEvents()
    return view.width(), view.height()


def view_text(view) -> str:
    """'view 1024x1024 px, image drawn at 100% scale' (screen pixels per image pixel)."""
    x_size = view.vb.viewPixelSize()[0]
    return f"view {view.width()}x{view.height()} px, image drawn at {100.0 / x_size:.0f}% scale"


if __name__ == "__main__":
    raise SystemExit(main())
