"""The one input reader: every file the app reads (``--scene``, ``--input``, GUI Open Scene).

Every file is opened here without blocking (O_NONBLOCK) and refused from its fstat unless it is a regular
file, so a FIFO never hangs the app and a device is never read until memory runs out; caches read their
entries here too (kernels/io/cache.py). What is read is bounded before reading, and what reading costs
in memory is checked against the memory free now (the estimate ``--n`` gets); every malformed input ends
as one InputError naming the option and the file.
"""

from __future__ import annotations

import json
import os
import re
import stat

import numpy as np

from kernels.backend import devices
from kernels.errors import InputError
from kernels.io.writer import kind_of


def _label(path, option: str) -> str:
    return f"{option} {os.fspath(path)!r}"


class NotAFile(InputError):
    """The path names something other than a regular file (a FIFO, a socket, a device, a directory)."""


def _open_regular(path, option: str, missing_ok: bool):
    """An open descriptor of the regular file at ``path``, never blocking: opened with O_NONBLOCK (opening
    a FIFO for reading then returns at once instead of waiting for a writer) and its fstat checked, so
    what is refused is what was opened. None when the file is missing and ``missing_ok``."""
    label = _label(path, option)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        st = os.stat(path)  # a device or a FIFO is refused without being opened at all
        if stat.S_ISREG(st.st_mode):
            fd = os.open(path, flags)
            st = os.fstat(fd)
        else:
            fd = None
    except FileNotFoundError:
        if missing_ok:
            return None
        raise InputError(f"{label} does not exist") from None
    except OSError as exc:
        raise InputError(f"{label} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):  # also one swapped in between the stat and the open
        if fd is not None:
            os.close(fd)
        raise NotAFile(f"{label} is {kind_of(st.st_mode)}, not a file")
    return fd


def check_input(path, option: str) -> os.stat_result:
    """The stat of a regular file at ``path`` (opened without blocking and checked); InputError for a
    missing file or anything else."""
    fd = _open_regular(path, option, False)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def check_optional_input(path, option: str, limit: int, why: str) -> os.stat_result | None:
    """As :func:`check_input` for a file that may be missing (None then), and at most ``limit`` bytes: what
    the app reads without the user naming it (the settings file) is refused when it is a FIFO or a device
    (which would hang or never end) or too large, before anything else opens it."""
    fd = _open_regular(path, option, True)
    if fd is None:
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if st.st_size > limit:
        raise InputError(f"{_label(path, option)} is {st.st_size:,} bytes; at most {limit:,} ({why})")
    return st


def open_input(path, option: str, missing_ok: bool = False):
    """A binary file object for a regular file, opened without blocking and checked once open (see
    :func:`_open_regular`); None for a missing file when ``missing_ok``. Every file the app reads is
    opened here."""
    fd = _open_regular(path, option, missing_ok)
    return None if fd is None else os.fdopen(fd, "rb")


CHUNK = 1 << 20


def input_size(path, option: str) -> int:
    """The size in bytes of the regular file at ``path`` (checked as every input), before reading it, so
    that a run's memory can be estimated from it first."""
    return check_input(path, option).st_size


def read_bytes(path, option: str, limit: int, why: str, missing_ok: bool = False) -> bytes | None:
    """Every byte of a regular file of at most ``limit`` bytes (``why`` says where the limit comes from).
    Exactly the file's size is allocated (never ``limit`` up front); a file that reports size 0 (as
    /proc's do) is read in chunks up to the limit. None for a missing file when ``missing_ok``."""
    label = _label(path, option)
    f = open_input(path, option, missing_ok)
    if f is None:
        return None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise InputError(f"{label} is {size:,} bytes; at most {limit:,} ({why})")
        return _read_all(f, label, size, limit, why)


def _read_all(f, label: str, size: int, limit: int, why: str) -> bytes:
    try:
        if size:
            data = f.read(size)
            grew = f.read(1)
        else:
            chunks, total = [], 0
            while total <= limit and (chunk := f.read(min(CHUNK, limit + 1 - total))):
                chunks.append(chunk)
                total += len(chunk)
            data, grew = b"".join(chunks), b""
    except OSError as exc:
        raise InputError(f"{label} cannot be read: {exc.strerror}") from None
    if grew or len(data) > limit:  # grew while being read
        raise InputError(f"{label} grew while being read, or is more than {limit:,} bytes ({why})")
    return data


def read_tail(path, option: str, nbytes: int) -> bytes:
    """The last ``nbytes`` bytes of a regular file (all of a shorter one): a child's log however much it
    printed."""
    with open_input(path, option) as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - nbytes))
        try:
            return f.read(nbytes)
        except OSError as exc:
            raise InputError(f"{_label(path, option)} cannot be read: {exc.strerror}") from None


def memory_limit() -> tuple[int, str]:
    """(bytes, why) the largest input that fits in memory now."""
    avail = devices.available_host_bytes()
    if avail is None:
        return 2**62, "no limit known"
    return avail, f"the memory available now, {avail / 2**30:.1f} GiB"


def size_text(nbytes: int) -> str:
    """A byte count in words: bytes, MiB or GiB."""
    if nbytes < 2**20:
        return f"{nbytes:,} bytes"
    if nbytes < 2**30:
        return f"{nbytes / 2**20:.1f} MiB"
    return f"{nbytes / 2**30:.1f} GiB" if nbytes < 2**80 else f"{nbytes // 2**30:,} GiB"


def host_memory_problem(host_bytes: int) -> str | None:
    """Why ``host_bytes`` of host memory cannot be had now ("about X of host memory; Y is free"), or None:
    the one estimate every size the user gives goes through (``--n``, an input file, a scene, a result
    file), before anything is allocated or read."""
    free = devices.available_host_bytes()
    if free is not None and host_bytes > free:
        return f"about {size_text(host_bytes)} of host memory; {size_text(free)} is free"
    return None


def check_fits(path, option: str, host_bytes: int, what: str = "reading it") -> None:
    """InputError when ``what`` (reading the file, the run it sets) needs more host memory than is free."""
    why = host_memory_problem(host_bytes)
    if why is not None:
        raise InputError(f"{_label(path, option)}: {what} needs {why}")


# What parsing JSON costs in memory, per byte of file: the bytes, their text, and the parsed document (a
# number of 4-8 characters becomes a 24-byte float and an 8-byte slot in its list). Readers that pack what
# they parse (scene files) give their own factor.
JSON_PEAK_PER_BYTE = 8


def read_json(path, option: str, limit: int, why: str, check_raw=None, object_pairs_hook=None,
              parse_number=None, compact_limit: int | None = None, peak_per_byte: float = JSON_PEAK_PER_BYTE,
              missing_ok: bool = False):
    """The JSON document in a UTF-8 text file of at most ``limit`` bytes. ``check_raw(raw, label)`` may
    refuse the bytes before parsing (e.g. from counts of brackets); ``object_pairs_hook`` and
    ``parse_number`` (called with each number's text) are json's, to check and pack while parsing.
    Before a byte is read, the file's size times ``peak_per_byte`` (what parsing costs) must fit in the
    memory free now (:func:`check_fits`). None for a missing file when ``missing_ok``.

    With ``compact_limit`` the file is streamed and its insignificant whitespace dropped as it is read,
    and what remains may be at most ``compact_limit`` bytes: a file padded with whitespace up to ``limit``
    then never sits in memory whole (``check_raw`` sees the compacted bytes)."""
    label = _label(path, option)
    f = open_input(path, option, missing_ok)
    if f is None:
        return None
    with f:
        size = os.fstat(f.fileno()).st_size  # the apparent size: a sparse file counts whole
        if size > limit:
            raise InputError(f"{label} is {size:,} bytes; at most {limit:,} ({why})")
        if compact_limit is not None:
            size = min(size, compact_limit)
        check_fits(path, option, int(size * peak_per_byte))
        if compact_limit is None:
            raw = _read_all(f, label, size, limit, why)
        else:
            raw = _read_compacted(f, label, limit, why, compact_limit)
    if check_raw is not None:
        check_raw(raw, label)
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(f"{label} is UTF-16 text; save it as UTF-8")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label} is not UTF-8 text (byte {exc.start} is {raw[exc.start]:#04x})") from None
    del raw  # the text alone while parsing
    hooks = {}
    if object_pairs_hook is not None:
        hooks["object_pairs_hook"] = object_pairs_hook
    if parse_number is not None:
        hooks["parse_int"] = hooks["parse_float"] = parse_number
    try:
        return json.loads(text, **hooks)
    except json.JSONDecodeError as exc:
        raise InputError(f"{label} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise InputError(f"{label} is nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        raise InputError(f"{label} has a value that cannot be read: {str(exc).splitlines()[0]}") from None


# A JSON string (kept whole) or a run of whitespace outside one (dropped): json ignores such whitespace.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_STRING_OR_SPACE = re.compile(rb'("(?:[^"\\]|\\.)*")|[ \t\r\n]+', re.DOTALL)
COMPACT_CHUNK = 4 << 20
MAX_COMPACT_STRING = 16 << 20  # a string still open after a chunk is carried into the next one


def _safe_cut(buf: bytes) -> int:
    """How much of ``buf`` (which starts outside any JSON string) can be compacted now: up to a point
    outside every string. Without backslashes every quote delimits a string, so an odd count means the
    last quote opens one; with them (rare: escapes), the strings are walked one by one."""
    if b"\\" not in buf:
        return len(buf) if buf.count(b'"') % 2 == 0 else buf.rfind(b'"')
    pos = 0
    while (quote := buf.find(b'"', pos)) >= 0:
        string = _STRING.match(buf, quote)
        if string is None:
            return quote  # a string that goes on in the next chunk
        pos = string.end()
    return len(buf)


def _drop_whitespace(part: bytes) -> bytes:
    """``part`` (whole strings only) without the whitespace outside its strings."""
    if b"\\" in part:
        return _STRING_OR_SPACE.sub(rb"\1", part)
    pieces = part.split(b'"')  # no escapes: even pieces lie outside strings, odd ones inside
    pieces[::2] = [piece.translate(None, b" \t\r\n") for piece in pieces[::2]]
    return b'"'.join(pieces)


def _read_compacted(f, label: str, limit: int, why: str, compact_limit: int) -> bytearray:
    out, carry, total = bytearray(), b"", 0
    while True:
        try:
            chunk = f.read(COMPACT_CHUNK)
        except OSError as exc:
            raise InputError(f"{label} cannot be read: {exc.strerror}") from None
        total += len(chunk)
        if total > limit:  # grew while being read, or reported size 0
            raise InputError(f"{label} is more than {limit:,} bytes ({why})")
        buf = carry + chunk
        cut = len(buf) if not chunk else _safe_cut(buf)
        out += _drop_whitespace(buf[:cut])
        carry = buf[cut:]
        if len(carry) > MAX_COMPACT_STRING:  # copied with every chunk: keep it short
            raise InputError(f"{label} holds a string longer than {MAX_COMPACT_STRING:,} bytes")
        if len(out) + len(carry) > compact_limit:
            raise InputError(f"{label} holds more than {compact_limit:,} bytes of JSON besides "
                             f"whitespace ({why})")
        if not chunk:
            return out


def _npy_header(f, version):
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(f)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(f)
    from numpy.lib import _format_impl  # version 3.0 (utf-8 field names) has no public reader

    return _format_impl._read_array_header(f, version)


MAX_NPY_HEADER = 1 << 16  # a header is a short dict (numpy writes tens of bytes; it reads at most 10,000)


def _check_npy_header_length(f, version, size: int, label: str) -> None:
    """The header length the file declares, checked against the file and MAX_NPY_HEADER before numpy reads
    that many bytes (it asks for the declared length at once: 4 GiB from a version 2 header of 13 bytes)."""
    import struct

    width = 2 if version == (1, 0) else 4
    raw = f.read(width)
    f.seek(-len(raw), os.SEEK_CUR)
    if len(raw) < width:
        raise InputError(f"{label} is not a .npy file: its header is cut short")
    (length,) = struct.unpack("<H" if width == 2 else "<I", raw)
    left = size - f.tell() - width
    if length > min(left, MAX_NPY_HEADER):
        raise InputError(f"{label} is not a .npy file: its header declares {length:,} bytes"
                         + (f"; the file holds {left:,} after it" if length > left else
                            f"; a .npy header is at most {MAX_NPY_HEADER:,}"))


def _npy_layout(f, label: str) -> tuple[int, np.dtype]:
    """(element count, dtype) of the open .npy file ``f`` from its header alone, checked against the file's
    size; InputError for what is not a plain numeric .npy array."""
    fmt = np.lib.format
    size = os.fstat(f.fileno()).st_size
    if size == 0:
        raise InputError(f"{label} is empty (0 bytes), not a .npy file")
    head = f.read(6)
    if head != fmt.MAGIC_PREFIX:
        looks = " (it is a .npz archive; give one array saved with numpy.save)" if head[:2] == b"PK" else ""
        raise InputError(f"{label} is not a .npy file{looks}")
    f.seek(0)
    try:
        version = fmt.read_magic(f)
        _check_npy_header_length(f, version, size, label)
        shape, fortran, dtype = _npy_header(f, version)
    except InputError:
        raise
    except (ValueError, OSError, SyntaxError, TypeError) as exc:
        raise InputError(f"{label} is not a .npy file: its header is damaged ({str(exc).splitlines()[0]})") from None
    if dtype.hasobject:
        raise InputError(f"{label} contains pickled Python objects; refused (only plain numeric arrays are read)")
    count = 1
    for dim in shape:
        count *= int(dim)
    nbytes = count * dtype.itemsize
    if nbytes > size - f.tell():
        raise InputError(f"{label}: its header promises {nbytes:,} bytes of data but the file holds {size - f.tell():,}")
    return count, dtype


def npy_layout(path, option: str) -> tuple[int, np.dtype]:
    """(element count, dtype) of a .npy file, read from its header without reading its data: what a run's
    memory estimate needs before the file is loaded."""
    with open_input(path, option) as f:
        return _npy_layout(f, _label(path, option))


def read_npy(path, option: str) -> np.ndarray:
    """The array in a .npy file, refusing from its header what is not one, holds pickled objects, or
    would not fit in memory."""
    label = _label(path, option)
    with open_input(path, option) as f:
        count, dtype = _npy_layout(f, label)
        nbytes = count * dtype.itemsize
        limit, why = memory_limit()
        if nbytes > limit:
            raise InputError(f"{label} holds {nbytes:,} bytes of data; at most {limit:,} ({why})")
        f.seek(0)
        try:
            return np.lib.format.read_array(f, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise InputError(f"{label} is not a readable .npy array: {str(exc).splitlines()[0]}") from None
