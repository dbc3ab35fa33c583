"""Timing written once: CUDA events for kernels on a GPU, perf_counter elsewhere.

Every helper warms up first, so JIT compilation never lands in a timing, and returns a :class:`Timing`
whose ``method`` says how it was measured ('cuda-events' or 'wall'). The package's modules: the samples
(samples.py), the timers (timers.py), how long to measure (policy.py), and the cold runs' L2 flush (cold.py);
what callers use is named here.
"""

from kernels.timing.cold import FLUSH_FALLBACK_BYTES, l2_flusher
from kernels.timing.policy import (Policy, Stopped, check_stop, current_policy, is_stable, measurement,
                                   repeat_until_stable, stopping, warmups)
from kernels.timing.samples import Timing, join_timings, relative_spread
from kernels.timing.timers import (GPU_HEAD_START_NS, EventTimer, check_repeats, time_cuda_events, time_kernel,
                                   time_kernel_with_result, time_wall)

__all__ = ["FLUSH_FALLBACK_BYTES", "GPU_HEAD_START_NS", "EventTimer", "Policy", "Stopped", "Timing", "check_repeats",
           "check_stop", "stopping",
           "current_policy", "is_stable", "join_timings", "l2_flusher", "measurement", "relative_spread",
           "repeat_until_stable", "time_cuda_events", "time_kernel", "time_kernel_with_result", "time_wall",
           "warmups"]
