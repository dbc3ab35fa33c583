"""launch.clamp_block: the one place a BXxBY block is brought into a device's limits (the GUI's block
sliders, a backend switch, saved settings). Expected values are worked out by hand in the comments."""

import pytest

from kernels.backend.devices import DeviceLimits
from kernels.launch import check_block
from kernels.launch import clamp_block

CUDA = DeviceLimits(name="usual CUDA GPU")  # 1024 threads per block, dims 1024 x 1024 x 64
SMALL = DeviceLimits(name="small", max_threads_per_block=256, max_block_dim=(64, 32, 1))


@pytest.mark.parametrize("block, keep, expected", [
    ((16, 16), 0, (16, 16)),  # 256 <= 1024: unchanged
    ((32, 32), 0, (32, 32)),  # exactly 1024: unchanged
    ((64, 32), 0, (64, 16)),  # 2048 > 1024: BX kept, BY = 1024 // 64 = 16
    ((64, 32), 1, (32, 32)),  # 2048 > 1024: BY kept, BX = 1024 // 32 = 32
    ((1024, 1024), 0, (1024, 1)),  # BY = 1024 // 1024 = 1
    ((0, 0), 0, (1, 1)),  # each side at least 1
    ((-5, 7), 1, (1, 7)),
    ((5000, 3), 0, (1024, 1)),  # BX to its dim 1024, then BY = 1024 // 1024 = 1
    ((5000, 3), 1, (341, 3)),  # BY kept at 3, BX to its dim 1024, then 1024 // 3 = 341
])
def test_clamp_block_on_the_usual_limits(block, keep, expected):
    assert clamp_block(block, CUDA, keep) == expected
    check_block(expected, CUDA)  # what it returns, the launch accepts


@pytest.mark.parametrize("block, keep, expected", [
    ((16, 16), 0, (16, 16)),  # 256 <= 256
    ((100, 100), 0, (64, 4)),  # dims: 64 x 32 (2048 threads), then BY = 256 // 64 = 4
    ((100, 100), 1, (8, 32)),  # dims: 64 x 32, BY kept at 32, BX = 256 // 32 = 8
    ((3, 100), 0, (3, 32)),  # BY to its dim 32: 96 threads, within 256
    ((10, 30), 0, (10, 25)),  # 300 > 256: BY = 256 // 10 = 25
    ((10, 30), 1, (8, 30)),  # 300 > 256: BX = 256 // 30 = 8
])
def test_clamp_block_on_smaller_limits(block, keep, expected):
    assert clamp_block(block, SMALL, keep) == expected
    check_block(expected, SMALL)


def test_clamp_block_takes_numpy_and_float_sides_and_refuses_a_bad_keep():
    import numpy as np

    assert clamp_block((np.int64(8), 8.0), CUDA) == (8, 8)
    assert all(type(side) is int for side in clamp_block((np.int64(8), 8.0), CUDA))
    with pytest.raises(ValueError):
        clamp_block((8, 8), CUDA, keep=2)
