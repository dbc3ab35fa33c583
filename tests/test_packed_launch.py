"""Launches with their arguments converted once (kernels/launch/packed.py): which calls are kept and when
a new one is made (in the simulator, where the kept call is numba's own launch), and on a GPU that the
packed launch writes what numba's launch writes, through a continuous stream of frames whose scene changes."""

import numpy as np
import pytest

from kernels.backend import memory as device_memory
from kernels.launch.packed import LastLaunch, packed_launch
from kernels.spheres.renderer import SphereRenderer
from kernels.spheres.scene import generate_scene
from tests.references import spheres_reference


class _Kernel:
    """Stands in for a dispatcher: kernel[grid, block](*args) records the arguments."""

    def __init__(self):
        self.calls = []

    def __getitem__(self, config):
        return lambda *args: self.calls.append((config, args))


def test_the_same_launch_is_kept_and_any_change_makes_a_new_one(cuda_backend):
    kernel, last = _Kernel(), LastLaunch()
    a, b = np.zeros(4), np.zeros(4)
    first = last(kernel, (2, 1), (8, 1), (a, np.int32(3), False))
    assert last(kernel, (2, 1), (8, 1), (a, np.int32(3), False)) is first  # equal scalars, the same array
    changed = [last(kernel, (2, 1), (8, 1), (b, np.int32(3), False)),  # an equal array that is another one
               last(kernel, (2, 1), (8, 1), (b, np.int32(4), False)),
               last(kernel, (2, 1), (8, 1), (b, np.int32(4), True)),
               last(kernel, (4, 1), (8, 1), (b, np.int32(4), True))]
    assert all(c is not first for c in changed) and len({id(c) for c in changed}) == 4
    changed[-1]()
    assert kernel.calls == [(((4, 1), (8, 1)), (b, np.int32(4), True))]


def test_the_simulator_keeps_numbas_own_launch(cuda_backend):
    if not cuda_backend.is_simulator:
        pytest.skip("a real GPU here: the packed launch is tested below")
    from kernels.spheres.gpu import gpu_kernel

    image = np.zeros((8, 8), np.uint32)
    assert packed_launch(gpu_kernel("constant"), (1, 1), (8, 8), (np.int32(1), False, image)) is None


@pytest.mark.gpu
def test_gpu_packed_launch_writes_what_numbas_launch_writes(cuda_backend):
    from numba import cuda

    @cuda.jit
    def ramp(out, start, step):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = start + step * i

    out = device_memory.empty(1000, np.float32)  # the seam's array, of either implementation: it packs as well
    call = packed_launch(ramp, 4, 256, (out, np.float32(2.0), np.float32(0.5)))
    assert call is not None
    call()
    np.testing.assert_array_equal(device_memory.to_host(out), (2.0 + 0.5 * np.arange(1000)).astype(np.float32))


@pytest.mark.gpu
@pytest.mark.parametrize("memory", ["global", "constant", "shared"])
def test_gpu_continuous_frames_follow_the_scene(cuda_backend, memory):
    """Untimed frames as the window renders continuously (start, then complete), the scene changing
    between them: every frame is its own scene's, not a kept launch's old spheres."""
    r = SphereRenderer(cuda_backend)
    a, b = generate_scene(20, seed=1), generate_scene(20, seed=2)
    r.render(a, (64, 48), memory=memory)  # warm: continuous frames are queued once the kernel is warm
    for scene in (a, a, b, b, a):
        frame = r.start(scene, (64, 48), memory=memory, timed=False)()
        assert frame.kernel is None
        assert np.abs(frame.image.astype(int) - spheres_reference(scene.spheres, 64, 48)).max() <= 1


def test_a_frame_of_launches_is_kept_while_its_kernels_and_arguments_repeat():
    from kernels.launch.packed import FrameLaunches

    ran = []

    class Kernel:  # stands for a dispatcher: kernel[grid, block](*args)
        def __init__(self, name):
            self.name = name

        def __getitem__(self, config):
            return lambda *args: ran.append((self.name, config, args))

    a, b = Kernel("a"), Kernel("b")
    buffer = object()
    frames = FrameLaunches()
    steps = ((a, 4, 128, (buffer, 3)), (b, (2, 2), (16, 16), (buffer,)))
    first = frames.frame(steps)
    assert frames.frame(steps) is first  # the same kernels, launches and arguments: the kept call
    first()
    assert ran == [("a", (4, 128), (buffer, 3)), ("b", ((2, 2), (16, 16)), (buffer,))]  # in order
    assert frames.frame(((a, 4, 128, (buffer, 4)), steps[1])) is not first  # a scalar changed
    assert frames.frame(((a, 4, 128, (object(), 3)), steps[1])) is not first  # another array
