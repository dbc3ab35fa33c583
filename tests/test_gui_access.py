"""The Access tool (issue 36): it opens from a benchmark panel's variant name, traces the variant in the
simulator's child process, shows the kernel's source with a heat column per line, draws one warp request of the
chosen line and steps through its requests (all kept, or one warp's iterations); the heat figure is the user's
choice; Stop ends a trace within a second. Checked against hand-counted answers where the picture says
something (a strided shared access's banks). pytest-qt, offscreen; no timing asserts."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from tests.test_gui import WAIT, make_window, preset, settings_dir  # noqa: F401


def traced(qtbot, pane, variant=None):
    """Until the pane shows a finished trace of ``variant`` (default: the one chosen). The variant is checked
    because an earlier trace's result can still be on its way: the worker is no longer busy a moment before
    its signal reaches the pane."""
    variant = variant or pane.variant_box.currentText()
    qtbot.waitUntil(lambda: pane.result is not None and pane.result.variant == variant and not pane.busy()
                    and "traced in the CUDA simulator" in pane.status.text(), timeout=WAIT)


@pytest.mark.slow
def test_the_view_opens_from_a_panel_and_steps_through_requests(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    inspector, panel = w.ensure_inspector(), w.panels["Reduction"]
    menu = inspector.variant_menu(panel.checks["interleaved-strided"], "reduction", "interleaved-strided", panel)
    action = next(a for a in menu.actions() if a.text() == "Memory access per warp")
    action.trigger()  # a variant's name in the panel: its context menu
    assert w.workspaces.current().name == "Access" and w.access is not None
    view = w.access
    pane = view.panes[0]
    assert (pane.target_box.currentText(), pane.variant_box.currentText()) == ("reduction", "interleaved-strided")
    traced(qtbot, pane)
    assert "traced in the CUDA simulator" in pane.status.text()
    # the source with its heat: the tree's shared line conflicts (index = 2*s*t), the first load does not
    view.figure_box.setCurrentText("conflicts / request")
    rows = pane.listings[pane.kernel.name]
    tree = next(r for r, line in enumerate(rows) if "shared[index] += shared[index + stride]" in line.text)
    store = next(r for r, line in enumerate(rows) if "shared[t] = thread_partial" in line.text)
    assert float(pane.table.item(tree, 0).text()) > 1.0 and float(pane.table.item(store, 0).text()) == 0.0
    assert pane.table.item(tree, 1).text() == str(rows[tree].number)
    view.figure_box.setCurrentText("active lanes")
    assert float(pane.table.item(store, 0).text()) == 32.0
    # the costliest line is chosen: its requests in the picture, 32 lanes, stepping on
    assert pane.line is not None and pane.requests
    pane.select_line(rows[tree].number, rows[tree].file)
    first = pane.requests[0]
    assert pane.picture.request is first and len(pane.picture.lane_rows()) == 32
    assert "wavefronts" in pane.request_text.text() and "request 1 of" in pane.position.text()
    pane.next_button.click()
    assert pane.index == 1 and pane.picture.request is pane.requests[1] and "request 2 of" in pane.position.text()
    pane.prev_button.click()
    assert pane.index == 0
    # one warp through the loop: its iterations in order, the first with 8-byte lanes at index 2*s*t (s = 1):
    # lanes 0..15 at words 0, 4, 8, ... : banks 0, 4, 8, ..., 28 twice in a half-warp: conflicts
    pane.warp_box.setCurrentIndex(pane.warp_box.findData(0))
    iterations = [r.iteration for r in pane.requests]
    assert iterations == sorted(iterations) and len(set(iterations)) > 1
    cells = pane.picture.targets()
    banks = [c[0] for c in cells[:16] if c is not None]
    assert banks[:4] == [0, 4, 8, 12] and any(c[2] for c in cells if c is not None)  # replays drawn red
    pane.play_button.setChecked(True)
    qtbot.waitUntil(lambda: pane.index > 0, timeout=WAIT)
    pane.play_button.setChecked(False)


@pytest.mark.slow
def test_the_inspector_and_a_lesson_open_it_too_and_stop_ends_a_trace(qtbot, make_window, cpu_backend):
    preset(**{"render/size_spheres": "16x16"})
    w = make_window(cpu_backend)
    w.ensure_inspector().panel.target_box.setCurrentText("reduction")
    w.inspector.panel.variant_box.setCurrentText("sequential")
    w.inspector.panel.access_button.click()
    assert w.workspaces.current().name == "Access"
    pane = w.access.panes[0]
    assert pane.variant_box.currentText() == "sequential"
    traced(qtbot, pane)
    lessons = w.ensure_lessons()
    lessons.table.setCurrentCell(1, 0)  # step 2, interleaved-strided: the explanation's link
    assert "access:interleaved-strided" in lessons.explanation.text()
    w.workspaces.select("Lessons")
    lessons.explanation.linkActivated.emit("access:interleaved-strided")
    assert w.workspaces.current().name == "Access" and pane.variant_box.currentText() == "interleaved-strided"
    traced(qtbot, pane)
    # Stop: a trace of many blocks ends within a second of it (the child process is ended)
    import time

    pane.n_box.setValue(1 << 20)
    from raytracer_app.gui.common.access_worker import TraceAsk

    pane.ask = lambda: TraceAsk("reduction", "interleaved-strided", 1 << 20, blocks=4096)
    pane.result = None
    assert pane.trace()
    qtbot.waitUntil(lambda: "tracing" in pane.status.text() and "block" in pane.status.text(), timeout=WAIT)
    t0 = time.perf_counter()
    pane.stop_button.click()
    # the worker is no longer busy a moment before its finished signal reaches the pane: wait for what it says
    qtbot.waitUntil(lambda: not pane.busy() and pane.status.text().endswith("stopped"), timeout=WAIT)
    assert pane.result is None
    assert time.perf_counter() - t0 < 5  # (the issue asks a second; a loaded CI machine gets slack)


def test_a_variant_the_simulator_cannot_trace_is_said(qtbot):
    from raytracer_app.gui.access.view import AccessView

    view = AccessView()
    qtbot.addWidget(view)
    try:
        said = []
        view.message.connect(said.append)
        assert not view.show_variant("reduction", "numpy")  # CPU code
        assert not view.show_variant("reduction", "best")  # warp shuffles: not in the simulator
        assert said[0].endswith("cannot be traced: it is CPU code, which makes no GPU memory requests")
        assert said[-1].endswith("the simulator cannot run it (the CUDA simulator has no warp shuffles)")
        assert not view.busy()
    finally:
        view.shutdown()
