"""The app's settings, read and written in one place: where QSettings lives (make_settings), its keys
(Keys), the one typed reader that never raises (read, read_bytes), and which key holds which value of the
render model (save_model, load_model). Per-backend groups are in backend_settings.py. No widgets here."""

from __future__ import annotations

import os
from dataclasses import replace

from PyQt6.QtCore import QSettings

from kernels.errors import InputError

ORGANIZATION = "raytracer-lab"
APPLICATION = "raytracer-app"


class Keys:
    """QSettings keys, in one place."""

    BACKEND = "backend/name"
    DEVICE = "backend/device"
    TAB = "view/tab"
    CONTINUOUS = "view/continuous"
    GEOMETRY = "window/geometry"  # before layouts were kept per screen size: no longer read
    STATE = "window/state"
    LAYOUT = "window/{}/{}"  # .format(screen size 'WxH', 'geometry' | 'state' | 'separate' | 'workspace' |
    # 'dragged')
    SIZE = "render/size_{}"  # .format(tab)
    BLOCK_X = "render/block_x"
    BLOCK_Y = "render/block_y"
    COUNT = "spheres/count"
    SEED = "spheres/seed"
    MEMORY = "spheres/memory"
    PATTERN = "spheres/pattern"
    C_RE = "julia/c_re"
    C_IM = "julia/c_im"
    ITERATIONS = "julia/iterations"
    COLORMAP = "julia/colormap"
    LAUNCH = "julia/launch"
    PRECISION = "julia/precision"  # one of models.PRECISION_MODES
    COMPARE_REPEATS = "compare/repeats"
    SCENE_FILE = "spheres/scene_file"  # the scene file in use ('' for a random scene)
    LAST_DIR = "files/last_dir"  # where file dialogs open


MAX_SETTINGS_BYTES = 16 * 2**20  # the app writes a few KiB
PROBLEM = "raytracer_problem"  # the QSettings property saying why the settings file is not used


def make_settings() -> QSettings:
    """The one place the app's QSettings is created. It honours QSettings.defaultFormat() (the plain
    (organization, application) constructor always uses NativeFormat), so tests can point it at a temp
    dir with setPath(IniFormat, UserScope, dir) + setDefaultFormat(IniFormat).

    The files QSettings would read (the application's and the organization's, user and system scope)
    go through the one input reader's check first: Qt opens them in its constructor, so a FIFO there
    would hang the app forever and a device would be read without end, and on close it would put a
    regular file in place of a device. Then the settings live in a private temporary file for this
    session (defaults, not saved), and the property PROBLEM says why (the window's status bar shows it)."""
    problem = settings_problem()
    if not problem:
        return QSettings(QSettings.defaultFormat(), QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)
    settings = QSettings(_session_file(), QSettings.Format.IniFormat)
    settings.setProperty(PROBLEM, problem)
    return settings


def settings_files() -> list[str]:
    """The files QSettings reads for the app (most specific first), found without opening them: a
    QSettings for a made-up organization name tells the folders and the suffix."""
    import secrets

    probe = f"raytracer-probe-{secrets.token_hex(8)}"
    files = []
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        name = QSettings(QSettings.defaultFormat(), scope, probe, APPLICATION).fileName()
        folder, app_file = os.path.split(name)
        root = os.path.dirname(folder)
        if os.path.basename(folder) != probe or not root:
            continue
        suffix = os.path.splitext(app_file)[1]
        files += [os.path.join(root, ORGANIZATION, app_file), os.path.join(root, ORGANIZATION + suffix)]
    return files


def settings_problem() -> str:
    """Why the settings files cannot be used ('' when they can)."""
    from kernels.io.reader import check_optional_input

    for path in settings_files():
        try:
            check_optional_input(path, "the settings file", MAX_SETTINGS_BYTES, "the app writes a few KiB")
        except InputError as exc:
            return f"{exc}: starting with the default settings; they will not be saved this session"
    return ""


_SESSION_DIR: list[str] = []


def _session_file() -> str:
    """A settings file of this process only, in a private temporary folder removed at exit."""
    if not _SESSION_DIR:
        import atexit
        import shutil
        import tempfile

        _SESSION_DIR.append(tempfile.mkdtemp(prefix="raytracer-settings-"))
        atexit.register(shutil.rmtree, _SESSION_DIR[0], True)
    return os.path.join(_SESSION_DIR[0], "settings.ini")


def read(settings: QSettings, key: str, default, kind=None, lo=None, hi=None):
    """A typed settings value; the default when missing, of the wrong type, unreadable or outside
    lo..hi. Whatever the settings file holds, this never raises: a corrupted file cannot stop the app."""
    kind = kind or type(default)
    try:
        value = settings.value(key, default)
        if kind is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("1", "true", "yes", "0", "false", "no"):
                return value.lower() in ("1", "true", "yes")
            return default
        if isinstance(value, bool) or (kind in (int, float) and not isinstance(value, (str, int, float))):
            return default
        value = kind(value)
        if kind is float and value != value:  # NaN
            return default
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            return default
        return value
    except Exception:  # noqa: BLE001 - any unreadable value means "use the default"
        return default


def read_bytes(settings: QSettings, key: str):
    """A QByteArray setting (window geometry, dock state), or None when missing or of another type."""
    from PyQt6.QtCore import QByteArray

    try:
        value = settings.value(key)
    except Exception:  # noqa: BLE001
        return None
    if isinstance(value, (bytes, bytearray)):
        return QByteArray(bytes(value))
    return value if isinstance(value, QByteArray) else None


# ---------------------------------------------------------------------------------------------- the render model
def save_model(s: QSettings, model) -> None:
    """Write a RenderModel's values (what load_model reads back)."""
    s.setValue(Keys.TAB, model.tab)
    for tab, (w, h) in model.sizes.items():
        s.setValue(Keys.SIZE.format(tab), f"{w}x{h}")
    s.setValue(Keys.BLOCK_X, model.block[0])
    s.setValue(Keys.BLOCK_Y, model.block[1])
    s.setValue(Keys.COUNT, model.scene.count)
    s.setValue(Keys.SEED, model.seed)
    s.setValue(Keys.MEMORY, model.memory)
    s.setValue(Keys.PATTERN, model.pattern)
    s.setValue(Keys.C_RE, model.julia.c.real)
    s.setValue(Keys.C_IM, model.julia.c.imag)
    s.setValue(Keys.ITERATIONS, model.julia.iterations)
    s.setValue(Keys.COLORMAP, model.julia.colormap)
    s.setValue(Keys.LAUNCH, model.launch)
    s.setValue(Keys.PRECISION, model.precision_mode)
    s.setValue(Keys.SCENE_FILE, "" if model.scene_is_random else model.scene_path)


def load_model(s: QSettings, model) -> None:
    """Restore a RenderModel's saved values; anything unreadable keeps its default. Emits nothing: the
    model's own callers say what changed (see RenderModel.load)."""
    from kernels.harness.frames import parse_size
    from kernels.julia import COLORMAPS, LAUNCHES, JuliaParams
    from kernels.launch import clamp_block
    from kernels.spheres.scene import MEMORIES
    from kernels.spheres.layout import PATTERNS
    from raytracer_app.gui.models import PRECISION_MODES, TABS

    tab = read(s, Keys.TAB, model.tab)
    model.tab = tab if tab in TABS else model.tab
    for t in TABS:
        try:
            model.sizes[t] = parse_size(read(s, Keys.SIZE.format(t), "{}x{}".format(*model.sizes[t])))
        except InputError:
            pass
    model.block = clamp_block((read(s, Keys.BLOCK_X, 16, int), read(s, Keys.BLOCK_Y, 16, int)), model.limits)
    model.seed = read(s, Keys.SEED, 0, int, 0, 2**31 - 1)
    memory = read(s, Keys.MEMORY, "global")
    model.memory = memory if memory in MEMORIES else "global"
    count = read(s, Keys.COUNT, 20, int, 1, model.max_spheres)
    model.scene, model.scene_is_random, model.scene_path = model.random_scene(count), True, ""
    model.load_note = ""
    path = read(s, Keys.SCENE_FILE, "", str)
    if path:  # the scene file in use last time; if it is gone, say so and keep the random scene
        from kernels.spheres.scene import load_scene

        try:
            model.scene, model.scene_is_random, model.scene_path = load_scene(path, model.max_spheres), False, path
        except InputError as exc:
            model.load_note = f"the last scene could not be reloaded: {exc}; showing a random scene"
    memory, pattern = read(s, Keys.MEMORY, "global"), read(s, Keys.PATTERN, "uniform")
    model.memory = memory if memory in MEMORIES else "global"
    model.pattern = pattern if pattern in PATTERNS else "uniform"
    colormap, launch = read(s, Keys.COLORMAP, "classic"), read(s, Keys.LAUNCH, "2d")
    params = JuliaParams(c=complex(read(s, Keys.C_RE, -0.8, float), read(s, Keys.C_IM, 0.156, float)),
                         iterations=read(s, Keys.ITERATIONS, 200, int),
                         colormap=colormap if colormap in COLORMAPS else "classic")
    try:
        model.julia = params.checked()
    except (InputError, ValueError, TypeError, OverflowError):
        pass
    model.launch = launch if launch in LAUNCHES else "2d"
    mode = read(s, Keys.PRECISION, "auto")
    model.precision_mode = mode if mode in PRECISION_MODES else "auto"
    if mode in ("float32", "float64"):
        model.julia = replace(model.julia, precision=mode)
