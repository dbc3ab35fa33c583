"""Device helpers of the open-addressing kernels: a group's ballot, and slot loads of 8 and 16 bytes.

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
Importing this module imports numba.cuda: the kernel modules import it, on their first use.
"""

from __future__ import annotations

import threading
import weakref

from numba import cuda

from kernels.backend import simulator_active

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


def _load_pair_simulated(slots, i):
    return slots[i], slots[i + 1]


def _load_simulated(slots, i):
    return slots[i]


# --- on a GPU ---------------------------------------------------------------------------------------------


def _gpu_helpers():
    from llvmlite import ir
    from numba.cuda import types
    from numba.cuda.extending import intrinsic

    def _slot_pointer(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i = context.cast(builder, args[1], sig.args[1], types.int64)
        return builder.gep(ary.data, [i])

    def _uint64_array(arr):
        return isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C" and arr.dtype == types.uint64

    @intrinsic
    def load_pair(typingctx, slots, index):
        """slots[i], slots[i + 1] in one aligned 16-byte load (i even)."""
        if not _uint64_array(slots) or not isinstance(index, types.Integer):
            return None
        sig = types.UniTuple(types.uint64, 2)(slots, index)

        def codegen(context, builder, sig, args):
            vector = ir.VectorType(ir.IntType(64), 2)
            loaded = builder.load(builder.bitcast(_slot_pointer(context, builder, sig, args), vector.as_pointer()),
                                  align=16)
            lanes = [builder.extract_element(loaded, ir.Constant(ir.IntType(32), k)) for k in range(2)]
            return context.make_tuple(builder, sig.return_type, lanes)

        return sig, codegen

    @intrinsic
    def load_pair_fresh(typingctx, slots, index):
        """slots[i], slots[i + 1] in one 16-byte load through L2 (i even), never cached, moved or merged."""
        if not _uint64_array(slots) or not isinstance(index, types.Integer):
            return None
        sig = types.UniTuple(types.uint64, 2)(slots, index)

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            pair = ir.LiteralStructType([i64, i64])
            load = ir.InlineAsm(ir.FunctionType(pair, [i64.as_pointer()]), "ld.global.cg.v2.u64 {$0, $1}, [$2];",
                                "=l,=l,l", side_effect=True)
            loaded = builder.call(load, [_slot_pointer(context, builder, sig, args)])
            return context.make_tuple(builder, sig.return_type, [builder.extract_value(loaded, k) for k in range(2)])

        return sig, codegen

    @intrinsic
    def load_fresh(typingctx, slots, index):
        """slots[i] through L2, never cached, moved or merged."""
        if not _uint64_array(slots) or not isinstance(index, types.Integer):
            return None
        sig = types.uint64(slots, index)

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            load = ir.InlineAsm(ir.FunctionType(i64, [i64.as_pointer()]), "ld.global.cg.u64 $0, [$1];", "=l,l",
                                side_effect=True)
            return builder.call(load, [_slot_pointer(context, builder, sig, args)])

        return sig, codegen

    @cuda.jit(device=True)
    def ballot(mask, predicate):
        return cuda.ballot_sync(mask, predicate)

    return ballot, load_pair, load_pair_fresh, load_fresh


if simulator_active():
    ballot, load_pair, load_pair_fresh, load_fresh = (_ballot_simulated, _load_pair_simulated, _load_pair_simulated,
                                                      _load_simulated)
else:
    ballot, load_pair, load_pair_fresh, load_fresh = _gpu_helpers()
