"""The variant editor (pytest-qt, offscreen, settings and caches in temporary folders): New from a built-in,
Save and the recent list, autosave under the cache folder, a syntax error shown at its line, and Run adding a
verified row to the benchmark panel beside the built-ins (in the simulator)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QSettings

WAIT = 120_000  # ms: the user-variant child process starts, imports numba and runs the simulator


@pytest.fixture(autouse=True)
def folders(tmp_path, monkeypatch):
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path / "cache"))
    yield tmp_path


@pytest.fixture
def editor(qtbot, cuda_backend):
    from raytracer_app.gui.render.models import RenderModel
    from raytracer_app.gui.editor.editor import VariantEditor

    e = VariantEditor(RenderModel(cuda_backend), {})
    qtbot.addWidget(e)
    yield e
    e.shutdown()


def test_new_from_a_built_in_highlights_numbers_lines_and_autosaves(editor, folders):
    editor.target_box.setCurrentText("reduction")
    editor.new_from("sequential")
    text = editor.editor.toPlainText()
    assert 'NAME = "my-sequential"' in text or "NAME = 'my-sequential'" in text
    assert "def sequential(a, b, block_partials):" in text
    assert editor.editor.gutter_width() > 0 and editor.editor.blockCount() == text.count("\n") + 1
    block = editor.editor.document().findBlockByNumber(0)
    assert block.layout().formats(), "the docstring line is highlighted"
    path = editor.autosave()
    assert path.startswith(str(folders / "cache" / "variants")) and open(path).read() == text


def test_save_open_and_the_recent_list(editor, folders):
    editor.new_from("best")
    target = folders / "mine.py"
    assert editor.save_as(str(target))
    assert target.read_text() == editor.editor.toPlainText()
    assert editor.recent_box.itemText(1) == str(target)
    editor._put_text("")
    assert editor.open(str(target)) and editor.editor.toPlainText() == target.read_text()


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_run_shows_a_syntax_error_at_its_line(qtbot, editor):
    editor.new_from("sequential")
    lines = editor.editor.toPlainText().splitlines()
    broken = next(i for i, t in enumerate(lines) if t.startswith("def run("))
    lines[broken] = lines[broken].replace("):", ":")
    editor.editor.setPlainText("\n".join(lines))
    assert editor.run()
    qtbot.waitUntil(lambda: not editor.running, timeout=WAIT)
    assert "SyntaxError" in editor.status.text() and editor.editor.error_line == broken + 1


@pytest.mark.slow
def test_run_adds_a_verified_row_to_the_benchmark_panel(qtbot, cuda_backend):
    from raytracer_app.gui.shell.main_window import MainWindow

    w = MainWindow(cuda_backend)
    w.show()
    try:
        panel = w.panels["Reduction"]
        panel.n.setValue(1000)
        panel.repeats.setValue(1)
        editor = w.variant_editor
        editor.target_box.setCurrentText("reduction")
        editor.new_from("sequential")
        assert editor.run()
        qtbot.waitUntil(lambda: not editor.running, timeout=WAIT)
        rows = [row for row, _ in panel.rows]
        assert [r.variant for r in rows] == ["my-sequential"], editor.status.text()
        assert rows[0].verified == "yes" and "user variant" in rows[0].note, rows[0].note
        assert panel.table.rowCount() == 1 and panel.table.item(0, 0).text() == "my-sequential"
        assert len(panel.chart.points) == 1
        # where the time went: the first Run made the problem (the dock was never shown to warm it)
        assert "Run to row" in editor.status.text() and {"load", "problem", "time", "verify"} <= set(editor.last_phases)
        assert editor.run()  # a re-run without edits: the problem and its reference are kept
        qtbot.waitUntil(lambda: not editor.running, timeout=WAIT)
        assert len(panel.rows) == 2 and panel.rows[1][0].verified == "yes", editor.status.text()
        assert "problem" not in editor.last_phases and "load" in editor.last_phases
    finally:
        w.close()
        qtbot.waitUntil(lambda: w.variant_editor.thread.isFinished(), timeout=WAIT)


@pytest.mark.slow  # waits for the watchdog
def test_a_kernel_that_never_ends_is_stopped_by_the_watchdog_setting(qtbot, editor):
    editor.new_from("sequential")
    editor.editor.setPlainText(editor.editor.toPlainText().replace("            i += stride\n", "            i += 0\n"))
    editor.watchdog.setValue(3)
    rows = []
    editor.rowReady.connect(lambda title, row: rows.append(row))
    assert editor.run()
    qtbot.waitUntil(lambda: not editor.running, timeout=WAIT)
    assert len(rows) == 1 and rows[0].verified == "error" and "stopped by the watchdog" in rows[0].note
    assert "stopped by the watchdog" in editor.status.text()
    from kernels.user_variants import loader

    qtbot.waitUntil(lambda: loader.is_warm(editor.model.backend), timeout=WAIT)  # a fresh child, warmed again
    from raytracer_app.gui.common.settings import make_settings

    assert float(make_settings().value("variants/watchdog_s")) == 3.0  # the setting is kept


@pytest.mark.slow
def test_inspect_vs_puts_the_file_beside_a_built_in_in_the_inspector(qtbot, cuda_backend):
    from kernels.inspector import toolchain
    from raytracer_app.gui.shell.main_window import MainWindow

    if toolchain.missing():
        pytest.skip(f"the compiler packages are not installed: {toolchain.EXTRA_HINT}")
    w = MainWindow(cuda_backend)
    w.show()
    try:
        editor = w.variant_editor
        editor.new_from("sequential")
        editor.compare_box.setCurrentText("best")
        assert editor.inspect()
        qtbot.waitUntil(lambda: not editor.running, timeout=WAIT)
        dock = w.inspector
        assert dock is not None and dock.compare_table.rowCount() > 5, editor.status.text()
        headers = [dock.compare_table.horizontalHeaderItem(c).text() for c in (1, 2)]
        assert headers == ["my-sequential", "best"] and "registers" in dock.compare_status.text()
    finally:
        w.close()
        qtbot.waitUntil(lambda: w.variant_editor.thread.isFinished(), timeout=WAIT)


# --- issue 35: where the user is, Stop, unsaved text, focus, indentation, the file's own name ----------------------


def test_the_default_template_runs_where_the_user_is(qtbot, editor, cpu_backend):
    from raytracer_app.gui.editor.editor import default_template
    from kernels.backend import Backend

    editor.target_box.setCurrentText("reduction")
    here = editor.model.backend
    assert default_template("reduction", Backend("cuda")) == "best"  # a GPU: the fastest
    without_gpu = default_template("reduction", Backend("sim"))
    assert without_gpu not in ("best", "warp-shuffle")  # warp shuffles are not in the simulator
    assert editor.from_box.currentText() == (without_gpu if not here.is_gpu else "best")
    editor.show()  # an empty editor, shown: that template, ready to Run
    qtbot.waitUntil(lambda: bool(editor.editor.toPlainText()), timeout=WAIT)
    assert f"my-{editor.from_box.currentText()}" in editor.editor.toPlainText() and not editor.dirty


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_stop_ends_a_run_and_focus_stays_in_the_code(qtbot, editor):
    editor.new_from("sequential")
    editor.editor.setPlainText(editor.editor.toPlainText().replace("            i += stride\n", "            i += 0\n"))
    editor.watchdog.setValue(600)  # the watchdog would wait ten minutes: Stop does not
    editor.show()
    editor.activateWindow()
    editor.editor.setFocus()
    qtbot.waitUntil(editor.editor.hasFocus, timeout=WAIT)
    assert editor.run()
    assert editor.editor.hasFocus() and editor.stop_button.isEnabled() and not editor.run_button.isEnabled()
    qtbot.wait(500)
    editor.stop_button.click()
    qtbot.waitUntil(lambda: not editor.running, timeout=30_000)
    assert editor.status.text() == "stopped" and editor.run_button.isEnabled() and not editor.stop_button.isEnabled()


def test_return_and_tab_indent_as_python_does(qtbot, editor):
    from PyQt6.QtCore import Qt

    code = editor.editor
    code.setPlainText("")
    code.setFocus()
    qtbot.keyClicks(code, "def f(x):")
    qtbot.keyClick(code, Qt.Key.Key_Return)
    qtbot.keyClicks(code, "if x:")
    qtbot.keyClick(code, Qt.Key.Key_Return)
    qtbot.keyClicks(code, "return 1")
    qtbot.keyClick(code, Qt.Key.Key_Return)
    qtbot.keyClick(code, Qt.Key.Key_Backspace)  # one level back out
    qtbot.keyClicks(code, "return 2")
    assert code.toPlainText() == "def f(x):\n    if x:\n        return 1\n    return 2"
    code.setPlainText("")
    qtbot.keyClick(code, Qt.Key.Key_Tab)
    assert code.toPlainText() == "    "


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_an_error_names_the_file_you_saved(qtbot, editor, folders):
    editor.new_from("sequential")
    mine = folders / "mine.py"
    assert editor.save_as(str(mine))
    lines = editor.editor.toPlainText().splitlines()
    broken = next(i for i, t in enumerate(lines) if t.startswith("def run("))
    lines[broken] = lines[broken].replace("):", ":")
    editor.editor.setPlainText("\n".join(lines))  # typed, not saved
    assert editor.run()
    qtbot.waitUntil(lambda: not editor.running, timeout=WAIT)
    text = editor.status.text()
    assert f"{mine} (as in the editor, unsaved):{broken + 1}:" in text and "SyntaxError" in text
    assert str(folders / "cache") not in text and editor.editor.error_line == broken + 1


def test_restarting_asks_before_unsaved_text_is_lost(qtbot, cpu_backend, monkeypatch):
    from PyQt6.QtWidgets import QMessageBox

    from raytracer_app.gui.shell.main_window import MainWindow

    w = MainWindow(cpu_backend)
    w.show()
    asked = []
    try:
        editor = w.variant_editor
        editor.new_from("sequential")
        assert not editor.unsaved()
        editor.editor.insertPlainText("# my change\n")
        assert editor.unsaved() == "your new variant my-sequential"
        monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: (asked.append(a[2]), QMessageBox.StandardButton.Cancel)[1])
        w.restart_switching_simulator()  # Cancel: nothing happens
        assert asked and "not saved" in asked[0] and w.isVisible() and w.restart_argv is None
        monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
        w.restart_switching_simulator()
        qtbot.waitUntil(lambda: not w.isVisible(), timeout=WAIT)
        assert w.restart_argv and w.restart_argv[-2] == "--backend"  # (auto from a simulator session)
    finally:
        w.close()
        qtbot.waitUntil(lambda: w.variant_editor.thread.isFinished(), timeout=WAIT)


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_on_the_cpu_a_skipped_run_offers_the_simulator(qtbot, cpu_backend):
    from raytracer_app.gui.editor.editor import VariantEditor
    from raytracer_app.gui.render.models import RenderModel

    e = VariantEditor(RenderModel(cpu_backend), {})
    qtbot.addWidget(e)
    try:
        e.new_from("sequential")
        e.show()
        assert e.run()
        qtbot.waitUntil(lambda: not e.running, timeout=WAIT)
        assert e.status.text().startswith("my-sequential: skipped: needs a CUDA backend")
        assert e.sim_offer.isVisible() and "Restart with the CUDA Simulator" in e.sim_offer.text()
        with qtbot.waitSignal(e.restartRequested, timeout=1000):
            e.sim_offer.linkActivated.emit("restart")
    finally:
        e.shutdown()


def test_new_never_loses_an_autosaved_buffer_and_recent_lists_it(editor, folders, monkeypatch):
    """Issue 50 item 2: a note typed in a New from last-block, New from best, New from last-block again: the
    editor asks about the unsaved note, then about the autosaved file; either way no text is lost."""
    asked = []
    monkeypatch.setattr("PyQt6.QtWidgets.QMessageBox.question",
                        lambda *a, **k: (asked.append(a[2]), __import__("PyQt6.QtWidgets").QtWidgets.QMessageBox
                                         .StandardButton.Discard)[1])
    choices = []
    editor.target_box.setCurrentText("reduction")
    editor.new_from("last-block")
    editor.editor.appendPlainText("# my note")
    noted = editor.editor.toPlainText()
    kept = editor.autosave()
    assert open(kept).read() == noted
    assert any("autosaved: my-last-block.py" == editor.recent_box.itemText(i) for i in range(editor.recent_box.count()))
    assert editor.new_from("best") and asked, "unsaved typing is asked about before New replaces it"
    monkeypatch.setattr(editor, "choose", lambda title, text, options: (choices.append(text), "Open it")[1])
    assert editor.new_from("last-block")
    assert choices and "my-last-block.py" in choices[0]
    assert editor.editor.toPlainText() == noted, "Open it brings the note back"
    monkeypatch.setattr(editor, "choose", lambda title, text, options: "New copy")
    editor._put_text(editor.editor.toPlainText())  # nothing unsaved now
    assert editor.new_from("last-block") and "# my note" not in editor.editor.toPlainText()
    editor.autosave()
    backup = folders / "cache" / "variants" / "my-last-block.py.~1~"
    assert backup.read_text() == noted, "the autosaved note is kept as a numbered backup"


def test_save_asks_when_the_file_changed_on_disk(editor, folders, monkeypatch):
    target = folders / "mine.py"
    editor.new_from("best")
    assert editor.save_as(str(target))
    target.write_text("# edited elsewhere\n")
    monkeypatch.setattr(editor, "choose", lambda *a: "Cancel")
    assert not editor.save() and target.read_text() == "# edited elsewhere\n"
    monkeypatch.setattr(editor, "choose", lambda *a: "Replace")
    assert editor.save() and (folders / "mine.py.~1~").read_text() == "# edited elsewhere\n"
    assert editor.save() and not (folders / "mine.py.~2~").exists(), "saving its own text again keeps no backup"


def test_the_run_row_stays_put_when_the_message_grows(editor):
    editor.show()
    editor._say("short")
    y = editor.run_button.mapTo(editor, editor.run_button.rect().topLeft()).y()
    editor._say("a long message " * 40)
    assert editor.run_button.mapTo(editor, editor.run_button.rect().topLeft()).y() == y
    assert editor.status.toolTip().startswith("a long message")
