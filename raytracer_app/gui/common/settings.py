"""The app's settings, read and written in one place: where QSettings lives (make_settings), its keys
(Keys), the one typed reader that never raises (read, read_bytes), and which key holds which value of the
render model is in render/model_settings.py, per-backend groups in shell/backend_settings.py. No widgets here."""

from __future__ import annotations

import os

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
    LAYOUT = "window/{}/{}"  # .format(screen size 'WxH', 'version' | 'geometry' | 'state' | 'workspace')
    SIZE = "render/size_{}"  # .format(tab)
    PARAM = "render/{}/{}"  # .format(kind, control): a generated control's value
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
