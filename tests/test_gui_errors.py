"""The GUI's file actions and errors, through the real slots (pytest-qt, offscreen, settings in tmp_path):
one line in the status bar, never a traceback dialog; the window stays usable; nothing but regular files
is written; the session log stays bounded; no display means one line and a non-zero exit."""

from __future__ import annotations

import csv
import os
import socket
import stat
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import child_pythonpath

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QSettings, QTimer
from PyQt6.QtWidgets import QApplication, QMessageBox

from kernels.harness.rows import CSV_COLUMNS, Row, SKIPPED

WAIT = 60_000
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def settings_dir(tmp_path):
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    from raytracer_app.gui.common.settings import make_settings

    s = make_settings()
    s.setValue("render/size_spheres", "48x32")
    s.sync()
    yield tmp_path / "settings"


@pytest.fixture
def window(qtbot, cpu_backend, monkeypatch):
    from raytracer_app.gui.shell.main_window import MainWindow

    # any dialog would block a test: fail loudly instead
    for name in ("warning", "critical", "information"):
        monkeypatch.setattr(QMessageBox, name, lambda *a, name=name, **k: pytest.fail(f"a QMessageBox.{name} dialog opened"))
    w = MainWindow(cpu_backend)
    w.show()
    qtbot.waitUntil(lambda: w.last.get("spheres") is not None, timeout=WAIT)
    yield w
    for panel in w.panels.values():
        panel.stop()
    w.close()
    qtbot.waitUntil(lambda: w.render_thread.isFinished() and all(p.thread.isFinished() for p in w.panels.values()),
                    timeout=WAIT)


def status(w) -> str:
    text = w.statusBar().currentMessage()
    assert "\n" not in text and "Traceback" not in text
    return text


def fifo_in(tmp_path, name):
    path = tmp_path / name
    os.mkfifo(path)
    return path


def socket_in(tmp_path, name):
    path = tmp_path / name
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()
    return path


def still_usable(qtbot, w):
    """The window renders again after the error."""
    before = w.last["spheres"][0]
    w.controls.count.slider.setValue(3 if w.model.scene.count != 3 else 4)
    qtbot.waitUntil(lambda: w.last["spheres"][0] is not before, timeout=WAIT)


# ------------------------------------------------------------------------------------ open scene

@pytest.mark.parametrize("name, raw, says", [
    ("latin1.json", '{"name": "caf\xe9", "spheres": []}'.encode("latin-1"), "not UTF-8"),
    ("utf16.json", '{"spheres": []}'.encode("utf-16"), "UTF-16"),
    ("deep.json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ("radius.json", b'{"spheres": [{"center": [0, 0, 0], "radius": 1e20, "color": [1, 0, 0]}]}', "radius 1e+20"),
])
def test_open_scene_malformed_is_one_status_line_and_the_window_stays_usable(qtbot, window, tmp_path, name, raw, says):
    path = tmp_path / name
    path.write_bytes(raw)
    scene = window.model.scene
    assert not window.controls.open_scene(str(path))
    assert says in status(window) and str(path) in status(window)
    assert window.model.scene is scene
    still_usable(qtbot, window)


def test_open_scene_refuses_fifo_socket_directory_and_a_huge_file(qtbot, window, tmp_path):
    from kernels.spheres.scene import MAX_SCENE_FILE_BYTES

    big = tmp_path / "big.json"
    with open(big, "w") as f:  # sparse: the size is what matters, not the bytes
        f.write('{"spheres": []}')
        f.truncate(MAX_SCENE_FILE_BYTES + 1)
    for path, says in ((fifo_in(tmp_path, "f.json"), "FIFO"), (socket_in(tmp_path, "s.json"), "socket"),
                       (tmp_path, "directory"), (big, "bytes; at most")):
        assert not window.controls.open_scene(str(path))  # a FIFO would hang here if it were opened
        assert says in status(window), status(window)
    still_usable(qtbot, window)


# ------------------------------------------------------------------------------------ outputs

def test_save_image_refuses_special_files_and_wrong_extensions(qtbot, window, tmp_path):
    fifo, sock = fifo_in(tmp_path, "f.png"), socket_in(tmp_path, "s.png")
    for path, says in ((fifo, "FIFO"), (sock, "socket"), (tmp_path, "directory"), (tmp_path / "x.jpg", ".png"),
                       (tmp_path / "no" / "x.png", "does not exist"), (f"{tmp_path}/d/", "ends in '/'")):
        assert not window.menus.save_image(str(path))
        assert says in status(window) and "Save Image" in status(window) and "--out" not in status(window)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISSOCK(os.lstat(sock).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png", "s.png", "settings"]


def test_save_image_follows_a_symlink_and_keeps_the_mode(qtbot, window, tmp_path):
    target = tmp_path / "real.png"
    target.write_bytes(b"old")
    os.chmod(target, 0o604)
    link = tmp_path / "link.png"
    link.symlink_to(target)
    assert window.menus.save_image(str(link))
    assert link.is_symlink() and target.read_bytes()[:8] == PNG_MAGIC
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o604


def test_screenshot_and_scene_save_use_the_same_writer(qtbot, window, tmp_path):
    assert not window.menus.save_screenshot(str(fifo_in(tmp_path, "shot.png")))
    assert "Save Window Screenshot" in status(window) and "FIFO" in status(window)
    assert not window.menus.save_screenshot(str(tmp_path / "shot.jpg"))
    assert ".png" in status(window)
    assert window.menus.save_screenshot(str(tmp_path / "shot2.png"))
    assert (tmp_path / "shot2.png").read_bytes()[:8] == PNG_MAGIC
    sock = socket_in(tmp_path, "scene.json")
    assert not window.controls.save_scene(str(sock))
    assert "Save Scene" in status(window) and "socket" in status(window)
    real = tmp_path / "real.json"
    (tmp_path / "via.json").symlink_to(real)
    assert window.controls.save_scene(str(tmp_path / "via.json"))
    assert window.controls.open_scene(str(real))
    np.testing.assert_array_equal(window.model.scene.spheres.shape, (window.model.scene.count, 7))


def test_export_timings_says_what_it_holds_and_refuses_special_files(qtbot, window, tmp_path):
    assert not window.menus.export_timings(str(socket_in(tmp_path, "t.csv")))
    assert "Export Timings CSV" in status(window) and "socket" in status(window)
    path = tmp_path / "timings.csv"
    assert window.menus.export_timings(str(path)), status(window)
    assert "rendered frame" in status(window)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert tuple(reader.fieldnames) == CSV_COLUMNS and rows
    # a frame row means what a `bench spheres` row means: op = access pattern, n = spheres
    expected = ("spheres-cpu-tiles", "uniform", str(window.model.scene.count))  # drawn by the tiled CPU twin
    assert (rows[0]["variant"], rows[0]["op"], rows[0]["n"]) == expected


def test_panel_exports_refuse_special_files_and_chart_success_means_a_file(qtbot, window, tmp_path):
    panel = window.panels["Reduction"]
    said = []
    panel.message.connect(said.append)
    assert not panel.export_csv(str(tmp_path / "empty.csv"))  # no results: says so, writes nothing
    assert "nothing to export" in said[-1] and not (tmp_path / "empty.csv").exists()
    panel.rows = [(Row("numpy", "sum", "int32", 8, "cpu", "test"), 0.0)]
    assert not panel.export_csv(str(tmp_path))
    assert "Export CSV" in said[-1] and "directory" in said[-1]
    assert not panel.export_chart(str(fifo_in(tmp_path, "c.png")))
    assert "Export chart PNG" in said[-1] and "FIFO" in said[-1]
    assert not panel.export_chart(str(tmp_path / "missing" / "c.png"))
    assert "does not exist" in said[-1] and "written" not in said[-1]
    assert panel.export_chart(str(tmp_path / "c2.png"))
    assert "written" in said[-1] and (tmp_path / "c2.png").read_bytes()[:8] == PNG_MAGIC


# ------------------------------------------------------------------------------------ errors in slots

@pytest.mark.qt_no_exception_capture
def test_an_exception_in_a_slot_is_one_status_line(qtbot, window, monkeypatch):
    from raytracer_app.gui import _excepthook

    monkeypatch.setattr(sys, "excepthook", _excepthook)

    def broken():
        raise RuntimeError("boom in a slot\nsecond line")

    QTimer.singleShot(0, broken)
    qtbot.waitUntil(lambda: "boom" in window.statusBar().currentMessage(), timeout=WAIT)
    assert status(window) == "error: RuntimeError: boom in a slot second line"
    still_usable(qtbot, window)


# ------------------------------------------------------------------------------------ memory

def test_timing_log_keeps_every_benchmark_row_and_a_bounded_window_of_frames(qtbot, window):
    from kernels.harness.render import frame_row
    from raytracer_app.gui.shell.timing_log import TimingLog

    frame = window.last["spheres"][0]
    log = TimingLog()
    bench_row = Row(variant="numpy", op="sum", dtype="int32", n=10, backend="cpu", device="cpu", block="",
                          grid="", repeats=1, timing=None, verified=SKIPPED)
    log.add(bench_row)
    for _ in range(TimingLog.FRAME_WINDOW + 50):
        log.add_frame(frame_row(frame))
    log.add(bench_row)
    assert len(log.frames) == TimingLog.FRAME_WINDOW and log.frames_seen == TimingLog.FRAME_WINDOW + 50
    assert [r.variant for r in log.rows].count("numpy") == 2
    assert len(log.rows) == TimingLog.FRAME_WINDOW + 2
    assert f"last {TimingLog.FRAME_WINDOW} of {TimingLog.FRAME_WINDOW + 50}" in log.describe()


def test_continuous_rendering_feeds_the_bounded_frame_window(qtbot, window):
    seen = window.log.frames_seen
    window.continuous_action.setChecked(True)
    qtbot.waitUntil(lambda: window.log.frames_seen >= seen + 5, timeout=WAIT)
    window.continuous_action.setChecked(False)
    assert len(window.log.frames) <= window.log.FRAME_WINDOW and not window.log.kept


@pytest.mark.slow  # a new interpreter renders for seconds
def test_gui_memory_script_runs_offscreen(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": child_pythonpath()}
    proc = subprocess.run([sys.executable, "scripts/gui_memory.py", "--backend", "cpu", "--seconds", "1.5",
                           "--every", "0.5"], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("t=")]
    assert len(lines) >= 3 and all("rss=" in ln for ln in lines)
    summary = proc.stdout.strip().splitlines()[-1]
    first, top, last = (float(summary.split(word)[1].split(",")[0].split(";")[0]) for word in ("first ", "max ", "last "))
    assert 0 < first <= top and last <= top


# ------------------------------------------------------------------------------------ no display

def clean_env(**extra):
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "NUMBA_ENABLE_CUDASIM")}
    return {**keep, "PYTHONPATH": child_pythonpath(), **extra}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display check is for Linux")
@pytest.mark.parametrize("extra, says", [
    ({}, "DISPLAY and WAYLAND_DISPLAY are not set"),
    ({"QT_QPA_PLATFORM": "xcb"}, "DISPLAY and WAYLAND_DISPLAY are not set"),
    ({"DISPLAY": ":97"}, "cannot connect to the X display"),
])
def test_no_display_is_one_line_and_a_non_zero_exit(tmp_path, extra, says):
    if extra.get("DISPLAY") and os.path.exists(f"/tmp/.X11-unix/X{extra['DISPLAY'][1:]}"):
        pytest.skip("an X server is running on that display here")
    proc = subprocess.run([sys.executable, "-m", "raytracer_app", "gui", "--backend", "cpu"], capture_output=True,
                          text=True, timeout=120, env=clean_env(HOME=str(tmp_path), **extra))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    if extra.get("DISPLAY") and "Qt's X11 plugin cannot load" in lines[0]:
        says = "Qt's X11 plugin cannot load"  # a machine without the X libraries stops one check earlier
    assert says in lines[0] and "raytracer-app render" in lines[0] and "README" in lines[0]
    assert proc.returncode != 134 and "Traceback" not in proc.stderr


def test_a_platform_plugin_that_cannot_load_is_reported(tmp_path, monkeypatch):
    from raytracer_app.gui.shell import display

    broken = tmp_path / "libqxcb.so"
    broken.write_text("not a shared library")
    monkeypatch.setattr(display, "_qt_plugin", lambda name: broken)
    problem = display.display_problem({"DISPLAY": ":0"})
    assert problem.startswith("no usable display: Qt's X11 plugin cannot load") and "\n" not in problem


def test_a_missing_system_library_is_named_with_its_package(tmp_path, monkeypatch):
    from raytracer_app.gui.shell import display

    assert display.debian_package("libxcb-cursor.so.0") == "libxcb-cursor0"
    assert display.debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"
    monkeypatch.setattr("shutil.which", lambda name: None)  # no ldd: the loader's message names one
    said = display.missing_libraries(tmp_path / "libqxcb.so", "libxcb-cursor.so.0: cannot open shared object file: "
                                                               "No such file or directory")
    assert said == "libxcb-cursor.so.0 is missing (Debian/Ubuntu: apt-get install libxcb-cursor0)"
    assert display.missing_libraries(tmp_path / "x.so", "something else went wrong") == "something else went wrong"


def test_offscreen_and_wayland_need_no_x_display():
    from raytracer_app.gui.shell.display import display_problem

    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert display_problem({"QT_QPA_PLATFORM": "minimal"}) is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}) is None
    assert "WAYLAND_DISPLAY" in display_problem({"QT_QPA_PLATFORM": "wayland"})


def test_dialog_is_used_when_no_window_is_open(monkeypatch):
    from raytracer_app import gui

    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: shown.append(text))
    monkeypatch.setattr(QApplication, "topLevelWidgets", staticmethod(lambda: []))
    gui._excepthook(ValueError, ValueError("bad value"), None)
    assert shown and shown[0].splitlines()[0] == "ValueError: bad value"
