"""A corrupted settings file never stops the app: every value of the wrong type or out of range is
ignored (its default used). Settings files are written in tmp_path, then the real MainWindow starts."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
from PyQt6.QtCore import QByteArray, QSettings

from raytracer_app.gui.common.settings import APPLICATION, ORGANIZATION, Keys, make_settings, read, read_bytes

WAIT = 60_000


@pytest.fixture(autouse=True)
def settings_dir(tmp_path):
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    yield tmp_path / "settings"


@pytest.fixture
def start_window(qtbot):
    from raytracer_app.gui.shell.main_window import MainWindow

    windows = []

    def start(backend):
        w = MainWindow(backend, settings=make_settings())
        windows.append(w)
        w.show()
        return w

    yield start
    for w in windows:
        w.close()
        qtbot.waitUntil(w.render_thread.isFinished, timeout=WAIT)


def write_values(values: dict) -> None:
    s = make_settings()
    for key, value in values.items():
        s.setValue(key, value)
    s.sync()


# Each entry: settings that used to stop the app (or could), and what the window must show instead.
CORRUPT = {
    "geometry as text": {Keys.GEOMETRY: "not a geometry", Keys.STATE: "not a state"},
    "geometry as a list": {Keys.GEOMETRY: ["a", "b"], Keys.STATE: ["1", "2", "3"]},
    "geometry as a number": {Keys.GEOMETRY: 12, Keys.STATE: 3.5},
    "geometry as garbage bytes": {Keys.GEOMETRY: QByteArray(b"\x00\x01junk"), Keys.STATE: QByteArray(b"\xff" * 40)},
    "negative seed": {Keys.SEED: -5},
    "huge seed": {Keys.SEED: 10**26},
    "seed as text": {Keys.SEED: "seven"},
    "huge count": {Keys.COUNT: 10**26},
    "negative count": {Keys.COUNT: -3},
    "count as a list": {Keys.COUNT: ["1", "2"]},
    "huge block": {Keys.BLOCK_X: 10**30, Keys.BLOCK_Y: -7},
    "bad sizes": {Keys.SIZE.format("spheres"): "0x0", Keys.SIZE.format("julia"): ["64", "64"]},
    "bad julia": {Keys.C_RE: "nan", Keys.C_IM: "1e999", Keys.ITERATIONS: 10**26, Keys.COLORMAP: 5},
    "bad choices": {Keys.TAB: ["x"], Keys.MEMORY: "registers", Keys.PATTERN: 3, Keys.LAUNCH: "", Keys.CONTINUOUS: "maybe"},
    "bad backend": {Keys.BACKEND: ["cuda"], Keys.DEVICE: 10**26},
    "bad panels": {"bench/reduction/n": 10**26, "bench/reduction/repeats": -3, "bench/histogram/block": "many",
                   "bench/reduction/grid_sm": "inf", "bench/hashtable/peak": ["yes"], "bench/reduction/variants": 7,
                   "bench/histogram/metric": 4.5},
}


@pytest.mark.parametrize("name", list(CORRUPT))
def test_window_starts_whatever_the_settings_hold(qtbot, start_window, cpu_backend, name):
    write_values(CORRUPT[name])
    w = start_window(cpu_backend)
    m = w.model
    assert 0 <= m.seed <= 2**31 - 1 and w.controls.seed.value() == m.seed
    assert 1 <= m.scene.count <= m.capacity
    assert m.tab in ("spheres", "julia") and m.memory in ("global", "constant", "shared", "binned")
    bx, by = m.block
    assert 1 <= bx and 1 <= by and bx * by <= m.limits.max_threads_per_block
    for panel in w.panels.values():
        assert panel.n.minimum() <= panel.n.value() <= panel.n.maximum()
        assert panel.repeats.value() >= 1
    qtbot.waitUntil(lambda: w.last.get(m.tab) is not None, timeout=WAIT)  # and it renders
    w.close()
    qtbot.waitUntil(lambda: w.render_thread.isFinished(), timeout=WAIT)
    # closing saved good values over the bad ones: the next start reads them back
    from raytracer_app.gui.shell import backend_settings

    s = make_settings()
    with backend_settings.reading(s, cpu_backend.kind) as kept:  # each backend kind keeps its own values
        assert read(kept, Keys.SEED, -1, int, 0, 2**31 - 1) == m.seed
    from raytracer_app.gui.shell.layout import screen_key

    assert read_bytes(s, Keys.LAYOUT.format(screen_key(w), "geometry")) is not None  # kept for this screen size
    assert m.memory in ("global", "constant", "shared", "binned")


@pytest.mark.parametrize("seed, expected", [(-5, 0), (10**26, 0), ("12", 12), (12, 12), (True, 0), ("1.5", 0)])
def test_seed_values_out_of_range_or_of_the_wrong_type_use_the_default(seed, expected):
    write_values({Keys.SEED: seed})
    assert read(make_settings(), Keys.SEED, 0, int, 0, 2**31 - 1) == expected


@pytest.mark.parametrize("text, expected", [("true", True), ("false", False), ("maybe", False), ("1", True)])
def test_bool_values(text, expected):
    write_values({Keys.CONTINUOUS: text})
    assert read(make_settings(), Keys.CONTINUOUS, False, bool) is expected


def test_raw_corrupted_ini_file_starts_the_window(qtbot, start_window, cpu_backend, settings_dir):
    """A file written by hand (or damaged): invalid @ByteArray/@Variant payloads, broken lines, binary junk."""
    path = settings_dir / ORGANIZATION / f"{APPLICATION}.ini"
    path.parent.mkdir(parents=True)
    path.write_bytes(
        b"[window]\ngeometry=@ByteArray(\\x1\\x2\xff)\nstate=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\x18)\n"
        b"[spheres]\nseed=-5\ncount=1e400\n[render\nblock_x=\x00\x01\n\xff\xfe garbage ===\n"
        b"[julia]\nc_re=@Point(1 2)\niterations=@Size(3 4)\n"
    )
    w = start_window(cpu_backend)
    assert w.model.seed == 0 and w.model.scene.count == 20
    assert w.isVisible()


def test_save_model_and_load_model_round_trip(qapp, cpu_backend, tmp_path):
    """What save_model writes, load_model reads back into a fresh model (the one mapping of keys to values)."""
    from PyQt6.QtCore import QSettings

    from raytracer_app.gui.render.models import RenderModel
    from raytracer_app.gui.render.model_settings import load_model, save_model

    m = RenderModel(cpu_backend)
    m.set_tab("julia")
    m.set_size((96, 80), "spheres")
    m.set_block(bx=32, by=8)
    m.set_memory("shared")
    m.set_pattern("staggered")
    m.new_random_scene(seed=7)
    m.set_sphere_count(33)
    m.set_julia(c=complex(0.285, 0.01), iterations=321, colormap="smooth")
    m.set_launch("book")
    m.set_precision_mode("float64")
    s = QSettings(str(tmp_path / "round.ini"), QSettings.Format.IniFormat)
    save_model(s, m)
    back = RenderModel(cpu_backend)
    load_model(s, back)
    assert (back.tab, back.sizes, back.block, back.seed, back.memory, back.pattern) == \
           ("julia", m.sizes, (32, 8), 7, "shared", "staggered")
    assert back.scene.count == 33 and back.scene_is_random and back.scene.to_dict() == m.scene.to_dict()
    assert (back.julia.c, back.julia.iterations, back.julia.colormap, back.julia.precision) == \
           (complex(0.285, 0.01), 321, "smooth", "float64")
    assert (back.launch, back.precision_mode) == ("book", "float64")


def test_load_model_clamps_a_saved_block_into_the_limits(qapp, cpu_backend, tmp_path):
    from PyQt6.QtCore import QSettings

    from raytracer_app.gui.render.models import RenderModel
    from raytracer_app.gui.render.model_settings import load_model

    s = QSettings(str(tmp_path / "block.ini"), QSettings.Format.IniFormat)
    s.setValue(Keys.BLOCK_X, 64)
    s.setValue(Keys.BLOCK_Y, 64)  # 4096 threads: BX is kept, BY = 1024 // 64
    m = RenderModel(cpu_backend)
    load_model(s, m)
    assert m.block == (64, m.limits.max_threads_per_block // 64)


def test_the_model_keeps_its_own_values_per_backend_kind(qapp, cpu_backend, cuda_backend, tmp_path):
    """With a ModelStore the model saves the old kind's values and loads the new kind's inside set_backend,
    so its listeners hear one 'backend' change with the final values (no window writes them back)."""
    from PyQt6.QtCore import QSettings

    from raytracer_app.gui.shell.backend_settings import ModelStore
    from raytracer_app.gui.render.models import RenderModel

    s = QSettings(str(tmp_path / "kinds.ini"), QSettings.Format.IniFormat)
    m = RenderModel(cpu_backend, ModelStore(s))
    seen = []
    m.changed.connect(lambda group: seen.append((group, m.backend.kind, m.block, m.seed)))
    m.restore()  # nothing saved yet: the defaults
    assert seen == [("settings", "cpu", (16, 16), 0)]
    m.set_block(bx=32, by=4)
    m.new_random_scene(seed=5)
    assert m.set_backend(cuda_backend.kind)
    assert seen[-1] == ("backend", cuda_backend.kind, (16, 16), 0)  # a kind seen for the first time: defaults
    m.set_block(bx=8, by=8)
    assert m.set_backend("cpu")
    assert seen[-1] == ("backend", "cpu", (32, 4), 5)  # the cpu backend's own values, heard once
    assert [group for group, *_ in seen] == ["settings", "block", "spheres", "backend", "block", "backend"]
    assert m.set_backend(cuda_backend.kind) and m.block == (8, 8)


def test_without_a_store_restore_changes_nothing_and_set_backend_only_clamps(qapp, cpu_backend, cuda_backend):
    from raytracer_app.gui.render.models import RenderModel

    m = RenderModel(cpu_backend)
    seen = []
    m.changed.connect(seen.append)
    m.set_block(bx=64, by=16)
    m.restore()
    assert m.block == (64, 16) and seen == ["block", "settings"]
    assert m.set_backend(cuda_backend.kind) and m.block == (64, 16) and seen[-1] == "backend"


# ------------------------------------------------------------------ a settings file that is not a file
def _settings_file(settings_dir):
    folder = settings_dir / ORGANIZATION
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{APPLICATION}.ini"


def _special(kind, path):
    import os
    import stat

    if kind == "fifo":
        os.mkfifo(path)
        return "FIFO"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what /dev/null is, made in tmp_path
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here ({exc.strerror}); needs root")
    return "character device"


@pytest.mark.parametrize("kind, where", [("fifo", "app"), ("device", "app"), ("fifo", "organization")])
def test_a_settings_file_that_is_not_a_file_never_hangs_and_is_kept(qtbot, start_window, cpu_backend,
                                                                    settings_dir, kind, where):
    import os
    import stat

    path = _settings_file(settings_dir)
    if where == "organization":  # QSettings also reads the organization's file
        path = settings_dir / f"{ORGANIZATION}.ini"
    what = _special(kind, path)
    before = os.lstat(path)
    w = start_window(cpu_backend)  # used to block forever in QSettings' constructor (FIFO)
    assert what in w.statusBar().currentMessage() and "default settings" in w.statusBar().currentMessage()
    assert w.model.seed == 0
    qtbot.waitUntil(lambda: w.last.get(w.model.tab) is not None, timeout=WAIT)
    w.close()  # saving on close must not put a regular file in place of the FIFO or device
    qtbot.waitUntil(lambda: w.render_thread.isFinished(), timeout=WAIT)
    w.settings.sync()
    after = os.lstat(path)
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino


def test_a_huge_settings_file_is_not_read(settings_dir):
    path = _settings_file(settings_dir)
    with open(path, "wb") as f:
        f.truncate(64 * 2**20)  # sparse: no disk used
    s = make_settings()
    from raytracer_app.gui.common.settings import PROBLEM

    assert "bytes; at most" in s.property(PROBLEM) and s.fileName() != str(path)


def test_finding_the_settings_files_creates_nothing(settings_dir):
    from raytracer_app.gui.common.settings import settings_files

    files = settings_files()
    assert files[0] == str(_settings_file(settings_dir)) and files[1] == str(settings_dir / f"{ORGANIZATION}.ini")
    assert sorted(p.name for p in settings_dir.iterdir()) == [ORGANIZATION]  # only the folder made above
