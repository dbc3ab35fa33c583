"""A small PNG writer (zlib only): RGBA images with tEXt metadata, written through the app's one
output writer (atomic, never over a device, FIFO or directory)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from kernels.io.writer import check_output, write_output


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(rgba: np.ndarray, text: dict[str, str] | None = None) -> bytes:
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 4) uint8 image, got {rgba.shape} {rgba.dtype}")
    h, w = rgba.shape[:2]
    raw = np.empty((h, 1 + 4 * w), np.uint8)
    raw[:, 0] = 0  # filter type None on every row
    raw[:, 1:] = rgba.reshape(h, 4 * w)
    out = [b"\x89PNG\r\n\x1a\n", _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))]
    for key, value in (text or {}).items():
        out.append(_chunk(b"tEXt", key.encode("latin-1", "replace")[:79] + b"\0" + str(value).encode("latin-1", "replace")))
    out.append(_chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)))
    out.append(_chunk(b"IEND", b""))
    return b"".join(out)


PNG_SUFFIXES = (".png",)


def check_writable(path, option: str = "--out", inputs=()) -> Path:
    """Fail early, with a clear message naming ``option``, when a PNG cannot be written at ``path``."""
    return check_output(path, option, inputs, PNG_SUFFIXES)


def write_png(path, rgba: np.ndarray, text: dict[str, str] | None = None, option: str = "--out", inputs=()) -> Path:
    """Write the image atomically through the app's one output writer (kernels.io.writer)."""
    return write_output(path, png_bytes(np.ascontiguousarray(rgba), text), option, inputs, PNG_SUFFIXES)


def read_png_text(path) -> dict[str, str]:
    """The tEXt entries of a PNG (used by tests and handy for users)."""
    from kernels.io.reader import read_bytes

    data = read_bytes(path, "PNG", 1 << 30, "an image of at most 4096x4096")
    pos, text = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            text[key.decode("latin-1")] = value.decode("latin-1")
        pos += 12 + length
    return text


def frame_metadata(frame) -> dict[str, str]:
    """What a saved frame records about itself: what was rendered, where, and how long it took."""
    meta = {f"raytracer:{k}": str(v) for k, v in frame.meta.items()}
    meta.update({
        "Software": "raytracer-app",
        "raytracer:backend": frame.backend,
        "raytracer:device": frame.device,
        "raytracer:size": f"{frame.size[0]}x{frame.size[1]}",
        "raytracer:block": "" if frame.block is None else f"{frame.block[0]}x{frame.block[1]}",
        "raytracer:kernel_ms": ("not timed (rendered continuously between timed frames)" if frame.kernel is None else
                                f"{frame.kernel.median_ms:.4f} ({frame.kernel.method}, n={frame.kernel.repeats})"),
        "raytracer:frame_ms": f"{frame.frame_ms:.3f}",
    })
    return meta
