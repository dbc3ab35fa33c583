"""What the GUI's file actions share: Qt images as PNG bytes for the app's one output writer, and an
error as the one line the status bar shows."""

from __future__ import annotations

from PyQt6.QtCore import QBuffer, QIODevice

from kernels.bench import one_line
from kernels.errors import InputError
from kernels.files import WriteFailed


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
