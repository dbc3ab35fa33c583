"""How each GPU variant of the reduction is launched and timed: the host side of :mod:`kernels.reduction.gpu`
(device buffers, the launch configuration its rule resolves to, CUDA events around the launches) and best's
tuned launch per device and size."""

from __future__ import annotations

import dataclasses

import numpy as np

from kernels import timing
from kernels.backend import memory
from kernels.device_functions.vector_loads import check_aligned
from kernels.errors import InputError
from kernels.harness.rows import versions
from kernels.harness.rows import Outcome
from kernels.launch import Launch, resident_blocks, tuning
from kernels.reduction import BEST_KERNEL, BEST_LAUNCH, VARIANTS, gpu, gpu_harris
from kernels.timing import time_kernel

VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


def _prepare(name: str, problem, launch: Launch, backend):
    resolved = VARIANT_BY_NAME[name].resolve(launch, backend.limits, problem.n)
    d_a, d_b = problem.device_inputs(backend)
    return resolved.block, resolved.grid, resolved.items, d_a, d_b


def run_per_thread_partials(problem, launch, backend, repeats):
    block, grid, _, d_a, d_b = _prepare("per-thread-partials", problem, launch, backend)
    kernel = gpu.per_thread_partials_kernel(problem.op, problem.dtype)
    partials = memory.empty(grid * block, problem.accumulator)
    configured = kernel[grid, block]  # configured once: less Python work inside the timed launches
    elapsed = time_kernel(backend, lambda: configured(d_a, d_b, partials), repeats)
    total = memory.to_host(partials).sum()  # the host adds grid x block partials (not timed, as in the seed)
    return Outcome(problem.as_result(total), elapsed, block, grid)


def _block_partials_runner(name: str, factory_name: str, module=gpu):
    """Runner for the kernels that leave one partial per block for the host to add (seeds 000 b/c, 002, 003,
    Harris's kernels 2, 4 and 5)."""

    def run(problem, launch, backend, repeats):
        block, grid, _, d_a, d_b = _prepare(name, problem, launch, backend)
        kernel = getattr(module, factory_name)(problem.op, problem.dtype)
        partials = memory.empty(grid, problem.accumulator)
        configured = kernel[grid, block, 0, block * problem.accumulator.itemsize]  # dynamic shared memory
        elapsed = time_kernel(backend, lambda: configured(d_a, d_b, partials), repeats)
        total = memory.to_host(partials).sum()  # the host adds one partial per block (not timed)
        return Outcome(problem.as_result(total), elapsed, block, grid)

    return run


def run_two_kernel(problem, launch, backend, repeats):
    block, grid, _, d_a, d_b = _prepare("two-kernel", problem, launch, backend)
    first = gpu.block_sums_kernel(problem.op, problem.dtype)
    second = gpu.block_sums_kernel("sum", problem.accumulator.name)  # the same kernel, over the 64-bit partials
    partials = memory.empty(grid, problem.accumulator)
    out = memory.empty(1, problem.accumulator)
    shared_bytes = block * problem.accumulator.itemsize
    first_pass, second_pass = first[grid, block, 0, shared_bytes], second[1, block, 0, shared_bytes]

    def launch_both():
        first_pass(d_a, d_b, partials)
        second_pass(partials, partials, out)

    elapsed = time_kernel(backend, launch_both, repeats)
    return Outcome(problem.as_result(memory.to_host(out)[0]), elapsed, block, grid)


def run_last_block(problem, launch, backend, repeats):
    block, grid, _, d_a, d_b = _prepare("last-block", problem, launch, backend)
    kernel = gpu.last_block_kernel(problem.op, problem.dtype)
    partials = memory.empty(grid, problem.accumulator)
    out = memory.empty(1, problem.accumulator)
    tickets = memory.zeros(1, np.int32)  # the last block resets it for the next launch
    configured = kernel[grid, block, 0, block * problem.accumulator.itemsize]
    elapsed = time_kernel(backend, lambda: configured(d_a, d_b, partials, out, tickets), repeats)
    return Outcome(problem.as_result(memory.to_host(out)[0]), elapsed, block, grid)


def _two_slot_runner(name: str, kernel_for):
    """Runner for the kernels that add atomically into a two-slot result (see kernels.reduction.gpu);
    ``kernel_for(op, dtype, items)`` returns the compiled kernel."""

    def run(problem, launch, backend, repeats):
        block, grid, items, d_a, d_b = _prepare(name, problem, launch, backend)
        kernel = kernel_for(problem.op, problem.dtype, items)
        result = memory.zeros(2, problem.accumulator)
        if VARIANT_BY_NAME[name].launch.resident_grid and backend.is_gpu and launch.grid is None and launch.grid_sm is None:
            grid = resident_blocks(kernel, (d_a, d_b, result, 0), block) or grid
        configured = kernel[grid, block]
        slot = [1]

        def launch_once():
            slot[0] ^= 1  # add into the slot the previous launch zeroed
            configured(d_a, d_b, result, slot[0])

        elapsed = time_kernel(backend, launch_once, repeats)
        return Outcome(problem.as_result(memory.to_host(result)[slot[0]]), elapsed, block, grid)

    return run


run_block_serial = _block_partials_runner("block-serial", "block_serial_kernel")
run_tree_mask = _block_partials_runner("tree-mask", "tree_mask_kernel")
run_interleaved_divergent = _block_partials_runner("interleaved-divergent", "interleaved_divergent_kernel")
run_sequential = _block_partials_runner("sequential", "sequential_kernel")
run_interleaved_strided = _block_partials_runner("interleaved-strided", "interleaved_strided_kernel", gpu_harris)
run_first_add_load = _block_partials_runner("first-add-load", "first_add_load_kernel", gpu_harris)
run_unroll_last_warp = _block_partials_runner("unroll-last-warp", "unroll_last_warp_kernel", gpu_harris)


def _unrolled_runner(name: str):
    """Runner for Harris's kernels 6 and 7: the kernel compiled for the launch's block size (static shared
    memory), one partial per block for the host to add."""

    def run(problem, launch, backend, repeats):
        block, grid, _, d_a, d_b = _prepare(name, problem, launch, backend)
        kernel = gpu_harris.complete_unroll_kernel(problem.op, problem.dtype, block)
        partials = memory.empty(grid, problem.accumulator)
        configured = kernel[grid, block]
        elapsed = time_kernel(backend, lambda: configured(d_a, d_b, partials), repeats)
        total = memory.to_host(partials).sum()
        return Outcome(problem.as_result(total), elapsed, block, grid)

    return run


run_complete_unroll = _unrolled_runner("complete-unroll")
run_multiple_elements = _unrolled_runner("multiple-elements")
run_warp_shuffle = _two_slot_runner("warp-shuffle", lambda op, dtype, items: gpu.warp_shuffle_kernel(op, dtype))
_run_best_tiles = _two_slot_runner("best", gpu.best_kernel)


def _run_best_at(problem, launch, backend, repeats):
    if backend.is_gpu:
        check_aligned(problem.device_inputs(backend), "best")
    return _run_best_tiles(problem, launch, backend, repeats)


def run_best(problem, launch, backend, repeats):
    """best at the user's launch, or (on a GPU, no launch given) at the tuned one for this device and size."""
    if not backend.is_gpu or not launch.is_default:
        return _run_best_at(problem, launch, backend, repeats)
    # checked before the sweep: the sweep drops launches that fail, so it would hide the input's fault
    check_aligned(problem.device_inputs(backend), "best")
    choice, source = tuned_best_launch(problem, backend)
    out = _run_best_at(problem, Launch(block=choice.block, items_per_thread=choice.items), backend, repeats)
    return dataclasses.replace(out, note=choice.note(source))


def tuned_best_launch(problem, backend):
    """best's (Choice, 'cached' | 'tuned now') for this device, numba-cuda version, op, dtype and size."""
    def measure(items: int, block: int):
        if block > backend.limits.max_threads_per_block:
            return None
        try:
            with timing.measurement(timing.Policy()):  # a plain short timing, never cold
                out = _run_best_at(problem, Launch(block=block, items_per_thread=items), backend, tuning.SWEEP_REPEATS)
        except InputError:
            raise  # the input's fault, not this launch's: every launch would fail the same way
        except Exception:  # noqa: BLE001 - e.g. too many registers for this block size: not a candidate
            return None
        return out.timing.median_ms if problem.verify(out.result)[0] else None

    key = tuning.cache_key(backend.device_name, versions()["numba_cuda"], problem.op, problem.dtype, problem.n,
                           kernel=BEST_KERNEL)
    return tuning.choose(key, measure, items_range=BEST_LAUNCH.items[1:])
