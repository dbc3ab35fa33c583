"""The Inspector panel (pytest-qt, offscreen): a real compile in its worker, source / PTX / SASS linked by
line, the occupancy marker following the block size, and the source alone without the compiler."""

import re

import pytest

pytest.importorskip("pytestqt")

from kernels.inspector import toolchain

WAIT = 180_000  # ms: a compile in a child process on a slow, shared CI machine


@pytest.fixture
def panel(qtbot, tmp_path):
    from raytracer_app.gui.inspector.panel import InspectorPanel

    widget = InspectorPanel(cache=tmp_path / "cache")
    qtbot.addWidget(widget)
    yield widget
    assert widget.shutdown()


@pytest.mark.slow  # a real compile
@pytest.mark.skipif(bool(toolchain.missing()), reason=f"the compiler packages are not installed ({toolchain.EXTRA_HINT})")
def test_panel_links_python_line_to_ptx_and_sass_and_moves_the_marker(panel, qtbot):
    with qtbot.waitSignal(panel.reportShown, timeout=WAIT):
        panel.inspect("reduction", "best", "sm_90", (256,))
        assert panel.report is None  # inspect() returned before the compile finished
    report = panel.report
    kernel_file = report.sources[0].file
    source_lines = panel.source_view.toPlainText().splitlines()
    # a line calling a device function highlights its own instructions and those the call inlined (issue 37)
    line = next(int(t.split()[0]) for t in source_lines if t.strip().endswith("total = warp_sum(total)"))
    panel.select_source_line(kernel_file, line)
    sass = panel.sass_view.toPlainText().splitlines()
    marked = [sass[i] for i in panel.sass_view.highlighted()]
    assert marked and all((kernel_file, line) in report.sass[i].chain for i in panel.sass_view.highlighted())
    assert any(re.search(r"\bSHFL\.DOWN\b", text) for text in marked)
    # a line inside the device function highlights its own instructions, wherever they were inlined
    body = next(int(t.split()[0]) for t in source_lines if "cuda.shfl_down_sync(" in t)
    panel.select_source_line(kernel_file, body)
    marked = [sass[i] for i in panel.sass_view.highlighted()]
    assert marked and all(text.split()[0] == str(body) for text in marked)
    assert any(re.search(r"\bSHFL\.DOWN\b", text) for text in marked)
    ptx = panel.ptx_view.toPlainText().splitlines()
    assert panel.ptx_view.highlighted() and all(ptx[i].strip() for i in panel.ptx_view.highlighted())
    xs, ys = panel.marker.getData()
    assert (list(xs), round(ys[0])) == ([256], 100)  # 25 registers: 8 blocks of 8 warps, all 64
    panel.set_block((32,))
    xs, ys = panel.marker.getData()
    assert (list(xs), round(ys[0])) == ([32], 50)  # at most 32 blocks per SM: 32 warps of 64
    assert "limited by blocks" in panel.resources.text()
    curve_x, curve_y = panel.curve_line.getData()
    assert len(curve_x) == 32 and max(curve_y) <= 100


def test_panel_without_compiler_shows_source_and_the_extra(panel, qtbot, monkeypatch):
    import functools

    for name in ("ptxas_path", "nvdisasm_path", "nvvm_library"):  # not found, now or when first looked for
        monkeypatch.setattr(toolchain, name, functools.lru_cache(maxsize=None)(lambda: None))
    panel.inspect("histogram", "shared-atomics")
    qtbot.waitUntil(lambda: "pip install -e '.[inspect]'" in panel.status.text(), timeout=WAIT)
    assert re.search(r"def histo_shared_atomics\(buffer, size, histo\):", panel.source_view.toPlainText())
    assert panel.sass_view.toPlainText() == ""


def test_the_compiler_picker_offers_both_and_greys_out_an_uninstalled_mlir(qtbot, monkeypatch, tmp_path):
    """The picker starts at the process's compiler; numba-cuda-mlir, when not installed, is greyed out with
    the install command; a request carries the picked compiler to the worker."""
    from kernels.backend import compiler
    from raytracer_app.gui.inspector import panel as panel_module

    monkeypatch.setattr(compiler, "mlir_installed", lambda: False)
    monkeypatch.setenv(compiler.COMPILER_ENV, "numba-cuda-mlir")
    box = panel_module._compiler_picker()
    qtbot.addWidget(box)
    assert [box.itemText(i) for i in range(box.count())] == ["numba-cuda", "numba-cuda-mlir"]
    assert box.currentText() == "numba-cuda"
    item = box.model().item(1)
    assert not item.isEnabled() and "pip install -e '.[mlir]'" in item.toolTip()
    monkeypatch.setattr(compiler, "mlir_installed", lambda: True)
    box = panel_module._compiler_picker()
    qtbot.addWidget(box)
    assert box.currentText() == "numba-cuda-mlir" and box.model().item(1).isEnabled()
