"""The simulator's thread blocks on waking barriers (kernels/backend/sim_blocks.py): the block semantics of
numba-cuda's simulator, checked on plain Python threads against hand-worked results, and the simulator of
this session running its launches on them."""

import sys
import threading
from collections import namedtuple

import numpy as np
import pytest
from numba import cuda  # a module global, as the simulator swaps it for its own while a kernel runs

from kernels.backend import sim_blocks

Dim3 = namedtuple("Dim3", "x y z")


def _me():
    return threading.current_thread()


def test_every_thread_runs_once_with_its_indices():
    seen = []
    lock = threading.Lock()

    def body():
        t = _me()
        with lock:
            seen.append((tuple(t.blockIdx), tuple(t.threadIdx), t.thread_id))

    sim_blocks.run_block(body, (2, 1, 0), (4, 3, 1), (), Dim3)
    expected = sorted(((2, 1, 0), (x, y, 0), x + 4 * y) for y in range(3) for x in range(4))
    assert sorted(seen) == expected


def test_a_barrier_holds_every_thread_until_all_wrote():
    n = 64
    shared = [0] * n
    out = [None] * n

    def body():
        i = _me().thread_id
        shared[i] = i * i
        _me().syncthreads()
        out[i] = shared[n - 1 - i]  # written by another thread before the barrier

    sim_blocks.run_block(body, (0, 0, 0), (n, 1, 1), (), Dim3)
    assert out == [(n - 1 - i) ** 2 for i in range(n)]


def test_count_and_or_see_every_threads_value():
    n = 40
    got = {}

    def body():
        i = _me().thread_id
        got[i] = (_me().syncthreads_count(i % 3 == 0), _me().syncthreads_and(i < n), _me().syncthreads_and(i < 5),
                  _me().syncthreads_or(i == 17), _me().syncthreads_or(i > n))

    sim_blocks.run_block(body, (0, 0, 0), (n, 1, 1), (), Dim3)
    assert set(got.values()) == {(len(range(0, n, 3)), 1, 0, 1, 0)}


def test_threads_that_returned_count_as_arrived():
    n = 32
    after = []

    def body():
        i = _me().thread_id
        if i % 2:
            return
        _me().syncthreads()
        _me().syncthreads()
        after.append(i)

    sim_blocks.run_block(body, (0, 0, 0), (n, 1, 1), (), Dim3)
    assert sorted(after) == list(range(0, n, 2))


def test_a_failing_thread_ends_the_block_and_is_named():
    def body():
        t = _me()
        if t.thread_id == 5:
            raise ZeroDivisionError("integer division or modulo by zero")
        t.syncthreads()  # the others wait here: the failure must release them, not hang

    with pytest.raises(ZeroDivisionError) as caught:
        sim_blocks.run_block(body, (3, 0, 0), (8, 1, 1), (), Dim3)
    assert str(caught.value) == "tid=[5, 0, 0] ctaid=[3, 0, 0]: integer division or modulo by zero"


def test_the_barrier_hook_runs_once_per_barrier_before_threads_go_on():
    n = 16
    log = []

    def body():
        log.append(("before", _me().thread_id))
        _me().syncthreads()
        log.append(("after", _me().thread_id))

    sim_blocks.run_block(body, (0, 0, 0), (n, 1, 1), (), Dim3, on_release=lambda: log.append(("release", None)))
    kinds = [k for k, _ in log]
    assert kinds == ["before"] * n + ["release"] + ["after"] * n


@pytest.mark.slow  # frequent thread switches: about 2 s
def test_the_simulator_of_this_session_runs_its_blocks_on_waking_barriers():
    from kernels import backend

    if not backend.simulator_active():
        pytest.skip("this session runs on a GPU: the simulator is not loaded")
    from numba.cuda.simulator import kernel as sim_kernel

    from kernels.backend.numba_private import CHECKED_ON, numba_cuda_version

    if not numba_cuda_version().startswith(CHECKED_ON.rsplit(".", 1)[0] + "."):
        pytest.skip(f"numba-cuda {numba_cuda_version()} keeps its own block runner")
    assert sim_kernel.BlockManager.func is sim_blocks.WakingBlockManager

    @cuda.jit
    def reverse_plus_count(a, out):
        s = cuda.shared.array(256, np.int32)  # one array for the block: its threads all ask for it at once
        i = cuda.threadIdx.x + cuda.blockIdx.x * 256
        s[cuda.threadIdx.x] = a[i]
        cuda.syncthreads()
        out[i] = s[255 - cuda.threadIdx.x] + cuda.syncthreads_count(a[i] % 5 == 0)

    a = np.arange(512, dtype=np.int32) * 7
    blocks = a.reshape(2, 256)
    expected = (blocks[:, ::-1] + (blocks % 5 == 0).sum(axis=1, keepdims=True)).ravel().tolist()
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads change often: a race between their first calls shows
    try:
        for _ in range(10):
            out = np.zeros_like(a)
            reverse_plus_count[2, 256](a, out)
            assert out.tolist() == expected
    finally:
        sys.setswitchinterval(switch)


def test_another_numba_cuda_line_keeps_the_simulators_runner(monkeypatch):
    from kernels.backend import numba_private

    class FakeSimKernel:
        BlockManager = object()

    original = FakeSimKernel.BlockManager
    monkeypatch.setattr(numba_private, "numba_cuda_version", lambda: "0.31.0")
    assert numba_private.waking_blocks(FakeSimKernel) is False
    assert FakeSimKernel.BlockManager is original
