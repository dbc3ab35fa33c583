"""The one output writer: every file the app writes (PNG, CSV, scene JSON, from the CLI or the GUI).

It writes a temporary file in the destination's folder and renames it over the destination, so a failed
write never leaves a partial file (one left by a kill -9 is removed by the next write to that folder). It
never replaces what is not a regular file (a device, FIFO, socket or directory is refused; a symlink is
followed, once, and its target written, unless the kernel's protected_symlinks rule would refuse it; the
suffix rule applies to the target), keeps a replaced file's
permission bits, owner and group (refusing a file it cannot give them back to), gives a new file the umask's
usual mode, and refuses an output that is one of the
run's inputs. Every message names the option the user gave (``--out``, ``--csv``, a GUI action...).

It never loses a file's text silently: an existing file whose content differs from what is written is kept
as a numbered backup ``NAME.~N~`` (as ``cp --backup=numbered``), the one rule for every command and button.
No backup is made when the file already holds the new bytes, or when it holds exactly the text its caller
last wrote there (``replaces``: an editor's autosave of its own buffer), or for the app's own caches
(``backup=False``).
"""

from __future__ import annotations

import fcntl
import functools
import os
import re
import secrets
import stat
import tempfile
import time
from pathlib import Path

from kernels import signals
from kernels.errors import InputError, printable, shown


class WriteFailed(RuntimeError):
    """The destination was fine when checked, but writing it failed (disk full, removed folder...)."""


def write_each(writes, on_failure) -> bool:
    """Do every write of ``writes`` ((option, path, write): ``write()`` makes the text and writes it through
    this writer), each one even when one before it failed, so a failure to write one output never loses the
    others; ``on_failure(option, path, exc)`` hears each one that failed. True when all were written."""
    ok = True
    for option, path, write in writes:
        try:
            write()
        except (WriteFailed, InputError, UnicodeError, OSError) as exc:
            ok = False
            on_failure(option, path, exc)
    return ok


def kind_of(mode: int) -> str:
    """What a file is, in words, from its st_mode."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file" if not stat.S_ISREG(mode) else "a regular file"


TEMP_PREFIX = ".raytracer-partial-"  # the writer's own temporary files: TEMP_PREFIX + 8 random + "-" + name
_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"[a-z0-9_]{8}-")
STALE_TEMP_SECONDS = 600  # a temp file this old was left by a killed write (a write takes seconds)
UNLOCKED_TEMP_SECONDS = 2  # an unlocked temp file this old has no writer (it locks the file as it makes it)
MAX_LINKS = 40  # as the kernel's limit on symbolic links followed in one lookup


def resolve_output(text: str, label: str) -> Path:
    """The real path ``text`` names, resolved once, component by component as the kernel does, refusing a
    symbolic link that the kernel's protected_symlinks rule would refuse: a link in a sticky folder owned
    by neither you, root nor the folder's owner (a link planted in /tmp by another user)."""
    path = Path(os.getcwd()) if not os.path.isabs(text) else Path("/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            path = path.parent
            continue
        candidate = path / part
        try:
            st = os.lstat(candidate)
        except FileNotFoundError:
            return candidate.joinpath(*parts) if parts else candidate
        except OSError as exc:
            raise InputError(f"{label} cannot be checked: {exc.strerror}") from None
        if not stat.S_ISLNK(st.st_mode):
            path = candidate
            continue
        hops += 1
        if hops > MAX_LINKS:
            raise InputError(f"{label} goes through more than {MAX_LINKS} symbolic links")
        _check_link(candidate, st, path, label)
        target = os.readlink(candidate)
        if target.startswith("/"):
            path = Path("/")
        parts = [p for p in target.split("/") if p not in ("", ".")] + parts
    return path


def _check_link(link: Path, st: os.stat_result, folder: Path, label: str) -> None:
    try:
        where = os.stat(folder)
    except OSError:
        return
    if where.st_mode & stat.S_ISVTX and st.st_uid not in (os.geteuid(), 0, where.st_uid):
        raise InputError(f"{label}: {printable(link)} is a symbolic link owned by another user (uid {st.st_uid}) "
                         "in a sticky folder; refused, as the kernel's protected_symlinks rule does")


def check_output(path, option: str, inputs=(), suffixes: tuple[str, ...] = ()) -> Path:
    """The real file to write for ``path`` (symlinks followed once, see :func:`resolve_output`), or
    InputError saying why it cannot be.

    ``inputs``: (option, path) pairs of the run's other files (inputs, other outputs); writing over one
    of them is refused.
    ``suffixes``: allowed extensions (lower case, with the dot) of the file finally written (a link's
    target, not the link's name), empty for any."""
    text = os.fspath(path)
    label = f"{option} {shown(text, 200)}"
    if not text:
        raise InputError(f"{option}: the file name is empty")
    if text.endswith(("/", os.sep)):
        raise InputError(f"{label} ends in '/': give a file name, not a folder")
    target = resolve_output(text, label)
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"{label}: the folder {shown(str(folder), 200)} does not exist")
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"{label} cannot be checked: {exc.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(f"{label} is {kind_of(st.st_mode)}; give a regular file name")
    for other_option, other in inputs:
        if other is not None and _same_file(target, other):
            raise InputError(f"{label} is the same file as {other_option} {shown(os.fspath(other), 200)}; give another name")
    if suffixes and target.suffix.lower() not in suffixes:
        via = f" (a link to {shown(str(target), 200)})" if target.name != Path(text).name else ""
        raise InputError(f"{label}{via}: only {' '.join(suffixes)} files are written; give a name ending in {suffixes[0]}")
    if st is not None and not os.access(target, os.W_OK):
        raise InputError(f"{label} is not writable")
    try:  # try for real: permissions alone miss read-only file systems, and root passes every access check
        fd, probe = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}", suffix="-probe", dir=folder)
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


class Written(type(Path())):
    """The path of a file written; ``backup`` is where its old text was kept (None when no backup was made)."""

    backup: Path | None = None

    def kept(self) -> str:
        """'' or ' (the old file is kept as NAME.~N~)': appended to a command's 'wrote ...' line."""
        return f" (the old file is kept as {self.backup.name})" if self.backup is not None else ""


_BACKUP = re.compile(r"\.~(\d+)~$")


def backup_name(target) -> Path:
    """The next free numbered backup name for ``target``: NAME.~N~, N one past the highest already there."""
    target = Path(target)
    numbers = [0]
    try:
        for entry in os.scandir(target.parent):
            if entry.name.startswith(target.name + ".~"):
                m = _BACKUP.search(entry.name[len(target.name):])
                if m and entry.name == f"{target.name}.~{m.group(1)}~":
                    numbers.append(int(m.group(1)))
    except OSError:
        pass
    return target.parent / f"{target.name}.~{max(numbers) + 1}~"


def overwrite_notice(path, option: str, inputs=(), suffixes: tuple[str, ...] = ()) -> str:
    """The line a command prints before it writes ``path``: '' for a new file, else where the old text goes
    (:func:`check_output` first, so a refused destination is one InputError before any work)."""
    target = check_output(path, option, inputs, suffixes)
    if not os.path.exists(target):
        return ""
    return f"{option} {shown(os.fspath(path), 200)} exists: its old text will be kept as {backup_name(target).name}"


def write_output(path, data: bytes | str, option: str, inputs=(), suffixes: tuple[str, ...] = (),
                 backup: bool = True, replaces: bytes | str | None = None) -> Written:
    """Write ``data`` to ``path`` atomically after :func:`check_output`; returns the file written, its
    ``backup`` attribute naming where a replaced file's old text was kept (see the module's rule).

    The destination is resolved once; the temporary file, the last check and the rename all happen
    relative to one open descriptor of its folder, so a folder swapped for a link meanwhile changes
    nothing. Temporary files a killed write left in that folder (older than STALE_TEMP_SECONDS) are removed.
    InputError when the destination is refused, WriteFailed when writing fails (nothing is left behind)."""
    target = check_output(path, option, inputs, suffixes)
    if isinstance(data, str):
        # a file name that is not UTF-8 (legal on Linux) reaches text as lone surrogates: written as \udcXX
        data = data.encode("utf-8", "backslashreplace")
    if isinstance(replaces, str):
        replaces = replaces.encode("utf-8", "backslashreplace")
    label = f"{option} {shown(os.fspath(path), 200)}"
    name = target.name
    try:
        folder = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise WriteFailed(f"cannot write {label}: {exc.strerror}") from None
    tmp, token, kept = None, None, None
    try:
        remove_stale_temps(folder)
        tmp, fd = _create_temp(folder, name)
        token = signals.on_forced_exit(functools.partial(_remove, str(target.parent / tmp)))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            try:
                st = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            # checked again just before the rename: never put a regular file in place of something else
            if st is not None and not stat.S_ISREG(st.st_mode):
                raise InputError(f"{label} is {kind_of(st.st_mode)}; give a regular file name")
            if st is not None:
                _keep_owner(f.fileno(), st, label)
            os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode) if st is not None else new_file_mode())
        kept = _keep_old(target, name, folder, data, replaces) if backup and st is not None else None
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        tmp = None
    except OSError as exc:
        raise WriteFailed(f"cannot write {label}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            _remove(tmp, folder)
        if token is not None:
            signals.forget(token)
        os.close(folder)
    written = Written(target)
    written.backup = kept
    return written


def _keep_old(target: Path, name: str, folder: int, data: bytes, replaces: bytes | None) -> Path | None:
    """The existing file kept as its next numbered backup (a hard link, so the rename that follows leaves
    the old inode there; a copy where links are not supported); None when its bytes are ``data`` or
    ``replaces`` (nothing would be lost)."""
    try:
        with open(os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=folder), "rb") as f:
            old = f.read(len(data) + 1 if replaces is None else max(len(data), len(replaces)) + 1)
    except OSError:
        old = None
    if old is not None and (old == data or (replaces is not None and old == replaces)):
        return None
    for _ in range(100):
        kept = backup_name(target)
        try:
            os.link(name, kept.name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
            return kept
        except FileExistsError:
            continue
        except OSError:  # no hard links here (some network and FAT file systems): a copy
            with open(os.open(name, os.O_RDONLY, dir_fd=folder), "rb") as src:
                fd = os.open(kept.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=folder)
                with os.fdopen(fd, "wb") as dst:
                    dst.write(src.read())
            return kept
    raise FileExistsError(f"no free backup name for {target.name}")


def _keep_owner(fd: int, st: os.stat_result, label: str) -> None:
    """The replacement gets the replaced file's owner and group (a file written through a link to another
    user's file stays that user's, root writing it included); where they cannot be given (not root, and
    the file is another user's or of a group you are not in) the write is refused and the file left as it
    was, rather than the file silently becoming yours."""
    own = os.fstat(fd)
    if (own.st_uid, own.st_gid) == (st.st_uid, st.st_gid):
        return
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:
        raise InputError(f"{label} belongs to another user or group (uid {st.st_uid}, gid {st.st_gid}); "
                         "replacing it would make it yours, so it is left as it is: write to a file of your "
                         "own") from None


def _create_temp(folder: int, name: str) -> tuple[str, int]:
    """A new hidden file TEMP_PREFIX + random + '-' + name (cut to fit) in the folder: (name, fd)."""
    for _ in range(100):
        tmp = f"{TEMP_PREFIX}{secrets.token_hex(4)}-{name}"[:255]
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600, dir_fd=folder)
        except FileExistsError:
            continue
        try:  # held while this process lives: a temp file nobody holds was left by a killed write
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass
        return tmp, fd
    raise FileExistsError("no free temporary file name")


def remove_stale_temps(folder, now: float | None = None) -> int:
    """Remove this writer's temporary files (named TEMP_PREFIX...) that a write killed between writing
    and renaming left in ``folder`` (a path or a descriptor): regular files of yours that no live writer
    holds (each writer holds an flock on its temporary file; the kernel drops it when the process dies,
    SIGKILL included), or older than STALE_TEMP_SECONDS. Returns how many were removed; never raises."""
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    dir_fd = folder if isinstance(folder, int) else None
    for entry in entries:
        if not _TEMP_NAME.match(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not (stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()):
                continue
            if now - st.st_mtime > STALE_TEMP_SECONDS or (
                    now - st.st_mtime > UNLOCKED_TEMP_SECONDS and not _held(entry.name, dir_fd, entry.path)):
                os.unlink(entry.name if dir_fd is not None else entry.path, dir_fd=dir_fd)
                removed += 1
        except OSError:
            continue
    return removed


def _held(name: str, dir_fd, path: str) -> bool:
    """Whether a live writer holds the temporary file (its flock); True when that cannot be told."""
    try:
        fd = os.open(name if dir_fd is not None else path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0),
                     dir_fd=dir_fd)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the probe's own lock


def _remove(path, dir_fd=None) -> None:
    try:
        os.unlink(path, dir_fd=dir_fd)
    except OSError:
        pass
