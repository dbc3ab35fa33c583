"""Is there a display Qt can use? Decided before QApplication exists, because without one Qt prints
several lines and aborts the process (a core dump) instead of raising something the app could catch.

No Qt is imported here: the X11 plugin and libxcb are loaded with ctypes, which fails cleanly.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import sys
from pathlib import Path

# platforms that need no window system
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "linuxfb", "eglfs", "minimalegl", "vkkhrdisplay")
HELP = ("use `raytracer-app render` or `raytracer-app bench` instead, which need no display, or see "
        "'System libraries' in the README for what the window needs")


def display_problem(environ=None) -> str | None:
    """Why the GUI cannot open here, in one line; None when it can (or when it cannot be told)."""
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return None
    platform = env.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    if platform in HEADLESS_PLATFORMS:
        return None
    if platform.startswith("wayland"):
        return None if env.get("WAYLAND_DISPLAY") else f"no usable display: QT_QPA_PLATFORM is {platform} but WAYLAND_DISPLAY is not set; {HELP}"
    if not platform and env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY"):
        return None  # Qt picks its Wayland plugin
    if not env.get("DISPLAY"):
        return f"no usable display: DISPLAY and WAYLAND_DISPLAY are not set (and QT_QPA_PLATFORM is not offscreen); {HELP}"
    return _xcb_problem(env["DISPLAY"])


def _xcb_problem(display: str) -> str | None:
    plugin = _qt_plugin("libqxcb.so")
    if plugin is not None:
        try:
            ctypes.CDLL(str(plugin))
            error = ""
        except OSError as exc:  # a system library the X11 plugin links against is missing
            error = str(exc)
        try:
            ctypes.CDLL(RUNTIME_LIBRARY)  # the plugin opens it itself when it starts (Qt 6.5 and later)
            runtime = []
        except OSError:
            runtime = [RUNTIME_LIBRARY]
        if error or runtime:
            said = missing_libraries(plugin, error, runtime)
            return f"no usable display: Qt's X11 plugin cannot load: {said}; {HELP}"
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return None  # the plugin check above already spoke, or this Qt does not use libxcb
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    conn = xcb.xcb_connect(display.encode(), None)
    try:
        if not conn or xcb.xcb_connection_has_error(conn):
            return f"no usable display: cannot connect to the X display {display!r}; {HELP}"
    finally:
        if conn:
            xcb.xcb_disconnect(conn)
    return None


def missing_libraries(plugin, error: str, also=()) -> str:
    """What is missing for ``plugin`` to load, with the Debian/Ubuntu packages that usually hold it: every
    library ``ldd`` finds missing, else the one the loader's ``error`` names; and ``also``."""
    import shutil
    import subprocess

    names = []
    if error and shutil.which("ldd"):
        try:
            out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=10).stdout
            names = [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]
        except (OSError, subprocess.SubprocessError):
            names = []
    if not names and error:
        name = error.partition(": ")[0].strip()
        if not re.fullmatch(LIBRARY, name):
            return error.strip()
        names = [name]
    names = list(dict.fromkeys([*names, *also]))
    packages = " ".join(debian_package(n) for n in names)
    return f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} missing (Debian/Ubuntu: apt-get install {packages})"


RUNTIME_LIBRARY = "libxcb-cursor.so.0"
LIBRARY = r"(lib[\w+-]+?)\.so\.([\d.]+)"


def debian_package(library: str) -> str:
    """libxcb-cursor.so.0 -> libxcb-cursor0, libxkbcommon-x11.so.0 -> libxkbcommon-x11-0 (Debian's naming)."""
    m = re.fullmatch(LIBRARY, library)
    if m is None:
        return library
    base, version = m.group(1).lower(), m.group(2).split(".")[0]
    return f"{base}{'-' if base[-1].isdigit() else ''}{version}"


def _qt_plugin(name: str) -> Path | None:
    spec = importlib.util.find_spec("PyQt6")
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = Path(root) / "Qt6" / "plugins" / "platforms" / name
        if path.exists():
            return path
    return None
