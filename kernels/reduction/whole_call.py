"""The whole call of a reduction, as a user sees it: launch and the one result on the host, wall time.

At 2^20 elements the kernel takes about 5 us and the rest is host work, so this is where launch overhead
shows. ``best`` has a lean path (:class:`BestCall`): compiled once for its argument types, its kernel
arguments packed once per result slot (no typing or packing per call), and the result copied (8 bytes) into
a pinned buffer allocated once, which also waits for the kernel. :func:`best_breakdown` times each step of
the plain numba path and of the lean one, so a GPU run shows where the time goes.
"""

from __future__ import annotations

import statistics
import time

from kernels.backend import Skip, memory
from kernels.errors import one_line
from kernels.harness.rows import ERROR, FAILED, PASSED, Row, SKIPPED, show_value as _show
from kernels.launch import Launch
from kernels.timing import Timing

WHOLE_CALL_NOTE = "whole call: launch + result on the host, wall time per call"


class BestCall:
    """``best`` with everything that does not change between calls done once."""

    def __init__(self, problem, backend, launch: Launch | None = None):
        from kernels.reduction import launches
        from kernels.reduction.gpu import best_kernel

        backend.activate()
        self.problem = problem
        if launch is None or launch.is_default:
            choice, _ = launches.tuned_best_launch(problem, backend)
            launch = Launch(block=choice.block, items_per_thread=choice.items)
        resolved = launches.VARIANT_BY_NAME["best"].resolve(launch, backend.limits, problem.n)
        self.block, self.items = resolved.block, resolved.items
        self.kernel = best_kernel(problem.op, problem.dtype, self.items)
        self.d_a, self.d_b = problem.device_inputs(backend)
        self.result = memory.zeros(2, problem.accumulator)
        self.args = [(self.d_a, self.d_b, self.result, s) for s in (0, 1)]
        self.grid = resolved.grid  # one block per tile of block x items elements
        self.configured = self.kernel[self.grid, self.block]
        self.host = memory.pinned_empty(2, problem.accumulator)  # one pinned buffer for every call
        # per slot, the copy of its 8 bytes into the pinned buffer, checked once here and not per call
        self.copy_back = [memory.host_copier(self.host[s:s + 1], self.result[s:s + 1]) for s in (0, 1)]
        self.slot = 1
        self.fast = self._prepack()  # None when numba's internals are not the ones this was written for

    def _prepack(self):
        """A launch per slot with its arguments converted once (kernels.launch.packed); None if that is
        not available here."""
        from kernels.launch.packed import packed_launch

        packed = [packed_launch(self.kernel, self.grid, self.block, args) for args in self.args]
        return None if None in packed else packed

    def launch(self) -> None:
        self.slot ^= 1  # add into the slot the previous launch zeroed
        if self.fast is not None:
            self.fast[self.slot]()
        else:
            self.configured(*self.args[self.slot])

    def fetch(self):
        """Copy the slot's 8 bytes into the pinned buffer: a synchronous copy, so it also waits."""
        self.copy_back[self.slot]()
        return self.problem.as_result(self.host[self.slot])

    def __call__(self):
        self.launch()
        return self.fetch()

    @property
    def description(self) -> str:
        how = "arguments packed once" if self.fast is not None else "numba's launch (pre-configured)"
        return f"best lean call: items {self.items}, block {self.block}, grid {self.grid}, {how}, pinned result"


def plain_best_call(lean: BestCall):
    """The call as the benchmark's runner makes it: numba's dispatch on every launch, a new host array."""

    def call():
        lean.slot ^= 1
        lean.configured(*lean.args[lean.slot])
        return lean.problem.as_result(memory.to_host(lean.result)[lean.slot])

    return call


def best_breakdown(lean: BestCall, calls: int = 200) -> list[str]:
    """Median microseconds of each step, plain numba path and lean path, measured with perf_counter."""
    steps: dict[str, list[float]] = {k: [] for k in ("typing+packing+launch (numba dispatch)", "launch (prepacked)",
                                                      "synchronize", "copy 8 bytes to pinned",
                                                      "copy to a new host array", "whole plain", "whole lean")}
    plain = plain_best_call(lean)
    for _ in range(5):
        plain()
        lean()
    for _ in range(calls):
        lean.slot ^= 1
        t0 = time.perf_counter()
        lean.configured(*lean.args[lean.slot])
        t1 = time.perf_counter()
        memory.synchronize()
        t2 = time.perf_counter()
        memory.to_host(lean.result)
        t3 = time.perf_counter()
        steps["typing+packing+launch (numba dispatch)"].append(t1 - t0)
        steps["copy to a new host array"].append(t3 - t2)
        if lean.fast is not None:
            lean.slot ^= 1
            t0 = time.perf_counter()
            lean.fast[lean.slot]()
            t1 = time.perf_counter()
            memory.synchronize()
            t2 = time.perf_counter()
            lean.fetch()
            t3 = time.perf_counter()
            steps["launch (prepacked)"].append(t1 - t0)
            steps["synchronize"].append(t2 - t1)
            steps["copy 8 bytes to pinned"].append(t3 - t2)
        t0 = time.perf_counter()
        plain()
        t1 = time.perf_counter()
        lean()
        t2 = time.perf_counter()
        steps["whole plain"].append(t1 - t0)
        steps["whole lean"].append(t2 - t1)
    lines = [f"whole-call breakdown of best ({lean.description}), median of {calls} calls, host wall time:"]
    for name, values in steps.items():
        if values:
            lines.append(f"  {name:<40} {statistics.median(values) * 1e6:8.1f} us")
    return lines


def _factories():
    from kernels.reduction import peers

    def best(problem, backend):
        return BestCall(problem, backend)

    def best_plain(problem, backend):
        return plain_best_call(BestCall(problem, backend))

    return {
        "best": best,
        "best-plain": best_plain,
        "cub-reduce": peers.cub_reduce_call,
        "triton-sum": peers.triton_sum_call,
        "torch-sum": peers.torch_sum_call,
        "cupy-sum": peers.cupy_sum_call,
    }


WHOLE_CALL_VARIANTS = ("best", "best-plain", "cub-reduce", "triton-sum", "torch-sum", "cupy-sum")


def run(problem, names, backend, repeats: int) -> list[Row]:
    """One row per name in ``names`` that has a whole-call form (others are skipped rows saying so)."""
    from kernels.timing import time_wall

    factories = _factories()
    rows = []
    for name in names:
        row = Row(variant=name, op=problem.op, dtype=problem.dtype, n=problem.n, backend=backend.kind,
                  device=backend.device_name, repeats=repeats, expected=_show(problem.expected))
        rows.append(row)
        if not backend.is_gpu:
            row.verified, row.note = SKIPPED, "the whole call is measured on a real GPU only"
            continue
        if name not in factories:
            row.verified, row.note = SKIPPED, f"{name} has no whole-call form (measured: {', '.join(WHOLE_CALL_VARIANTS)})"
            continue
        try:
            call = factories[name](problem, backend)
            if isinstance(call, Skip):
                row.verified, row.note, row.skip = SKIPPED, call.text, call
                continue
            result = call()
            timing = time_wall(call, repeats, warmup=3)
        except Exception as exc:  # noqa: BLE001 - one broken peer never stops the others
            row.verified, row.note = ERROR, one_line(exc)
            continue
        ok, note = problem.verify(result)
        row.timing, row.result = Timing(timing.samples_ms, "wall-whole-call"), _show(result)
        row.verified = PASSED if ok else FAILED
        row.note = "; ".join(x for x in (WHOLE_CALL_NOTE, getattr(call, "description", ""), note) if x)
    return rows
