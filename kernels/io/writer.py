"""The one output writer: every file the app writes (PNG, CSV, scene JSON, from the CLI or the GUI).

It writes a temporary file in the destination's folder and renames it over the destination, so a failed
write never leaves a partial file. It never replaces what is not a regular file (a device, FIFO, socket
or directory is refused; a symlink is followed and its target written), keeps a replaced file's
permission bits, gives a new file the umask's usual mode, and refuses an output that is one of the
run's inputs. Every message names the option the user gave (``--out``, ``--csv``, a GUI action...).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from kernels.errors import InputError


class WriteFailed(RuntimeError):
    """The destination was fine when checked, but writing it failed (disk full, removed folder...)."""


def kind_of(mode: int) -> str:
    """What a file is, in words, from its st_mode."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file" if not stat.S_ISREG(mode) else "a regular file"


def check_output(path, option: str, inputs=(), suffixes: tuple[str, ...] = ()) -> Path:
    """The real file to write for ``path`` (symlinks followed), or InputError saying why it cannot be.

    ``inputs``: (option, path) pairs of the run's other files (inputs, other outputs); writing over one
    of them is refused.
    ``suffixes``: allowed extensions (lower case, with the dot), empty for any."""
    text = os.fspath(path)
    label = f"{option} {text!r}"
    if not text:
        raise InputError(f"{option}: the file name is empty")
    if text.endswith(("/", os.sep)):
        raise InputError(f"{label} ends in '/': give a file name, not a folder")
    target = Path(os.path.realpath(text))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"{label} cannot be checked: {exc.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(f"{label} is {kind_of(st.st_mode)}; give a regular file name")
    if suffixes and Path(text).suffix.lower() not in suffixes:
        raise InputError(f"{label}: only {' '.join(suffixes)} files are written; give a name ending in {suffixes[0]}")
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"{label}: the folder {str(Path(text).parent)!r} does not exist")
    for other_option, other in inputs:
        if other is not None and _same_file(target, other):
            raise InputError(f"{label} is the same file as {other_option} {os.fspath(other)!r}; give another name")
    if st is not None and not os.access(target, os.W_OK):
        raise InputError(f"{label} is not writable")
    try:  # try for real: permissions alone miss read-only file systems, and root passes every access check
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{label} is not writable: {exc.strerror}") from None
    return target


def _same_file(a, b) -> bool:
    """Same inode (hard links, symlinks), or the same path when neither exists yet."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def new_file_mode() -> int:
    """The mode ``open()`` gives a new file under this process's umask (0o666 & ~umask)."""
    try:  # Linux reports the umask without changing it
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_output(path, data: bytes | str, option: str, inputs=(), suffixes: tuple[str, ...] = ()) -> Path:
    """Write ``data`` to ``path`` atomically after :func:`check_output`; returns the file written.

    InputError when the destination is refused, WriteFailed when writing fails (nothing is left behind)."""
    target = check_output(path, option, inputs, suffixes)
    if isinstance(data, str):
        data = data.encode("utf-8")
    label = f"{option} {os.fspath(path)!r}"
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise WriteFailed(f"cannot write {label}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            try:
                st = os.stat(target)
            except FileNotFoundError:
                st = None
            # checked again just before the rename: never put a regular file in place of something else
            if st is not None and not stat.S_ISREG(st.st_mode):
                raise InputError(f"{label} is {kind_of(st.st_mode)}; give a regular file name")
            os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode) if st is not None else new_file_mode())
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise WriteFailed(f"cannot write {label}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmp)
        raise
    return target


def _remove(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
