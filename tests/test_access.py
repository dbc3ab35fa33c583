"""The access trace (kernels/access, `raytracer-app access`): tiny kernels whose warp requests are worked out
by hand (sectors, bank conflicts, broadcasts, inactive lanes) traced in the simulator's child process, a
device function's line, a user's variant file, the Harris reductions' conflicting line, the JSON file, Stop,
the one module of simulator internals and its version check, and bad input as one line with exit status 2.
The runs go through the same child process the app uses, so they work in a GPU session too."""

import inspect
import json
import threading
import time
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import cuda

from kernels.access import files, measured, notes
from kernels.access import model as M
from kernels.access.planning import plan
from kernels.access.tracejob import TraceJob
from kernels.access.runner import trace
from kernels.device_functions.callees import for_kernels
from kernels.device_functions.vector_loads import load_vector
from kernels.backend.child import Cancelled, SimulatorProcess
from raytracer_app.cli import main

MODULE = __name__
ROOT = Path(__file__).resolve().parents[1]


# --- tiny kernels with answers worked out by hand ------------------------------------------------------------


@cuda.jit
def copy_strided(src, dst, stride):
    i = cuda.threadIdx.x
    dst[i] = src[i * stride]


@cuda.jit
def copy_some(src, dst):
    i = cuda.threadIdx.x
    if i < 40:
        dst[i] = src[i]


@cuda.jit
def probe_then_claim(table, starts, claimed):
    """Each thread walks from its start to the first empty slot (data-dependent lengths), then claims it."""
    i = cuda.threadIdx.x
    slot = starts[i]
    while True:
        if table[slot] == 0:
            claimed[i] = cuda.atomic.cas(table, slot, 0, i + 1)
            break
        slot += 1


@cuda.jit
def claim_once(table, starts, claimed):
    i = cuda.threadIdx.x
    claimed[i] = cuda.atomic.cas(table, starts[i], 0, i + 1)
    for k in range(2):
        cuda.atomic.add(table, starts[i] + 1, k)


@cuda.jit
def branch_in_a_loop(src, dst):
    """Every thread runs the loop the same number of times; odd threads load once more before the store."""
    i = cuda.threadIdx.x
    for step in range(3):
        value = src[i]
        if i % 2:
            value += src[i + 32]
        dst[step * 32 + i] = value


@cuda.jit(device=True)
def load_one(a, i):
    return a[i]


@cuda.jit
def through_device_function(src, dst):
    i = cuda.threadIdx.x
    dst[i] = load_one(src, i)


@numba.njit
def first_of(a):
    return a[0]


_first_of = for_kernels(first_of)  # a shared @numba.jit function as kernels call it (plain Python in the simulator)


@cuda.jit
def through_shared_function(src, dst):
    dst[cuda.threadIdx.x] = _first_of(src)


@cuda.jit
def shared_int32(out, stride):
    buf = cuda.shared.array(1024, numba.int32)
    i = cuda.threadIdx.x
    buf[i * stride] = i
    cuda.syncthreads()
    out[i] = buf[i * stride]


@cuda.jit
def shared_int64(out):
    buf = cuda.shared.array(32, numba.int64)
    i = cuda.threadIdx.x
    buf[i] = i
    cuda.syncthreads()
    out[i] = buf[i]


@cuda.jit
def atomics_and_a_local_array(counter, out):
    buf = cuda.shared.array(32, numba.int32)
    tmp = cuda.local.array(2, numba.int32)  # local memory: not recorded
    i = cuda.threadIdx.x
    tmp[0] = i % 4
    cuda.atomic.add(buf, tmp[0], 1)
    out[i] = cuda.atomic.add(counter, 0, 1)


@cuda.jit
def vector_copy(words, out):
    i = cuda.threadIdx.x
    v = load_vector(words, i)
    out[i] = v[0] + v[1] + v[2] + v[3]


CONSTANT_TABLE = np.arange(64, dtype=np.float32)


@cuda.jit
def constant_reads(out):
    table = cuda.const.array_like(CONSTANT_TABLE)
    i = cuda.threadIdx.x
    out[i] = table[i % 2]


@cuda.jit
def spin(out):
    x = 0
    while x >= 0:  # never ends, and touches no memory: only Stop ends the trace
        x += 1


def consecutive_int32():
    copy_strided[1, 32](np.arange(32 * 32, dtype=np.int32), np.zeros(32, np.int32), 1)


def stride_two_int32():
    copy_strided[1, 32](np.arange(32 * 32, dtype=np.int32), np.zeros(32, np.int32), 2)


def one_address():
    copy_strided[1, 32](np.arange(32 * 32, dtype=np.int32), np.zeros(32, np.int32), 0)


def forty_of_48_lanes():
    copy_some[1, 48](np.arange(64, dtype=np.int32), np.zeros(64, np.int32))


def all_of_40_lanes():
    copy_some[1, 40](np.arange(64, dtype=np.int32), np.zeros(64, np.int32))


def probing():
    # threads 0-3 start on runs of 4, 3, 2 and 1 occupied slots (each run its own empty slot after it); the
    # other 28 start on empty slots of their own
    table = np.zeros(128, np.int32)
    table[0:4] = table[8:11] = table[16:18] = table[24] = 1
    starts = np.array([0, 8, 16, 24] + [64 + i for i in range(4, 32)], np.int32)
    probe_then_claim[1, 32](table, starts, np.zeros(32, np.int32))


def claiming_once():
    claim_once[1, 32](np.zeros(128, np.int32), np.arange(32, dtype=np.int32) * 4, np.zeros(32, np.int32))


def branching():
    branch_in_a_loop[1, 32](np.arange(64, dtype=np.int32), np.zeros(96, np.int32))


def device_function():
    through_device_function[1, 32](np.arange(32, dtype=np.float32), np.zeros(32, np.float32))


def shared_function():
    through_shared_function[1, 32](np.arange(32, dtype=np.float32), np.zeros(32, np.float32))


def shared_stride_1():
    shared_int32[1, 32](np.zeros(32, np.int32), 1)


def shared_stride_2():
    shared_int32[1, 32](np.zeros(32, np.int32), 2)


def shared_stride_32():
    shared_int32[1, 32](np.zeros(32, np.int32), 32)


def shared_int64_stride_1():
    shared_int64[1, 32](np.zeros(32, np.int64))


def atomics():
    atomics_and_a_local_array[1, 32](np.zeros(1, np.int32), np.zeros(32, np.int32))


def vector_loads():
    vector_copy[1, 32](np.arange(128, dtype=np.int32), np.zeros(32, np.int32))


def constant_memory():
    constant_reads[1, 32](np.zeros(32, np.float32))


def constant_spheres():
    from kernels import backend
    from kernels.spheres.renderer import SphereRenderer
    from kernels.spheres.scene import generate_scene

    SphereRenderer(backend.resolve("sim")).render(generate_scene(2, seed=1), (16, 16), memory="constant")


def spin_forever():
    spin[1, 32](np.zeros(1, np.int32))


@pytest.fixture(scope="module")
def child():
    process = SimulatorProcess(simulate=True, name="access-test")
    yield process
    process.end()


def traced(child, function: str, blocks: int = 8) -> M.AccessResult:
    return trace(TraceJob("entry", entry=(MODULE, function), blocks=blocks), child=child)


def only_line(result, space: str, op: str) -> M.LineAccess:
    """The one line of the one kernel that has requests of this kind."""
    (kernel,) = result.kernels
    lines = [ln for ln in kernel.lines if ln.metrics.get(M.requests_metric(space, op))]
    assert len(lines) == 1, [(ln.line, ln.metrics) for ln in kernel.lines]
    return lines[0]


def line_of(function, text: str) -> int:
    source, first = inspect.getsourcelines(function)
    return first + next(i for i, s in enumerate(source) if text in s)


@pytest.mark.parametrize("function,sectors", [("consecutive_int32", 4), ("stride_two_int32", 8), ("one_address", 1)])
def test_global_loads_of_one_warp(child, function, sectors):
    line = only_line(traced(child, function), M.GLOBAL, M.LD)
    assert line.line == line_of(copy_strided, "dst[i] = src[i * stride]")
    assert line.metrics[M.requests_metric(M.GLOBAL, M.LD)] == 1
    assert line.metrics[M.sectors_metric(M.LD)] == sectors
    assert line.metrics[M.lanes_key(M.GLOBAL, M.LD)] == 32
    (request,) = line.requests_of(M.GLOBAL, M.LD)
    assert len(request.sectors()) == sectors and request.active == 32


def test_inactive_lanes_are_not_counted(child):
    # 48 threads, 40 of them load: warp 0 all 32 lanes (4 sectors), warp 1 lanes 0-7 (elements 32-39: 1 sector)
    line = only_line(traced(child, "forty_of_48_lanes"), M.GLOBAL, M.LD)
    assert line.metrics[M.requests_metric(M.GLOBAL, M.LD)] == 2
    assert line.metrics[M.lanes_key(M.GLOBAL, M.LD)] == 40
    assert line.metrics[M.sectors_metric(M.LD)] == 5
    second = [r for r in line.requests if r.warp == 1][0]
    assert [lane for lane, a in enumerate(second.lanes) if a is not None] == list(range(8))
    assert notes.NOTE_CONDITIONAL in line.notes  # 8 of warp 1's 16 threads: a GPU may count its idle ones


def test_a_partial_last_warp_whose_threads_all_take_part_is_no_conditional_access(child):
    # 40 threads, all of them load: warp 1 has 8 threads, and all 8 make the access
    line = only_line(traced(child, "all_of_40_lanes"), M.GLOBAL, M.LD)
    assert line.metrics[M.lanes_key(M.GLOBAL, M.LD)] == 40
    assert notes.NOTE_CONDITIONAL not in line.notes
    assert notes.NOTE_CONDITIONAL not in only_line(traced(child, "consecutive_int32"), M.GLOBAL, M.LD).notes


def test_a_loop_threads_leave_at_different_times_and_a_retried_compare_and_swap_are_noted(child):
    """Threads 0-3 walk over 4, 3, 2 and 1 occupied slots (5, 4, 3 and 2 loads), the other 28 claim their first
    slot. The trace groups each thread's first compare-and-swap into one request of
    32 lanes; a GPU issues it once per loop iteration for the threads that reach it then, and the line says
    so. A branch inside a loop all threads run equally often is no such case."""
    (kernel,) = traced(child, "probing").kernels
    claim = next(ln for ln in kernel.lines if ln.line == line_of(probe_then_claim, "cuda.atomic.cas"))
    assert claim.metrics[M.requests_metric(M.GLOBAL, M.ATOM)] == 1
    assert claim.metrics[M.lanes_key(M.GLOBAL, M.ATOM)] == 32
    assert notes.NOTE_LOOP_SKEW in claim.notes and notes.NOTE_CAS_RETRY in claim.notes
    walk = next(ln for ln in kernel.lines if ln.line == line_of(probe_then_claim, "if table[slot] == 0"))
    assert walk.metrics[M.requests_metric(M.GLOBAL, M.LD)] == 5  # the n-th loads: 32, 4, 3, 2 and 1 lanes
    assert walk.metrics[M.lanes_key(M.GLOBAL, M.LD)] == 32 + 4 + 3 + 2 + 1
    assert notes.NOTE_LOOP_SKEW not in walk.notes  # each thread's n-th load follows its (n-1)-th
    (kernel,) = traced(child, "claiming_once").kernels  # a compare-and-swap no loop retries; an add in a loop
    assert all(notes.NOTE_CAS_RETRY not in ln.notes and notes.NOTE_LOOP_SKEW not in ln.notes for ln in kernel.lines)
    assert len(kernel.lines) == 2
    (kernel,) = traced(child, "branching").kernels
    assert all(notes.NOTE_LOOP_SKEW not in ln.notes for ln in kernel.lines)
    store = next(ln for ln in kernel.lines if ln.line == line_of(branch_in_a_loop, "dst[step * 32 + i]"))
    assert store.metrics[M.requests_metric(M.GLOBAL, M.ST)] == 3


@pytest.mark.parametrize("function,conflicts",
                         [("shared_stride_1", 0), ("shared_stride_2", 1), ("shared_stride_32", 31)])
def test_shared_int32_bank_conflicts(child, function, conflicts):
    result = traced(child, function)
    for op in (M.LD, M.ST):
        line = only_line(result, M.SHARED, op)
        assert line.metrics[M.requests_metric(M.SHARED, op)] == 1
        assert line.metrics[M.wavefronts_metric(op)] == conflicts + 1
        assert line.metrics[M.conflicts_metric(op)] == conflicts


def test_atomics_count_in_their_space_and_local_arrays_not_at_all(child):
    result = traced(child, "atomics")
    (kernel,) = result.kernels
    assert [ln.line for ln in kernel.lines] == [line_of(atomics_and_a_local_array, "cuda.atomic.add(buf"),
                                                line_of(atomics_and_a_local_array, "out[i] =")]
    shared, global_ = kernel.lines
    assert shared.metrics[M.requests_metric(M.SHARED, M.ATOM)] == 1
    assert M.requests_metric(M.SHARED, M.LD) not in shared.metrics
    assert shared.metrics[M.lanes_key(M.SHARED, M.ATOM)] == 32
    assert global_.metrics[M.requests_metric(M.GLOBAL, M.ATOM)] == 1  # its result is used: an ATOM, not a RED
    assert global_.metrics[M.sectors_metric(M.ATOM)] == 1
    assert global_.metrics[M.sectors_metric(M.ST)] == 4


def test_what_the_compiler_does_differently_is_modelled_and_noted(child):
    # load_vector: the simulator reads 4 elements, the GPU one 16-byte ld.global.v4 per lane: 512 bytes
    vector = only_line(traced(child, "vector_loads"), M.GLOBAL, M.LD)
    assert vector.line == line_of(vector_copy, "v = load_vector(words, i)")
    assert vector.metrics[M.requests_metric(M.GLOBAL, M.LD)] == 1 and vector.metrics[M.sectors_metric(M.LD)] == 16
    assert vector.requests[0].width == 16 and any("16-byte vector load" in n for n in vector.notes)
    # constant memory: not load/store-unit requests; two distinct addresses are two constant-cache passes
    constant = only_line(traced(child, "constant_memory"), M.CONST, M.LD)
    assert constant.metrics[M.CONST_ADDRESSES] == 2 and constant.metrics[M.requests_metric(M.CONST, M.LD)] == 1
    assert M.requests_metric(M.GLOBAL, M.LD) not in constant.metrics
    assert any("constant cache" in n for n in constant.notes)


def test_the_sphere_kernels_constant_memory_is_traced_as_such(child):
    (kernel,) = traced(child, "constant_spheres").kernels
    assert kernel.name == "render_spheres_constant"
    reads = [ln for ln in kernel.lines if ln.metrics.get(M.requests_metric(M.CONST, M.LD))]
    assert reads and all(ln.file == "kernels/spheres/shading.py" for ln in reads)
    assert all(any("constant cache" in n for n in ln.notes) for ln in reads)
    assert not any(ln.metrics.get(M.requests_metric(M.GLOBAL, M.LD)) for ln in kernel.lines)  # only the image is global
    assert kernel.per_request("sectors_per_request") == 4.0  # a warp stores two rows of 16 pixels: 2 x 2 sectors


def test_shared_int64_needs_two_wavefronts_without_a_conflict(child):
    line = only_line(traced(child, "shared_int64_stride_1"), M.SHARED, M.LD)
    assert line.metrics[M.wavefronts_metric(M.LD)] == 2
    assert line.metrics[M.conflicts_metric(M.LD)] == 0
    assert any("8-byte lanes" in n for n in line.notes)


def test_eight_byte_lanes_in_both_half_warps_conflict_when_loaded_not_when_stored():
    """Lanes 0, 2, ..., 30 reading int64 elements 0, 2, ..., 30 of shared memory (a tree reduction's first
    step: lane 2k at byte 16k, banks 4k and 4k + 1 mod 32): lanes 0 and 16 meet in banks 0 and 1 with
    different words, so a whole warp's load takes two wavefronts where its 32 four-byte words need one; a
    store serves each half-warp on its own, one wavefront each. A broadcast load needs one."""
    lanes = [16 * (lane // 2) if lane % 2 == 0 else None for lane in range(32)]
    assert M.wavefronts(lanes, 8, M.LD) == (2, 1)
    assert M.wavefronts(lanes, 8, M.ST) == (2, 2)
    assert M.wavefronts([0] * 32, 8, M.LD) == (1, 1)
    assert M.wavefronts(list(range(0, 256, 8)), 8, M.LD) == (2, 2)  # 32 lanes, consecutive: no conflict


def test_a_device_functions_access_is_its_own_line(child):
    line = only_line(traced(child, "device_function"), M.GLOBAL, M.LD)
    assert line.line == line_of(load_one, "return a[i]")
    assert line.file == "tests/test_access.py" and line.source == "return a[i]"


def test_a_shared_jit_functions_access_is_its_own_line(child):
    line = only_line(traced(child, "shared_function"), M.GLOBAL, M.LD)
    assert line.line == line_of(first_of, "return a[0]")
    assert line.metrics[M.sectors_metric(M.LD)] == 1  # every lane reads element 0


def test_harris_kernel_2_conflicts_where_sequential_does_not(child):
    def shared_line(variant, text):
        result = trace(plan("reduction", variant, n=1024, blocks=2), child=child)
        (kernel,) = result.kernels
        line = kernel.line_containing(text)
        return kernel, line

    strided, line = shared_line("interleaved-strided", "shared[index] += shared[index + stride]")
    # the access under `index = 2 * stride * t`: threads 0..k active, their 8-byte slots 16*s bytes apart
    assert line.file == "kernels/reduction/gpu_harris.py"
    before = (ROOT / line.file).read_text().splitlines()[line.line - 4:line.line - 1]
    assert any("index = 2 * stride * t" in text for text in before), before
    assert line.metrics[M.conflicts_metric(M.LD)] > 0 and line.metrics[M.conflicts_metric(M.ST)] > 0
    sequential, seq_line = shared_line("sequential", "shared[t] += shared[t + stride]")
    assert seq_line.metrics[M.conflicts_metric(M.LD)] == 0 and seq_line.metrics[M.conflicts_metric(M.ST)] == 0
    assert strided.sampled == (0, 7) and strided.blocks_total == 1024 // 128
    assert "of 8 only" in strided.scope


USER_FILE = '''\
"""Strided loads, one atomic per warp request."""
import numba
from numba import cuda

from kernels.launch import LaunchRule

TARGET = "reduction"
NAME = "my-strided"
SUPPORTS = {"ops": ("sum",), "dtypes": ("int32",)}
LAUNCH = LaunchRule(block=32, grid=1)


@cuda.jit
def kernel(a, out):
    i = cuda.threadIdx.x
    total = numba.int64(a[2 * i])
    cuda.atomic.add(out, 0, total)


def run(a, b, out, launch, op):
    kernel[launch.grid, launch.block](a, out)
'''


def test_a_user_variant_file_is_traced_at_its_own_lines(child, tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(USER_FILE)
    result = trace(plan("reduction", variant_file=str(path), n=64), child=child)
    assert result.variant == "my-strided" and result.variant_file == str(path)
    loads = only_line(result, M.GLOBAL, M.LD)
    assert (loads.file, loads.line) == (str(path), 16)
    assert loads.metrics[M.sectors_metric(M.LD)] == 8 and loads.metrics[M.requests_metric(M.GLOBAL, M.LD)] == 1
    atomic = only_line(result, M.GLOBAL, M.RED)  # its result is unused: the GPU issues a RED
    assert atomic.line == 17 and atomic.metrics[M.sectors_metric(M.RED)] == 1
    assert atomic.metrics[M.lanes_key(M.GLOBAL, M.RED)] == 32


def test_the_json_file_has_the_schema(child, tmp_path):
    result = trace(plan("reduction", "sequential", n=1024, blocks=2), child=child)
    out = tmp_path / "access.json"
    files.write(out, result, "--json", ["raytracer-app", "access", "reduction", "sequential"])
    doc = files.read(out, "--json")
    for key in ("date", "device", "versions", "commit", "command", "sampled_blocks", "kernels", "notes"):
        assert key in doc
    assert doc["schema"] == files.SCHEMA and doc["command"][1] == "access"
    assert doc["sampled_blocks"]["per_kernel"]["sequential"] == {"traced": 2, "of": 4, "blocks": [0, 3]}
    (kernel,) = doc["kernels"]
    assert kernel["name"] == "sequential"
    assert kernel["totals"][M.requests_metric(M.GLOBAL, M.LD)] == sum(
        ln.get(M.requests_metric(M.GLOBAL, M.LD), 0) for ln in kernel["lines"])
    line = next(ln for ln in kernel["lines"] if ln["source"] == "shared[t] += shared[t + stride]")
    assert line["file"] == "kernels/reduction/gpu.py" and isinstance(line["line"], int)
    assert line[M.conflicts_metric(M.LD)] == 0 and line["examples"][0]["space"] == "shared"
    json.dumps(doc)  # plain JSON all through


def test_a_block_that_overflows_the_buffer_is_refused_in_one_line(child):
    from kernels.errors import InputError

    job = TraceJob("entry", entry=(MODULE, "consecutive_int32"), segment_records=10)
    with pytest.raises(InputError, match="more than 10 memory accesses between two barriers"):
        trace(job, child=child)


@pytest.mark.slow
def test_stop_ends_a_traced_run_within_a_second():
    process = SimulatorProcess(simulate=True, name="access-stop-test")
    stop_at = [None]
    failure: list = []

    def run():
        try:
            trace(TraceJob("entry", entry=(MODULE, "spin_forever")), lambda: stop_at[0] is not None
                  and time.monotonic() >= stop_at[0], child=process)
        except Cancelled:
            failure.append("cancelled")

    worker = threading.Thread(target=run)
    worker.start()
    try:
        time.sleep(3.0)  # the child has started and is spinning in the kernel
        assert worker.is_alive()
        stop_at[0] = time.monotonic()
        worker.join(5.0)
        ended = time.monotonic() - stop_at[0]
        assert failure == ["cancelled"] and ended < 1.0, ended
        assert not process.running()
    finally:
        process.end()


# --- the plan, the hooks' one module, the joins: no child needed -----------------------------------------------


def test_blocks_are_sampled_first_few_and_a_spread():
    assert M.sample_blocks(5, 8) == (0, 1, 2, 3, 4)
    assert M.sample_blocks(512, 8) == (0, 1, 2, 3, 4, 173, 342, 511)
    assert M.sample_blocks(100, 1) == (0,)
    assert M.sample_blocks(100, 2) == (0, 99)


def test_the_wavefront_model_by_hand():
    words = lambda stride, width=4: [lane * stride * width for lane in range(32)]  # noqa: E731
    assert M.wavefronts(words(1), 4) == (1, 1)
    assert M.wavefronts([0] * 32, 4) == (1, 1)  # a broadcast
    assert M.wavefronts(words(1, 8), 8) == (2, 2)
    assert M.wavefronts(words(2, 8), 8) == (4, 2)  # 16-byte stride: lanes l and l+8 share banks in a half-warp
    assert M.wavefronts(words(1, 16), 16) == (4, 4)
    assert M.wavefronts([None] * 31 + [0], 8) == (1, 1)
    slots = M.bank_slots(words(2), 4)
    assert slots[0] == (0, 0) and slots[16] == (0, 1)
    assert M.sectors([1, 31, 33, None], 4) == {0, 1}


def test_a_lines_heat_figures_pool_its_access_kinds():
    line = M.LineAccess("k.py", 1, "")
    M.add_request(line.metrics, M.GLOBAL, M.LD, [8 * lane for lane in range(32)], 4)  # 8 sectors
    M.add_request(line.metrics, M.GLOBAL, M.ST, [4 * lane for lane in range(16)] + [None] * 16, 4)  # 2 sectors
    M.add_request(line.metrics, M.SHARED, M.LD, [128 * lane for lane in range(32)], 4)  # 32 wavefronts
    assert line.per_request("sectors_per_request") == 5.0
    assert line.per_request("conflicts_per_request") == 31.0
    assert line.per_request("lanes_per_request") == (32 + 16 + 32) / 3
    assert M.LineAccess("k.py", 2, "").per_request("sectors_per_request") is None


def test_only_sim_hooks_names_the_simulators_internals():
    package = Path(files.__file__).parent
    private = ("FakeCUDA", "BlockManager", "FakeWithinKernel", "_dynshared", "_allocations", "kernelapi")
    for path in package.glob("*.py"):
        if path.name != "sim_hooks.py":
            text = path.read_text()
            assert not [p for p in private if p in text], path.name


def test_another_numba_cuda_version_is_refused_in_one_line():
    from kernels.access import sim_hooks
    from kernels.errors import InputError

    sim_hooks.check_version("0.30.4")
    with pytest.raises(InputError) as caught:
        sim_hooks.check_version("0.31.0")
    assert "\n" not in str(caught.value) and "0.31.0" in str(caught.value)


def test_the_hooks_are_undone_after_a_run():
    from kernels import backend
    from kernels.access import recorder, sim_hooks

    if not backend.simulator_active():
        pytest.skip("this session runs on a GPU: the hooks patch the simulator only")
    from numba.cuda.simulator import kernel as sim_kernel

    before = sim_kernel.FakeCUDAKernel.__call__, sim_kernel.BlockManager
    with sim_hooks.installed(recorder.Tracer(1)):
        assert sim_kernel.FakeCUDAKernel.__call__ is not before[0]
    assert (sim_kernel.FakeCUDAKernel.__call__, sim_kernel.BlockManager) == before
    assert recorder.active() is None


FAKE_REPORT = [  # the counters' report rows of one variant window, as kernels.counters.report.read gives them
    {"name": "kernels::reduction::gpu_harris::interleaved_strided_kernel::<locals>::interleaved_strided"
             "[abi:v1](Array<int, 1, C, mutable, aligned>)", "mangled": "_ZN1",
     "metrics": {M.requests_metric(M.SHARED, M.LD): 1024.0, M.wavefronts_metric(M.LD): 4992.0,
                 M.conflicts_metric(M.LD): 3584.0, M.requests_metric(M.GLOBAL, M.LD): 256.0,
                 M.sectors_metric(M.LD): 1024.0, "gpu__time_duration.sum": 5000.0}},
    {"name": "kernels::reduction::gpu::block_sums_kernel::<locals>::block_sums[abi:v1](Array<long>)",
     "mangled": "_ZN2", "metrics": {M.requests_metric(M.GLOBAL, M.LD): 8.0}},
    {"name": "kernels::reduction::gpu::block_sums_kernel::<locals>::block_sums[abi:v1](Array<int>)",
     "mangled": "_ZN3", "metrics": {M.requests_metric(M.GLOBAL, M.LD): 2.0}},
]


def test_measured_figures_are_labelled_and_joined_as_the_trace_names_kernels():
    values = measured.by_kernel(FAKE_REPORT)
    assert list(values) == ["interleaved_strided", "block_sums", "block_sums#2"]
    assert "gpu__time_duration.sum" not in values["interleaved_strided"]
    line = M.LineAccess("k.py", 3, "shared[index] += shared[index + stride]")
    M.add_request(line.metrics, M.SHARED, M.LD, [16 * lane for lane in range(32)], 8)  # 4 wavefronts, 2 conflicts
    for _ in range(4):
        M.add_request(line.metrics, M.GLOBAL, M.LD, [4 * lane for lane in range(32)], 4)
    kernel = M.KernelAccess("interleaved_strided", (8, 1, 1), (128, 1, 1), 0, 8, (0, 1), [line])
    rows = {c.quantity: c for c in measured.compare(kernel, values["interleaved_strided"])}
    assert rows["global loads: sectors/request"].predicted == 4.0
    assert rows["global loads: sectors/request"].measured == 4.0 and rows["global loads: sectors/request"].agrees
    conflicts = rows["shared loads: conflicts/request"]
    assert (conflicts.predicted, conflicts.measured) == (2.0, 3.5) and conflicts.agrees is False
    assert rows["shared loads: wavefronts/request"].measured == 4.875
    scaled = next(c for q, c in rows.items() if q.startswith("global loads: requests"))
    assert scaled.predicted == 16.0 and scaled.measured == 256.0 and scaled.agrees is None  # x4: 2 of 8 blocks
    assert measured.Compared("x", 0.05, 0.12, True).agrees  # under 1: within 0.1
    assert not measured.Compared("x", 1.0, 1.2, True).agrees  # over 1: within 10%


def test_the_table_script_joins_measured_files():
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import access_table

    line = M.LineAccess("k.py", 3, "shared[index] += shared[index + stride]", notes=["a note on line 3"])
    M.add_request(line.metrics, M.SHARED, M.LD, [16 * lane for lane in range(32)], 8)
    M.add_request(line.metrics, M.GLOBAL, M.LD, [4 * lane for lane in range(32)], 4)
    kernel = M.KernelAccess("interleaved_strided", (8, 1, 1), (128, 1, 1), 0, 8, (0, 1), [line])
    doc = {"target": "reduction", "variant": "interleaved-strided",
           "measured_device": {"name": "NVIDIA H100 80GB HBM3"},
           "kernels": [files.kernel_doc(kernel, measured.by_kernel(FAKE_REPORT))]}
    text = access_table.table([doc])
    assert ("| reduction | interleaved-strided | interleaved_strided | global loads: sectors/request | 4.00 | 4.00 | "
            "yes |") in text
    assert "| shared loads: conflicts/request | 2.00 | 3.50 | **no** |" in text
    assert "1 of 3 measured ratios agree (measured on NVIDIA H100 80GB HBM3)." in text
    assert "interleaved_strided: a note on line 3" in text


def test_the_command_prints_the_costliest_line_and_writes_json(tmp_path, capsys):
    out = tmp_path / "trace.json"
    assert main(["access", "reduction", "interleaved-strided", "--n", "1024", "--blocks", "2", "--lines", "1",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "kernel interleaved_strided: grid 8, block 128" in text and "2 of 8 blocks traced (0, 7)" in text
    assert "kernels/reduction/gpu_harris.py:" in text and "shared[index] += shared[index + stride]" in text
    doc = json.loads(out.read_text())
    assert doc["kernels"][0]["name"] == "interleaved_strided" and doc["command"][:2] == ["raytracer-app", "access"]


# --- bad input: one line, exit status 2 --------------------------------------------------------------------------


@pytest.mark.parametrize("argv,words", [
    (["access", "reduction", "no-such"], "unknown variant"),
    (["access", "reduction", "numpy"], "CPU code"),
    (["access", "reduction", "cupy-sum"], "library peer"),
    (["access", "reduction", "warp-shuffle"], "simulator cannot run"),
    (["access", "reduction", "sequential", "--blocks", "0"], "--blocks"),
    (["access", "spheres", "spheres-global", "--n", "0"], "--n"),
    (["access", "reduction", "sequential", "--backend", "cpu"], "only with --measured"),
    (["access", "reduction", "sequential", "--n", "2000000000"], "MiB"),  # refused from the estimate, before running
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err, err


def test_measured_without_a_gpu_is_one_line_and_exit_2(capsys):
    from kernels import backend

    if backend.gpu_available():
        pytest.skip("this machine has a GPU: --measured would measure")
    assert main(["access", "reduction", "sequential", "--measured"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--measured" in err and "GPU" in err, err
