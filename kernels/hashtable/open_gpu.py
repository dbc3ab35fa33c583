"""The host side of the open-addressing kernels (:mod:`.open_kernels`): the table in device memory, the
launch, the timing and the check, for ``linear-probing``, ``bucketed``, ``two-choice``, ``best`` and best's
candidates ``bucketed-filter`` (first-step filters) and ``bucketed-rounds`` (inserts in rounds, round_kernels.py).

Timing: an insert (or insert-or-add) is timed into a table emptied before every repeat, an erase from a
copy of the full table restored before every repeat (neither refill timed); a find times lookups in a table
built once before the repeats, by the variant's own insert (untimed). ``best`` is the bucketed table with
four hash functions and overflow flags, with its bucket width and block tuned per device, op, load and size on a
GPU (kernels.launch.tuning's cache: the sweep's leaders timed again alternated, a tie decided by a fixed
preference), or linear probing where its own sweep was faster by more than the noise.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from kernels import timing
from kernels.backend import memory
from kernels.harness.rows import versions
from kernels.harness.rows import Outcome
from kernels.hashtable import BEST_FIND_ITEMS, BEST_KERNEL, VARIANT_BY_NAME
from kernels.hashtable.layout import (BEST_CHOICES, BEST_FILTER_BITS, BEST_ROUNDS, BUCKET_WIDTHS, FILTER_VARIANT_BITS,
                                      ROUNDS_FILTER_BITS, SLOT_EMPTY, flag_words)
from kernels.hashtable.open_kernels import bucket_kernels, fill_kernel, linear_kernels
from kernels.hashtable.round_kernels import MET_TOMBSTONE, round_kernel
from kernels.launch import MAX_GRID, Launch, tuning

FILL_BLOCK = 256


@dataclass(frozen=True)
class Scheme:
    """How a variant lays out and probes its table: slots per bucket, hash functions, whether a group of
    bucket / 2 lanes probes a bucket (else one thread per key, a slot per probe) and whether the table keeps
    overflow flags (layout.py)."""

    bucket: int
    choices: int
    grouped: bool
    flagged: bool = False
    rounds: bool = False  # inserts in rounds, a launch per probe step (round_kernels.py); flagged buckets only
    filter_bits: int = 1  # first-step overflow flags per bucket (layout.py: more than one is a filter)

    @property
    def lanes(self) -> int:
        return self.bucket // 2 if self.grouped else 1

    def kernel(self, op: str, items: int = 1):
        items = items if op == "find" else 1  # only a find holds several keys in flight
        if not self.grouped:
            return linear_kernels(op, items)
        return bucket_kernels(op, self.bucket, self.choices, items, self.flagged, self.filter_bits)

    def describe(self) -> str:
        hashes = f"{self.choices} hash" + ("es" if self.choices > 1 else "")
        return (f"buckets of {self.bucket} slots, {hashes}" + (", overflow flags" if self.flagged else "")
                + (f", {self.filter_bits}-bit first-step filters" if self.filter_bits > 1 else "")
                + (", inserts in rounds by step" if self.rounds else ""))

    def inserter(self, op: str, grid: int, block: int, n: int):
        """A callable(keys, slots, flags, nbuckets, status) inserting (``op``: insert or insert-or-add) a
        batch of ``n`` keys: one launch, or with ``rounds`` one per step (its state array allocated here)."""
        if not self.rounds:
            kernel = self.kernel(op)[grid, block]
            return kernel if self.grouped else (lambda keys, slots, flags, nbuckets, status:
                                                kernel(keys, slots, nbuckets, status))
        place = round_kernel(op, self.bucket, self.choices, self.filter_bits)[grid, block]
        state = memory.empty(max(1, n), np.uint8)

        def insert(keys, slots, flags, nbuckets, status):
            for step in range(self.choices + 1):
                place(keys, slots, flags, state, nbuckets, np.int32(step), status)

        return insert


LINEAR = Scheme(1, 1, False)


def best_scheme(bucket: int, filter_bits: int = BEST_FILTER_BITS, rounds: bool = BEST_ROUNDS) -> Scheme:
    return Scheme(bucket, BEST_CHOICES, True, True, rounds=rounds, filter_bits=filter_bits)


def rounds_scheme(bucket: int, choices: int = BEST_CHOICES, filter_bits: int = ROUNDS_FILTER_BITS) -> Scheme:
    """best's table built in rounds (round_kernels.py)."""
    return Scheme(bucket, choices, True, True, rounds=True, filter_bits=filter_bits)


def run_linear_probing(problem, launch, backend, repeats):
    return run_scheme("linear-probing", LINEAR, problem, launch, backend, repeats)


def run_bucketed(problem, launch, backend, repeats):
    return run_scheme("bucketed", Scheme(problem.bucket, 1, True), problem, launch, backend, repeats)


def run_two_choice(problem, launch, backend, repeats):
    return run_scheme("two-choice", Scheme(problem.bucket, 2, True), problem, launch, backend, repeats)


def run_filtered(problem, launch, backend, repeats):
    return run_scheme("bucketed-filter", best_scheme(problem.bucket, FILTER_VARIANT_BITS, False), problem, launch,
                      backend, repeats)


def run_rounds(problem, launch, backend, repeats):
    return run_scheme("bucketed-rounds", rounds_scheme(problem.bucket), problem, launch, backend, repeats)


def run_best(problem, launch, backend, repeats):
    """Buckets with four hash functions and overflow flags at the user's launch (bucket width from --bucket),
    or on a GPU with no launch given the table tuned for this device, op, load and size: those buckets at the
    tuned width and block, or linear probing at its tuned block where its sweep was faster (a table with room
    to spare, whose keys mostly sit in their first slot, needs no bucket's second load or flags)."""
    if not backend.is_gpu or not launch.is_default:
        return run_scheme("best", best_scheme(problem.bucket), problem, launch, backend, repeats)
    choice, source = tuned(problem, backend)
    linear, linear_source = tuned_linear(problem, backend)
    if prefers_linear(choice, linear):
        scheme, run_launch = LINEAR, Launch(block=linear.block)
        note = f"tuned: linear probing, block {linear.block} ({linear_source}{linear.confirmation()})"
    else:
        scheme, run_launch = best_scheme(choice.items), _best_launch(problem, choice.block)
        note = f"tuned: bucket {choice.items} slots, block {choice.block} ({source}{choice.confirmation()})"
    out = run_scheme("best", scheme, problem, run_launch, backend, repeats)
    return dataclasses.replace(out, note=f"{note}; {out.note}")


def prefers_linear(buckets: tuning.Choice, linear: tuning.Choice) -> bool:
    """Whether best runs linear probing: only where its tuned time is ahead of the buckets' by more than
    either tuning's noise (a tie keeps the buckets, so that two runs choose alike)."""
    noise = max(buckets.noise or 0.0, linear.noise or 0.0)
    return linear.median_ms * (1 + noise) < buckets.median_ms


def _best_launch(problem, block: int) -> Launch:
    """best's launch at a tuned block: a find holds BEST_FIND_ITEMS keys per group in flight."""
    return Launch(block=block, items_per_thread=BEST_FIND_ITEMS if problem.op == "find" else None)


def tuned(problem, backend):
    """best's (Choice, 'cached' | 'tuned now'): bucket width (as the Choice's items) and block, swept over
    BUCKET_WIDTHS x tuning.SWEEP_BLOCKS. The sweep ranks launches by time and does not check each one's
    table (a check at 2^26 keys takes seconds); the row that follows checks the winner's."""
    def measure(bucket: int, block: int):
        if bucket not in BUCKET_WIDTHS:
            return None
        return _sweep_time(best_scheme(bucket), problem, _best_launch(problem, block), backend)

    return tuning.choose(_tuning_key(problem, backend), measure, items_range=(min(BUCKET_WIDTHS), max(BUCKET_WIDTHS)),
                         items=BUCKET_WIDTHS, confirm_top=tuning.CONFIRM_TOP)


def tuned_linear(problem, backend):
    """(Choice, source) of linear probing's block for best, swept over tuning.SWEEP_BLOCKS as :func:`tuned`
    sweeps the buckets (the Choice's items is the sweep's first, unused), cached under its own key."""
    first = tuning.SWEEP_ITEMS[0]

    def measure(items: int, block: int):
        return _sweep_time(LINEAR, problem, Launch(block=block), backend) if items == first else None

    return tuning.choose(_tuning_key(problem, backend, " linear probing"), measure, items=(first,),
                         confirm_top=tuning.CONFIRM_TOP)


def _sweep_time(scheme: Scheme, problem, launch: Launch, backend) -> float | None:
    """A sweep's median ms of best's table laid out as ``scheme`` at ``launch``, unchecked; None where the
    launch cannot run here (too large a block, or too many registers for it): not a candidate."""
    if launch.block > backend.limits.max_threads_per_block:
        return None
    try:
        with timing.measurement(timing.Policy()):  # a plain short timing, never cold
            return run_scheme("best", scheme, problem, launch, backend, tuning.SWEEP_REPEATS,
                              check=False).timing.median_ms
    except Exception:  # noqa: BLE001 - e.g. too many registers for this block: not a candidate
        return None


def _tuning_key(problem, backend, layout: str = "") -> str:
    # "confirmed": choices made by re-timing the sweep's leaders alternated (kernels.launch.tuning.confirm);
    # older entries, from a single sweep, are tuned again
    layout_knobs = f"filter {BEST_FILTER_BITS}" + (" rounds" if BEST_ROUNDS else "")
    what = f"confirmed, {layout_knobs} | {problem.op} load {problem.load:g}" + (f" absent {problem.absent:g}" if problem.op in ("find", "erase")
                                                     else f" multiplicity {problem.multiplicity:g}")
    return tuning.cache_key(backend.device_name, versions()["numba_cuda"], what + layout, problem.dtype,
                            problem.n, kernel=BEST_KERNEL)


def run_scheme(name: str, scheme: Scheme, problem, launch, backend, repeats, check: bool = True) -> Outcome:
    """Times ``problem``'s op on a table laid out as ``scheme`` and checks the result (unless ``check`` is
    False: then the Outcome's result is None)."""
    backend.activate()
    resolved = VARIANT_BY_NAME[name].resolve(launch, backend.limits, problem.n)
    block = resolved.block
    items = resolved.items if problem.op == "find" else 1
    grid = launch.resolved_grid(backend.limits.sm_count)
    if grid is None:  # a thread (a group of lanes) per key (per ``items`` keys): every key in flight at once
        grid = max(1, min(MAX_GRID, -(-problem.n * scheme.lanes // (block * items))))
    nbuckets = np.int64(problem.capacity // scheme.bucket)
    slots = memory.empty(problem.capacity, np.uint64)
    status = memory.zeros(1, np.int32)
    fill = fill_kernel()[_fill_grid(problem.capacity, backend), FILL_BLOCK]
    empty = np.uint64(SLOT_EMPTY)
    # the table's overflow flags, two bits per bucket (a word that is never read where the table has none)
    flags = memory.zeros(flag_words(int(nbuckets), scheme.filter_bits) if scheme.flagged else 1, np.uint32)
    fill_flags = fill_kernel()[_fill_grid(flags.size, backend), FILL_BLOCK]
    with_flags = (flags,) if scheme.grouped else ()  # linear probing's kernels take none

    def empty_table():
        fill(slots, empty)
        if scheme.flagged:
            fill_flags(flags, np.uint32(0))

    op = problem.op
    before = None
    if op in ("insert", "insert-or-add"):
        kernel = scheme.inserter(op, grid, block, problem.n)
        keys = problem.device_keys()
        before = empty_table

        def launch_once():
            kernel(keys, slots, flags, nbuckets, status)
    else:
        empty_table()
        table_keys = problem.device_table_keys()
        insert = scheme.inserter("insert", grid, block, table_keys.size)
        insert(table_keys, slots, flags, nbuckets, status)  # the table the batch starts from
        _check_room(status, "building the table")
        kernel = scheme.kernel(op, items)[grid, block]
        keys = problem.device_keys()
        if op == "find":
            answers = memory.empty(problem.n, np.uint32)

            def launch_once():
                kernel(keys, slots, *with_flags, answers, nbuckets)
        else:
            full = memory.empty_like(slots)
            memory.copy(full, slots)

            def before():  # an erase changes no flag: the slots alone are restored
                memory.copy(slots, full)

            def launch_once():
                kernel(keys, slots, *with_flags, nbuckets)

    elapsed = timing.time_kernel(backend, launch_once, repeats, before=before)
    _check_room(status, problem.op)
    if not check:
        return Outcome(None, elapsed, block, grid)
    if op == "find":
        result = problem.check_found(memory.to_host(answers))
    else:
        result = problem.check_open(memory.to_host(slots), scheme.bucket, scheme.choices,
                                    memory.to_host(flags) if scheme.flagged else None, scheme.filter_bits)
    layout = scheme.describe()
    if op == "find":
        layout += f", {items} key{'s' if items > 1 else ''} per {'group' if scheme.grouped else 'thread'} in flight"
    return Outcome(result, elapsed, block, grid, note=f"{problem.describe()}; {layout}")


def _fill_grid(slots: int, backend) -> int:
    top = 1024 if backend.is_gpu else 4  # the simulator runs every thread in Python: few, looping
    return max(1, min(top, -(-slots // FILL_BLOCK)))


def _check_room(status, what: str) -> None:
    code = memory.to_host(status)[0]
    if code == MET_TOMBSTONE:
        raise RuntimeError(f"{what}: the inserts in rounds met an erased slot (they build tables without any)")
    if code:
        raise RuntimeError(f"{what}: the table ran out of slots (tombstones filled its empty ones)")
