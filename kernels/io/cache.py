"""Where the app keeps what it can recompute but should not (best's tuning, the inspector's compiles):
``$RAYTRACER_CACHE_DIR``, else ``$XDG_CACHE_HOME/raytracer-app``, else ``~/.cache/raytracer-app``."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "RAYTRACER_CACHE_DIR"


def cache_root() -> Path:
    base = os.environ.get(CACHE_ENV)
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "raytracer-app"
