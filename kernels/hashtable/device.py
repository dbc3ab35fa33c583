"""Device helpers of the open-addressing kernels: a group's ballot, and (from
:mod:`kernels.device_functions.slot_loads`, where each compiler's spelling lives) slot loads of 8 and 16 bytes.

- ``ballot(mask, predicate)``: ``cuda.ballot_sync``, the bits of the lanes in ``mask`` (a group of
  neighbouring lanes, the lanes of one bucket) whose predicate is true.
- ``load_pair(slots, i)``: slots i and i + 1 (i even) with one 16-byte load (``ld.global.v2.u64``): a group
  of B / 2 lanes reads a bucket of B slots in one coalesced request.
- ``load_pair_fresh`` and ``load_fresh``: the same through L2 only (``ld.global.cg``, volatile), for the
  kernels that change the table: the L1 of an SM is not kept coherent with other SMs' atomics, and a
  probe that read a stale slot there again and again after a lost compare-and-swap would never end.

Numba's CUDA simulator has neither warp votes nor these loads, so there each is a Python function: the
loads plain reads, and the ballot a rendezvous of the mask's lanes (Python threads in the simulator), each
waiting until all have voted, as ``ballot_sync`` does. It knows a thread's block and lane from the
simulator's thread objects (numba-cuda's private names: kernels/backend/numba_private.py). A lane named in a mask
that never arrives is a bug on a GPU too; here it raises after a timeout instead of hanging.
Importing this module imports the active compiler's cuda: the kernel modules import it, on their first use.
"""

from __future__ import annotations

import threading
import weakref

from kernels.backend import simulator_active
from kernels.backend.compiler import cuda
from kernels.device_functions.slot_loads import load_fresh, load_pair, load_pair_fresh  # noqa: F401  (the kernels' names)

RENDEZVOUS_TIMEOUT_S = 60.0


# --- in the simulator ---------------------------------------------------------------------------------------

_meetings = weakref.WeakKeyDictionary()  # the simulator's block (its manager) -> {(warp, mask): _Meeting}
_meetings_lock = threading.Lock()


class _Meeting:
    """The lanes of one mask in one warp of one block, voting once per generation."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        self.cond = threading.Condition()
        self.bits = 0
        self.arrived = 0
        self.generation = 0
        self.result = 0


def _ballot_simulated(mask, predicate):
    from kernels.backend.numba_private import simulator_lane

    block_of_thread, thread_id = simulator_lane()
    mask = int(mask) & 0xFFFFFFFF
    lane = thread_id % 32
    if not (mask >> lane) & 1:
        raise RuntimeError(f"ballot_sync by lane {lane}, which its mask {mask:#010x} does not name")
    key = (thread_id // 32, mask)
    with _meetings_lock:
        block = _meetings.setdefault(block_of_thread, {})  # gone with the block: each launch starts afresh
        meeting = block.get(key)
        if meeting is None:
            meeting = block[key] = _Meeting(bin(mask).count("1"))
    with meeting.cond:
        generation = meeting.generation
        meeting.bits |= (1 if predicate else 0) << lane
        meeting.arrived += 1
        if meeting.arrived == meeting.lanes:
            # every lane of the mask voted: publish; the next vote of these lanes starts a new generation,
            # which cannot complete before each of them has read this one's result
            meeting.result, meeting.bits, meeting.arrived = meeting.bits, 0, 0
            meeting.generation += 1
            meeting.cond.notify_all()
        else:
            while meeting.generation == generation:
                if not meeting.cond.wait(RENDEZVOUS_TIMEOUT_S):
                    raise RuntimeError(f"ballot_sync: lanes of mask {mask:#010x} did not all arrive")
        return meeting.result


# --- on a GPU ---------------------------------------------------------------------------------------------


def _gpu_ballot():
    @cuda.jit(device=True)
    def ballot(mask, predicate):
        return cuda.ballot_sync(mask, predicate)

    return ballot


ballot = _ballot_simulated if simulator_active() else _gpu_ballot()
