"""Every script in scripts/registry.py runs at its tiny smoke size (pyqtgraph runs every example the same
way): it exits 0, or, needing a GPU where there is none, it is skipped with the reason."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import child_pythonpath

pytestmark = pytest.mark.slow  # each starts a new interpreter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from registry import SCRIPTS  # noqa: E402


def test_the_registry_lists_every_script():
    on_disk = {p.name for p in (ROOT / "scripts").glob("*.py")} - {"registry.py"}
    assert {s.file for s in SCRIPTS} == on_disk


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.file)
def test_script_runs_at_its_smoke_size(script, tmp_path):
    if script.needs_gpu:
        from kernels import backend

        if not backend.gpu_available():
            pytest.skip(f"{script.file} needs a real CUDA GPU; none here")
    import importlib.util

    missing = [m for m in script.needs if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{script.file} needs {', '.join(missing)} (an extra of pyproject.toml); not installed here")
    args = [a.format(tmp=tmp_path) for a in script.smoke]
    proc = run_script(script.file, args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() or (tmp_path / "screenshot.png").exists()  # it reported or produced something


def run_script(file: str, args, tmp_path):
    """The script in a child process, offscreen, with its config (and settings) under tmp_path; caches go
    where conftest.py put this session's."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": child_pythonpath(str(ROOT)),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "NUMBA_ENABLE_CUDASIM": "0"}
    env.pop("NUMBA_ENABLE_CUDASIM")  # each script chooses its backend itself
    return subprocess.run([sys.executable, str(ROOT / "scripts" / file), *args], capture_output=True,
                          text=True, timeout=240, env=env, cwd=tmp_path)


def test_screenshot_inspector_mode_grabs_the_dock_with_the_line_highlighted(tmp_path):
    """screenshot.py --inspector (the README's assets/inspector.png): the PNG is the dock, and it shows the
    selected line's highlight in the source, PTX and SASS columns and the occupancy marker."""
    from PyQt6.QtGui import QColor, QImage

    from kernels.inspector import toolchain
    from raytracer_app.gui.inspector.panel import HIGHLIGHT

    if toolchain.missing():
        pytest.skip(f"the compiler packages are not installed: {toolchain.EXTRA_HINT}")
    out = tmp_path / "inspector.png"
    proc = run_script("screenshot.py", ["--inspector", "--size", "1366x768", "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert re.search(r"reduction best on sm_90: \d+ registers per thread; occupancy at 256 threads", proc.stdout)
    dock = re.search(r"dock (\d+)x(\d+); line \d+ \(total = warp_sum\(total\)\) selected: "
                     r"highlighted lines source 1, PTX [1-9]\d*, SASS [1-9]\d*", proc.stdout)
    assert dock, proc.stdout
    image = QImage(str(out))
    assert (image.width(), image.height()) == (int(dock[1]), int(dock[2]))  # the dock alone, not the window

    def columns_with(colour: QColor) -> set[int]:
        """Which thirds of the image (0 source, 1 PTX, 2 SASS) hold pixels of this colour."""
        rgb = colour.rgb()
        return {3 * x // image.width() for y in range(0, image.height(), 2) for x in range(0, image.width(), 2)
                if image.pixel(x, y) == rgb}

    assert columns_with(HIGHLIGHT) == {0, 1, 2}  # the line and its PTX and SASS are highlighted
    assert columns_with(QColor("#d62728"))  # the occupancy marker is drawn


def test_window_and_bare_loop_paint_the_same_size(tmp_path):
    """gui_fps.py hides the docks and sizes the window so that the render view is the frame's 1024x1024,
    as bare_loop.py's view is (issue 20: the window was measured painting at 35% scale); both say so."""
    shown = re.compile(r"view (\d+)x(\d+) px, image drawn at (\d+)% scale")
    window = run_script("gui_fps.py", ["--backend", "cpu", "--seconds", "0.3"], tmp_path)
    bare = run_script("bare_loop.py", ["--backend", "cpu", "--seconds", "0.3"], tmp_path)
    assert window.returncode == 0 and bare.returncode == 0, window.stderr[-2000:] + bare.stderr[-2000:]
    sizes = [shown.search(p.stdout) for p in (window, bare)]
    assert all(sizes), window.stdout + bare.stdout
    assert [m.groups() for m in sizes] == [("1024", "1024", "100")] * 2


def test_screenshots_leave_the_users_caches_alone(tmp_path, monkeypatch):
    """The pictures' benchmark run is not the user's: screenshot.py saves no run, autosave or compile where
    the app keeps the user's (it wrote its runs into the user's saved results before)."""
    users = tmp_path / "users-cache"
    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(users))
    out = tmp_path / "screenshot.png"
    proc = run_script("screenshot.py", ["--size", "1366x768", "--spheres", "4", "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert out.exists()
    assert not users.exists() or not any(users.rglob("*")), sorted(map(str, users.rglob("*")))
