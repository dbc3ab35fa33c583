"""Is there a display Qt can use? Decided before QApplication exists, because without one Qt prints
several lines and aborts the process (a core dump) instead of raising something the app could catch.

No Qt is imported here: the X11 plugin and libxcb are loaded with ctypes, which fails cleanly.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
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
        except OSError as exc:  # a system library the X11 plugin links against is missing
            return f"no usable display: Qt's X11 plugin cannot load ({str(exc).split(':')[-1].strip()}); {HELP}"
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


def _qt_plugin(name: str) -> Path | None:
    spec = importlib.util.find_spec("PyQt6")
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = Path(root) / "Qt6" / "plugins" / "platforms" / name
        if path.exists():
            return path
    return None
