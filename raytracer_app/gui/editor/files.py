"""Where the variant editor keeps its files, and its recent list (no widgets): a ``variants`` folder under
the app's cache folder (kernels/io/cache.py; private to the user), one autosaved copy per buffer, and
``recent.json`` listing the files opened or saved last (the Recent list adds the autosaved buffers). Reads go through the one input reader, writes
through the one output writer."""

from __future__ import annotations

import os
from pathlib import Path

from kernels.errors import InputError

RECENT_MAX = 10
RECENT_FILE = "recent.json"


def folder() -> Path | None:
    """The editor's folder, created on first use; None (after one warning) when it cannot be used."""
    from kernels.io.cache import cache_root, usable_dir

    return usable_dir(cache_root() / "variants", "variant editor folder")


def autosave_path(name: str) -> Path | None:
    """Where a buffer named ``name`` (its file's name, or its NAME for a new one) is autosaved."""
    base = folder()
    if base is None:
        return None
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in name) or "variant"
    return base / (safe if safe.endswith(".py") else f"{safe}.py")


def write_text(path, text: str, option: str = "variant file", replaces: str | None = None, backup: bool = True):
    """Write through the one writer: a file holding other text than ``replaces`` (what this editor last
    read or wrote there) is kept as NAME.~N~ first."""
    from kernels.io.writer import write_output

    return write_output(path, text, option, backup=backup, replaces=replaces)


def autosaved() -> list[str]:
    """The autosaved buffers in the editor's folder, newest first (their numbered backups left out)."""
    base = folder()
    if base is None:
        return []
    try:
        files = [p for p in base.iterdir() if p.suffix == ".py" and p.is_file()]
    except OSError:
        return []
    files.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    return [str(p) for p in files[:RECENT_MAX]]


def read_text(path) -> str:
    """A variant file's text (InputError when it cannot be read or is not UTF-8)."""
    from kernels.user_variants import loader

    raw_path = os.fspath(path)
    from kernels.io.reader import read_bytes

    raw = read_bytes(raw_path, "Open Variant", loader.MAX_BYTES, "a variant file is source code")
    try:
        return raw.decode("utf-8-sig")  # a leading byte-order mark dropped, as the loader drops it
    except UnicodeDecodeError as exc:
        raise InputError(f"{raw_path} is not UTF-8 text (byte {exc.start})") from None


def recent() -> list[str]:
    """The files opened or saved last, newest first ([] when there are none or the list cannot be read)."""
    from kernels.io.reader import read_json

    base = folder()
    if base is None or not (base / RECENT_FILE).exists():
        return []
    try:
        data = read_json(base / RECENT_FILE, "recent variants", 1 << 16, "a short list")
    except InputError:
        return []
    return [p for p in data if isinstance(p, str)][:RECENT_MAX] if isinstance(data, list) else []


def remember(path) -> list[str]:
    """Put ``path`` first in the recent list; returns the list (unchanged on disk if it cannot be written)."""
    import json

    from kernels.io.writer import WriteFailed

    path = os.path.abspath(os.fspath(path))
    paths = [path] + [p for p in recent() if p != path]
    paths = paths[:RECENT_MAX]
    base = folder()
    if base is not None:
        try:
            write_text(base / RECENT_FILE, json.dumps(paths, indent=1), "recent variants", backup=False)
        except (InputError, WriteFailed, OSError):
            pass
    return paths
