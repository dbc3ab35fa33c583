"""The histogram's library peers: CUB's DeviceHistogram::HistogramEven through cuda.compute (257 levels,
256 bins), torch.bincount and CuPy's bincount, on the same device bytes, verified like ours and timed by
the same CUDA events."""

from __future__ import annotations

import numpy as np

from kernels.backend import Skip, memory
from kernels.backend.peers import cuda_compute, optional_module, torch_module, torch_view
from kernels.harness.rows import Outcome
from kernels.histogram.problem import BINS
from kernels.timing import time_kernel, time_kernel_with_result



def _level(dtype, value):
    return np.array([value], dtype=dtype)


class _CubHistogram:
    """CUB's DeviceHistogram::HistogramEven over the bytes: 257 levels 0..256 (256 bins of width 1), int32
    counters, temp storage allocated once. The levels need a type wider than uint8 (256 does not fit);
    int32 is tried first, then float32 (CUB casts the samples to the level type). Keyword arguments only,
    as cuda.compute 1.2 takes them."""

    def __init__(self, compute, samples, n: int):
        self.samples, self.n = samples, n
        self.counts = memory.empty(BINS, np.int32)
        self.levels = np.array([BINS + 1], dtype=np.int32)
        errors = []
        for level_type in (np.int32, np.float32):
            self.lower, self.upper = _level(level_type, 0), _level(level_type, BINS)
            try:
                self.hist = compute.make_histogram_even(
                    d_samples=samples, d_histogram=self.counts, h_num_output_levels=self.levels,
                    h_lower_level=self.lower, h_upper_level=self.upper, num_samples=n)
                nbytes = self._call(None)
            except Exception as exc:  # noqa: BLE001 - this level type is refused; try the next one
                errors.append(f"{np.dtype(level_type).name} levels: {type(exc).__name__}: {exc}")
                continue
            self.level_type = np.dtype(level_type).name
            self.temp = memory.empty(max(1, int(nbytes)), np.uint8)
            return
        raise RuntimeError("cuda.compute histogram_even refused every level type: " + "; ".join(errors))

    def _call(self, temp):
        return self.hist(temp_storage=temp, d_samples=self.samples, d_histogram=self.counts,
                         h_num_output_levels=self.levels, h_lower_level=self.lower, h_upper_level=self.upper,
                         num_samples=self.n)

    def __call__(self):
        self._call(self.temp)


def run_cub_histogram(problem, launch, backend, repeats):
    compute = cuda_compute()
    if isinstance(compute, Skip):
        return compute
    backend.activate()
    samples = problem.device_bytes()[: problem.n]
    hist = _CubHistogram(compute, samples, problem.n)
    timing = time_kernel(backend, hist, repeats)  # CUB zeroes its counters itself: nothing else to time
    return Outcome(problem.score(memory.to_host(hist.counts)), timing, note=f"{hist.level_type} levels")


def run_torch_bincount(problem, launch, backend, repeats):
    torch = torch_module()
    if isinstance(torch, Skip):
        return torch
    backend.activate()
    x = torch_view(torch, problem.device_bytes()[: problem.n])
    timing, counts = time_kernel_with_result(backend, lambda: torch.bincount(x, minlength=BINS), repeats)
    return Outcome(problem.score(counts.cpu().numpy()), timing)


def run_cupy_histogram(problem, launch, backend, repeats):
    cupy = optional_module("cupy")
    if isinstance(cupy, Skip):
        return cupy
    backend.activate()
    with cupy.cuda.Device(backend.device):
        data = cupy.asarray(problem.device_bytes())[: problem.n]  # zero-copy view of our device buffer
        timing, (counts, _) = time_kernel_with_result(
            backend, lambda: cupy.histogram(data, bins=BINS, range=(0, BINS)), repeats)
        return Outcome(problem.score(cupy.asnumpy(counts)), timing)
