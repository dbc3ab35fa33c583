"""The traced run's recorder, in the simulator's child process: every global, shared and constant access a
simulated thread makes (its array, byte address, width and source line), rebuilt into warp requests at
each barrier and at the end of each block, and tallied per line as it goes (:mod:`.model`), so memory
holds one block's accesses between two barriers, not the run's.

The simulator's hooks (:mod:`.sim_hooks`) call :meth:`Tracer.record`; this module names nothing private of
numba-cuda. A site is one access in the source: the code object and instruction offset of the first frame,
walking up from the access, that is kernel or device code (the project's or a user's file, not numba,
numpy or this package), with its operation, space, array and width. The threads of one warp (32 threads
numbered x fastest) executing a site for the n-th time form one request."""

from __future__ import annotations

import collections
import contextlib
import dis
import os
import sys
import threading
from pathlib import Path

import numpy as np

from kernels.access import model as M
from kernels.access import notes
from kernels.backend import sim_blocks
from kernels.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
ARRAY_SPACING = 1 << 40  # each array's base address: arrays never share a sector or a bank row
MAX_SEGMENT_RECORDS = 2_000_000  # accesses one block may make between two barriers
RECORD_BYTES = 120  # one buffered access: a tuple of three and its address
KEEP_FIRST, KEEP_SPREAD = 24, 24  # requests kept per line for a view: the first ones, then a spread
_SKIP, _KERNEL, _MERGE = 0, 1, 2
# the jumps that close a loop (Python 3.11's and 3.12's names)
_BACKWARD = ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "POP_JUMP_BACKWARD_IF_TRUE",
             "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE")

_ACTIVE: "Tracer | None" = None  # the tracer the hooks report to (None: record nothing)


class TraceTooLarge(InputError):
    """A block made more accesses between two barriers than the trace buffers."""


def active() -> "Tracer | None":
    return _ACTIVE


@contextlib.contextmanager
def recording(tracer: "Tracer"):
    global _ACTIVE
    _ACTIVE = tracer
    try:
        yield tracer
    finally:
        _ACTIVE = None


class RecordingShared(np.ndarray):
    """A shared-memory array whose element loads and stores are recorded (local arrays stay plain numpy)."""

    _space = M.SHARED

    def __getitem__(self, idx):
        value = np.ndarray.__getitem__(self, idx)
        tracer = _ACTIVE
        if tracer is not None and not isinstance(value, np.ndarray):
            tracer.record(self, idx, M.LD, self._space)
        return value

    def __setitem__(self, idx, value):
        np.ndarray.__setitem__(self, idx, value)
        tracer = _ACTIVE
        if tracer is not None and is_element(idx, self.ndim):
            tracer.record(self, idx, M.ST, self._space)


class RecordingConst(RecordingShared):
    """A constant-memory array (``cuda.const.array_like``, the project's ConstantArray in the simulator)."""

    _space = M.CONST


def is_element(idx, ndim: int) -> bool:
    """Whether ``idx`` picks one element (a store of a slice is no thread's access)."""
    if isinstance(idx, tuple):
        return len(idx) == ndim and all(isinstance(i, (int, np.integer)) for i in idx)
    return ndim == 1 and isinstance(idx, (int, np.integer))


def _data_pointer(ary: np.ndarray) -> int:
    return ary.__array_interface__["data"][0]


class ThreadState:
    """One simulated thread's place in its warp and its accesses since the last barrier."""

    __slots__ = ("warp", "lane", "records", "counts", "cap")

    def __init__(self, thread_id: int, cap: int):
        self.warp, self.lane = divmod(thread_id, M.WARP)
        self.records: list = []
        self.counts: dict = {}
        self.cap = cap


class _LineTally:
    """A line's access counts and its kept requests: the first KEEP_FIRST, then every stride-th, the stride
    doubling whenever KEEP_SPREAD are kept, so they spread over the whole run."""

    def __init__(self, file: str, line: int):
        self.access = M.LineAccess(file, line, _source_line(file, line))
        self.spread: list = []
        self.stride = 1

    def add(self, site, lanes, block, warp, n, threads: int, skewed: bool = False) -> None:
        """One warp request: ``lanes`` of the warp's ``threads`` made it; ``skewed``: they came to it from
        the same earlier access, made a different number of times (a loop they run for different lengths)."""
        a = self.access
        M.add_request(a.metrics, site.space, site.op, lanes, site.width)
        a.requests_seen += 1
        index = a.requests_seen - 1
        if index < KEEP_FIRST:
            a.requests.append(site.request(lanes, block, warp, n))
        elif (index - KEEP_FIRST) % self.stride == 0:
            self.spread.append(site.request(lanes, block, warp, n))
            if len(self.spread) > KEEP_SPREAD:
                self.spread = self.spread[::2]
                self.stride *= 2
        if site.note and site.note not in a.notes:
            a.notes.append(site.note)
        if M.WARP - lanes.count(None) < threads and notes.NOTE_CONDITIONAL not in a.notes:
            a.notes.append(notes.NOTE_CONDITIONAL)
        if skewed and site.in_loop and notes.NOTE_LOOP_SKEW not in a.notes:
            a.notes.append(notes.NOTE_LOOP_SKEW)
        if site.retried and notes.NOTE_CAS_RETRY not in a.notes:
            a.notes.append(notes.NOTE_CAS_RETRY)

    def done(self) -> M.LineAccess:
        self.access.requests.extend(self.spread)
        return self.access


class _Site:
    __slots__ = ("file", "line", "op", "space", "width", "array", "note", "in_loop", "retried")

    def __init__(self, file, line, op, space, width, array, note, in_loop=False, retried=False):
        self.file, self.line, self.op, self.space = file, line, op, space
        self.width, self.array, self.note, self.in_loop = width, array, note, in_loop
        self.retried = retried  # a compare-and-swap a loop makes again when it fails

    def request(self, lanes, block, warp, n) -> M.Request:
        return M.Request(self.space, self.op, self.width, tuple(lanes), block, warp, n, self.array)


class _Launch:
    def __init__(self, name, grid, block, dynamic_shared, sampled):
        self.kernel = M.KernelAccess(name, tuple(grid), tuple(block), dynamic_shared, _product(grid), sampled)
        self.wanted = set(sampled)
        self.lines: dict = {}
        self.done_blocks = 0


def _product(dims) -> int:
    total = 1
    for d in dims:
        total *= d
    return total


class Tracer:
    """Records a run's accesses. ``blocks``: how many blocks of each launch to run (:func:`model.sample_blocks`);
    ``send(kind, value)`` gets ('progress', (kernel, blocks done, blocks to trace)) after each block."""

    def __init__(self, blocks: int, send=None, segment_records: int = MAX_SEGMENT_RECORDS):
        self.blocks = blocks
        self.send = send or (lambda kind, value: None)
        self.segment_records = segment_records
        self.kernels: list[M.KernelAccess] = []
        self._launch: _Launch | None = None
        self._seen: dict = {}  # (kernel function, argument types) -> its KernelAccess
        self._names: dict = {}
        self._sites: dict = {}
        self._site_list: list[_Site] = []
        self._arrays: dict = {}  # id(array) -> (array, start address, strides, shape, root number)
        self._roots: dict = {}  # id(root array) -> (root, its number, its data pointer)
        self._codes: dict = {}
        self._unused: dict = {}
        self._loops: dict = {}  # code -> its loops' bytecode ranges [start, end)
        self._owners: dict = {}
        self._lock = threading.Lock()
        self._skip_dirs = _skip_dirs()
        self._merge = notes.merged_access_helpers()
        self.too_large: TraceTooLarge | None = None  # set when a block overflowed (a user's run may swallow it)

    # --- launches ------------------------------------------------------------------------------------------

    def begin_launch(self, fn, grid, block, dynamic_shared: int, args) -> bool:
        """A kernel launch begins; False: skip it whole (a repeat of a kernel already traced)."""
        key = (fn, tuple(_arg_type(a) for a in args))
        if key in self._seen:
            self._seen[key].launches += 1
            return False
        name = getattr(fn, "__name__", "kernel")
        self._names[name] = self._names.get(name, 0) + 1
        label = name if self._names[name] == 1 else f"{name}#{self._names[name]}"
        sampled = M.sample_blocks(_product(grid), self.blocks)
        self._launch = _Launch(label, grid, block, int(dynamic_shared or 0), sampled)
        self._seen[key] = self._launch.kernel
        notes.wrap_constant_arrays(fn, RecordingConst)
        return True

    def wants(self, grid_point, grid) -> bool:
        x, y, z = (tuple(grid_point) + (0, 0))[:3]
        gx, gy = (tuple(grid) + (1, 1))[:2]
        return x + gx * (y + gy * z) in self._launch.wanted

    def thread_state(self, thread_id: int, threads: int) -> ThreadState:
        return ThreadState(thread_id, max(1, self.segment_records // max(1, threads)))

    def block_done(self, states, grid_point) -> None:
        self.flush(states, grid_point)
        launch = self._launch
        launch.done_blocks += 1
        self.send("progress", (launch.kernel.name, launch.done_blocks, len(launch.kernel.sampled)))

    def end_launch(self) -> None:
        launch, self._launch = self._launch, None
        if launch is None:
            return
        launch.kernel.lines = [t.done() for _, t in sorted(launch.lines.items())]
        self.kernels.append(launch.kernel)

    def finish(self) -> list[M.KernelAccess]:
        """The traced kernels, with their notes (once every launch, traced or skipped, is known)."""
        for kernel in self.kernels:
            kernel.notes = notes.kernel_notes(kernel)
        return self.kernels

    # --- accesses ------------------------------------------------------------------------------------------

    def record(self, ary, idx, op: str, space: str, compare_and_swap: bool = False) -> None:
        """One thread's access to element ``idx`` of ``ary`` (called by the hooks, from the thread itself)."""
        state = getattr(threading.current_thread(), "access_state", None)
        if state is None:
            return
        frame = sys._getframe(2)
        code = frame.f_code
        kind = self._codes.get(code)
        if kind is None:
            kind = self._classify(code)
        merge = 0
        while kind != _KERNEL:
            if kind == _MERGE:
                merge = self._merge[code]
            frame = frame.f_back
            if frame is None:
                return  # host code touching an array: not a thread's access
            code = frame.f_code
            kind = self._codes.get(code)
            if kind is None:
                kind = self._classify(code)
        info = self._arrays.get(id(ary))
        if info is None or info[0] is not ary:
            info = self._describe(ary)
        address = info[1] + _offset(idx, info[2], info[3])
        width = ary.itemsize
        if merge:
            if (address - (info[4] + 1) * ARRAY_SPACING) % merge:
                return  # the compiler loads these elements with the first one: one access of `merge` bytes
            width = merge
        owners = self._owners.get(code)
        if owners is None:
            owners = self._owner_table(code)
        offset = owners.get(frame.f_lasti, frame.f_lasti)
        if op == M.ATOM and space == M.GLOBAL and self._result_unused(code, offset):
            op = M.RED
        key = (code, offset, op, space, info[4], width)
        site = self._sites.get(key)
        if site is None:
            site = self._new_site(key, frame, bool(merge), compare_and_swap)
        n = state.counts.get(site, 0) + 1
        state.counts[site] = n
        records = state.records
        records.append((site, n, address))
        if len(records) >= state.cap:
            self.too_large = TraceTooLarge(
                f"a block of {self._launch.kernel.name} made more than {self.segment_records:,} memory accesses "
                "between two barriers; trace a smaller --n")
            raise self.too_large

    def _classify(self, code) -> int:
        filename = code.co_filename
        if code in self._merge:
            kind = _MERGE
        elif filename.startswith(self._skip_dirs) or filename in _SKIP_FILES:
            kind = _SKIP
        else:
            kind = _KERNEL
        self._codes[code] = kind
        return kind

    def _describe(self, ary) -> tuple:
        root = ary
        while isinstance(root.base, np.ndarray):
            root = root.base
        with self._lock:
            found = self._roots.get(id(root))
            if found is None or found[0] is not root:
                found = (root, len(self._roots), _data_pointer(root))
                self._roots[id(root)] = found
            if len(self._arrays) > 50_000:  # views made per access (a row of a 2-D array): forget them
                self._arrays.clear()
            start = (found[1] + 1) * ARRAY_SPACING + _data_pointer(ary) - found[2]
            info = (ary, start, ary.strides, ary.shape, found[1])
            self._arrays[id(ary)] = info
        return info

    def _new_site(self, key, frame, merged: bool, compare_and_swap: bool = False):
        code, offset, op, space, root, width = key
        line, in_loop = frame.f_lineno, self._in_loop(frame)
        retried = compare_and_swap and in_loop and op == M.ATOM
        with self._lock:
            site = self._sites.get(key)
            if site is None:
                site = len(self._site_list)
                note = notes.site_note(space, op, merged, width)
                self._site_list.append(_Site(_shown_file(code.co_filename), line, op, space, width,
                                             f"{space} array {root + 1}", note, in_loop, retried))
                self._sites[key] = site
        return site

    def _in_loop(self, frame) -> bool:
        """Whether the access ``frame`` makes lies inside a loop of its function or, for a device function, of
        a kernel or device function it was called from (as the first call of its site found it)."""
        while frame is not None:
            code = frame.f_code
            kind = self._codes.get(code)
            if kind is None:
                kind = self._classify(code)
            if kind == _SKIP:
                return False  # the simulator's own code: above the kernel
            if kind == _KERNEL and any(start <= frame.f_lasti < end for start, end in self._loop_ranges(code)):
                return True
            frame = frame.f_back
        return False

    def _loop_ranges(self, code) -> list:
        """[start, end) bytecode ranges of ``code``'s loops: from a backward jump's target to the jump."""
        ranges = self._loops.get(code)
        if ranges is None:
            ranges = self._loops[code] = [(ins.argval, ins.offset) for ins in dis.get_instructions(code)
                                          if ins.opname in _BACKWARD and isinstance(ins.argval, int)]
        return ranges

    def _owner_table(self, code) -> dict:
        """{bytecode offset: the offset of the instruction it belongs to}: a frame's f_lasti inside a call
        may point into the calling instruction's inline caches once the interpreter has specialised it."""
        starts = [ins.offset for ins in dis.get_instructions(code) if ins.opname != "CACHE"]
        table, k = {}, 0
        for offset in range(0, len(code.co_code), 2):
            while k + 1 < len(starts) and starts[k + 1] <= offset:
                k += 1
            table[offset] = starts[k] if starts else offset
        self._owners[code] = table
        return table

    def _result_unused(self, code, offset: int) -> bool:
        """Whether the atomic called at ``offset`` throws its result away (the next instruction pops it): the
        compiler then issues a RED, which Nsight Compute counts apart from atomics."""
        key = (code, offset)
        found = self._unused.get(key)
        if found is None:
            instructions = list(dis.get_instructions(code))
            after = next((i for i, ins in enumerate(instructions) if ins.offset == offset), None)
            found = after is not None and after + 1 < len(instructions) and \
                instructions[after + 1].opname == "POP_TOP"
            self._unused[key] = found
        return found

    # --- requests ------------------------------------------------------------------------------------------

    def flush(self, states, grid_point) -> None:
        """Rebuild the warp requests of the accesses made since the last barrier and tally them."""
        # (warp, site, n) -> [lanes' addresses, the access each lane made just before (site, n), skew]: skew is
        # True when the lanes came from the same earlier access made a different number of times (iterations of
        # a loop they run for different lengths), None once they came from different ones (a branch)
        groups: dict = {}
        for state in states:
            records = state.records
            if not records:
                continue
            warp, lane = state.warp, state.lane
            before = None
            for site, n, address in records:
                key = (warp, site, n)
                group = groups.get(key)
                if group is None:
                    groups[key] = group = [[None] * M.WARP, before, False]
                elif group[2] is not None and before != group[1]:
                    same_access = before is not None and group[1] is not None and before[0] == group[1][0]
                    group[2] = True if same_access else None
                group[0][lane] = address
                before = (site, n)
            state.records = []
        if not groups:
            return
        launch = self._launch
        block = tuple((tuple(grid_point) + (0, 0))[:3])
        threads = collections.Counter(state.warp for state in states)  # a block's last warp may be partial
        for (warp, site_number, n), (lanes, _, skewed) in sorted(groups.items(), key=lambda kv: kv[0]):
            site = self._site_list[site_number]
            tally = launch.lines.get((site.file, site.line))
            if tally is None:
                tally = launch.lines[(site.file, site.line)] = _LineTally(site.file, site.line)
            tally.add(site, lanes, block, warp, n, threads[warp], skewed=bool(skewed))


def _offset(idx, strides, shape) -> int:
    if isinstance(idx, tuple):
        total = 0
        for i, s, d in zip(idx, strides, shape):
            i = int(i)
            total += (i + d if i < 0 else i) * s
        return total
    i = int(idx)
    return (i + shape[0] if i < 0 else i) * strides[0]


def _arg_type(arg) -> object:
    dtype = getattr(arg, "dtype", None)
    if dtype is not None:
        return (str(dtype), getattr(arg, "ndim", 0))
    return type(arg).__name__


def _skip_dirs() -> tuple[str, ...]:
    """Folders whose frames are not kernel code: numba (the simulator), numpy, and this package."""
    import numba

    dirs = [os.path.dirname(numba.__file__), os.path.dirname(np.__file__), os.path.dirname(__file__)]
    return tuple(d + os.sep for d in dirs)


# files of frames that are not kernel code either: the simulated threads' own loop and the context managers
_SKIP_FILES = (threading.__file__, contextlib.__file__, sim_blocks.__file__)


def _shown_file(filename: str) -> str:
    """A project file relative to the project, any other (a user's file) as given."""
    try:
        return Path(filename).resolve().relative_to(ROOT).as_posix()
    except (ValueError, OSError):
        return filename


def _source_line(file: str, line: int) -> str:
    import linecache

    path = file if os.path.isabs(file) or file in linecache.cache else str(ROOT / file)
    text = linecache.getline(path, line) or linecache.getline(file, line)
    return text.strip()
