"""A small PNG writer (zlib only): RGBA images with tEXt metadata, written atomically so a failed
save never leaves a partial file."""

from __future__ import annotations

import os
import struct
import tempfile
import zlib
from pathlib import Path

import numpy as np

from kernels.errors import InputError


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


def check_writable(path) -> Path:
    """Fail early, with a clear message, when ``path`` cannot be written."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(f"--out {str(path)!r} is a directory; give a file name")
    if not parent.is_dir():
        raise InputError(f"--out {str(path)!r}: the folder {str(parent)!r} does not exist")
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"--out {str(path)!r} is not writable")
    try:  # try for real: permissions alone miss read-only file systems, and root passes every access check
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"--out {str(path)!r} is not writable: {exc.strerror}") from None
    return path


def write_atomic(path, data: bytes) -> None:
    path = check_writable(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_png(path, rgba: np.ndarray, text: dict[str, str] | None = None) -> None:
    write_atomic(path, png_bytes(np.ascontiguousarray(rgba), text))


def read_png_text(path) -> dict[str, str]:
    """The tEXt entries of a PNG (used by tests and handy for users)."""
    data = Path(path).read_bytes()
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
        "raytracer:kernel_ms": f"{frame.kernel.median_ms:.4f} ({frame.kernel.method}, n={frame.kernel.repeats})",
        "raytracer:frame_ms": f"{frame.frame_ms:.3f}",
    })
    return meta
