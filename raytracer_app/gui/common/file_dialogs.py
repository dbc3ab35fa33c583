"""File dialogs open in the folder used last (saved in the settings under Keys.LAST_DIR)."""

from __future__ import annotations

from pathlib import Path


def start_in(settings, name: str = "") -> str:
    """Where a dialog opens: ``name`` inside the last folder used (just ``name`` before any)."""
    from raytracer_app.gui.common.settings import Keys

    folder = settings.value(Keys.LAST_DIR, "")
    if isinstance(folder, str) and folder and Path(folder).is_dir():
        return str(Path(folder) / name) if name else folder
    return name


def remember(settings, path) -> None:
    """Remember the folder of a path the user chose (nothing when the dialog was cancelled)."""
    from raytracer_app.gui.common.settings import Keys

    if path:
        settings.setValue(Keys.LAST_DIR, str(Path(path).resolve().parent))
