"""What the GUI's file actions share: slow work off the GUI thread, Qt images as PNG bytes for the app's
one output writer, an error as the one line the status bar shows, and the Export… actions' ask-then-write."""

from __future__ import annotations

import threading

from PyQt6.QtCore import QBuffer, QCoreApplication, QEventLoop, QIODevice

from kernels.errors import one_line
from kernels.errors import InputError
from kernels.io.writer import WriteFailed


def message_of(exc: BaseException) -> str:
    """The user's one line: our own errors as they read, anything else with its type."""
    return str(exc) if isinstance(exc, (InputError, WriteFailed)) else one_line(exc)


def png_of(image) -> bytes:
    """A QImage or QPixmap encoded as PNG (raises WriteFailed when Qt cannot encode it)."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise WriteFailed("Qt could not encode the image as PNG")
    return bytes(buffer.data())


def in_background(work):
    """Run ``work()`` in a thread while the window keeps handling events (encoding a 4096x4096 PNG takes
    most of a second); returns its result or raises its exception, so callers stay simple."""
    outcome = {}

    def target():
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="file-io", daemon=True)
    thread.start()
    while thread.is_alive():
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        thread.join(0.01)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


class Saved(str):
    """The path an Export… action wrote; ``kept`` is '' or ' (the old file is kept as NAME.~N~)', for its
    message (the one writer keeps a replaced file's old text)."""

    kept = ""


def kept_note(written) -> str:
    """What the writer's result says about a replaced file ('' when nothing was replaced)."""
    return written.kept() if callable(getattr(written, "kept", None)) else ""


def export_to(parent, write, on_error, title: str, filters: str, name: str, path=None):
    """An Export… action: ``path`` (else one asked for in a dialog that starts in the last folder), then
    ``write(path)`` off the GUI thread. A refused path or a failed write goes to ``on_error(exc)``. Returns
    the path written (a :class:`Saved`), or None when cancelled or failed."""
    if path is None:
        from raytracer_app.gui.common.dialogs import ask_path

        path = ask_path(parent, title, filters, name)
        if not path:
            return None
    try:
        written = in_background(lambda: write(path))
    except Exception as exc:  # noqa: BLE001 - InputError for a refused path, WriteFailed for a failed write
        on_error(exc)
        return None
    saved = Saved(path)
    saved.kept = kept_note(written)
    return saved
