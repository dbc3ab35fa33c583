"""Where the app keeps what it can recompute but should not (best's tuning, the inspector's compiles):
``$RAYTRACER_CACHE_DIR``, else ``$XDG_CACHE_HOME/raytracer-app``, else ``~/.cache/raytracer-app``.

Caches heal: a folder that cannot be used means "no cache" (one warning), never a failed run; a folder
this module creates is private to the user (mode 0700), since whoever can write a cache can feed the app
what it will trust (see docs/architecture.md, "Caches"). Every cache reads its entries through
:func:`read_entry` (the one input reader: never blocking, regular files only); an entry that is not a
regular file (a FIFO, a socket, a device) is removed, so that it is rebuilt as a garbled one is.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

CACHE_ENV = "RAYTRACER_CACHE_DIR"
PRIVATE_MODE = 0o700

_warned: set[str] = set()  # one warning per message per process


class BadEntry(Exception):
    """A cache entry that cannot be used; the message says why, in words ("a FIFO (named pipe), removed")."""


def warn_once(message: str) -> None:
    """One line on stderr, once per process for a given message: a cache problem never repeats itself."""
    if message in _warned:
        return
    _warned.add(message)
    print(f"warning: {message}", file=sys.stderr)


def cache_root() -> Path:
    base = os.environ.get(CACHE_ENV)
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "raytracer-app"


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) with mode 0700; an existing folder is left as it is."""
    path = Path(path)
    missing = []
    while not path.exists() and not path.is_symlink() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, PRIVATE_MODE)  # mkdir's mode passes through the umask: make it exactly 0700


def usable_dir(path, what: str = "cache") -> Path | None:
    """``path`` as a folder this process can read and write (created 0700 when missing), or None after
    one warning when it cannot be used (a file in its place, not writable, cannot be created)."""
    path = Path(path)
    try:
        make_private_dir(path)
        st = os.stat(path)
    except OSError as exc:
        warn_once(f"the {what} folder {path} cannot be used ({exc.strerror or exc}); running without a {what}")
        return None
    if not stat.S_ISDIR(st.st_mode):
        warn_once(f"the {what} folder {path} is not a folder; running without a {what}")
        return None
    try:  # try for real: permissions alone miss read-only file systems, and root passes every access check
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        warn_once(f"the {what} folder {path} is not writable ({exc.strerror or exc}); running without a {what}")
        return None
    return path


def read_entry(path, what: str, limit: int) -> bytes | None:
    """The bytes of cache entry ``path`` through the one input reader; None when there is none. BadEntry
    when it cannot be used: unreadable, larger than ``limit``, or not a regular file, which is removed
    here (it would hang or fail every reader, and the writer never replaces what is not a file)."""
    from kernels.errors import InputError
    from kernels.io.reader import NotAFile, read_bytes

    label = f"{what} {os.fspath(path)!r}"
    try:
        return read_bytes(path, what, limit, f"a {what} entry", missing_ok=True)
    except NotAFile as exc:
        kind = str(exc).removeprefix(label).removeprefix(" is ")
        raise BadEntry(f"{kind}; {'removed' if discard(path) else 'it could not be removed'}") from None
    except InputError as exc:
        raise BadEntry(str(exc).removeprefix(label).lstrip(": ")) from None


def discard(path) -> bool:
    """Remove what stands at a cache entry's path (an empty folder too); True when it is gone."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.rmdir(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True
