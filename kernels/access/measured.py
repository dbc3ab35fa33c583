"""Nsight Compute's figures beside a trace's (``access --measured``): the same metrics for the same launch of
the same kernels, read through the counters package (one ncu run over the variant in a child process, as
``bench --counters`` does), and joined kernel by kernel. The joining is pure, so it is tested on small
recorded tables without a GPU."""

from __future__ import annotations

from dataclasses import dataclass

from kernels.access import model as M
from kernels.errors import InputError

AGREE_RELATIVE = 0.10  # a predicted ratio agrees within 10% of the measured one,
AGREE_ABSOLUTE = 0.1  # or within 0.1 where both are under 1


def measure(job, backend, should_stop=None, on_progress=None, lines_out: dict | None = None) -> dict:
    """{kernel label: {ncu metric: value}} for ``job``'s variant at its launch, on ``backend``'s GPU.
    CannotMeasure (one line, exit 2) where counters cannot be read; MeasureFailed when ncu broke.
    ``lines_out``: receives {kernel label: KernelLines}, the same run's source counters per line."""
    from kernels.counters.measure import measure as ncu_measure
    from kernels.counters.report import split
    from kernels.counters.tool import MeasureFailed

    if job.variant_file is not None or job.variant is None:
        raise InputError("--measured profiles built-in variants (ncu runs them by name); trace a variant file "
                         "without it")
    from kernels.launch import Launch
    from kernels.service.bench_request import BenchRequest

    launch = Launch(block=job.launch.block, grid=job.launch.grid, items_per_thread=job.launch.items_per_thread)
    request = BenchRequest(job.target, backend, sizes=(job.n,) if job.n is not None else (), options=job.options,
                           launches=(launch,), variants=(job.variant,), repeats=1, seed=job.seed, peak=False)
    raw: list = []
    got = ncu_measure(request.to_json(), backend, on_progress=on_progress, should_stop=should_stop, raw_out=raw,
                      extra_metrics=M.hardware_metrics())
    outcome = got.get(job.variant)
    if outcome is None:
        return {}  # stopped
    if isinstance(outcome, str):
        raise MeasureFailed(f"ncu measured nothing for {job.variant}: {outcome}")
    if lines_out is not None:
        lines_out.update({k.name: k.lines for k in outcome.kernels if k.lines is not None})
    return by_kernel(split(raw, 1).get(0, []))


def by_kernel(actions: list[dict]) -> dict:
    """The report's kernels of one variant (in launch order) as {label: {metric: value}}, labelled as the
    trace labels them: the kernel's function name, '#2' on the second distinct kernel of that name."""
    from kernels.counters.report import short_name

    wanted = set(M.hardware_metrics())
    out: dict = {}
    seen: dict = {}
    for action in actions:
        short = short_name(action["name"])
        seen[short] = seen.get(short, 0) + 1
        label = short if seen[short] == 1 else f"{short}#{seen[short]}"
        out[label] = {k: float(v) for k, v in action.get("metrics", {}).items() if k in wanted and v is not None}
    return out


@dataclass(frozen=True)
class Compared:
    """One quantity, predicted and measured. Ratios (per request) are judged; totals are shown, scaled from
    the traced blocks to the whole grid (said in the quantity), and not judged."""

    quantity: str
    predicted: float | None
    measured: float | None
    judged: bool

    @property
    def difference(self) -> float | None:
        if self.predicted is None or self.measured is None:
            return None
        return self.predicted - self.measured

    @property
    def agrees(self) -> bool | None:
        if not self.judged or self.difference is None:
            return None
        if max(abs(self.predicted), abs(self.measured)) < 1:
            return abs(self.difference) <= AGREE_ABSOLUTE + 1e-9
        return abs(self.difference) <= AGREE_RELATIVE * abs(self.measured) + 1e-9

    def as_dict(self) -> dict:
        return {"quantity": self.quantity, "predicted": self.predicted, "measured": self.measured,
                "difference": self.difference, "agrees": self.agrees}


def compare(kernel: M.KernelAccess, values: dict) -> list[Compared]:
    """Each access kind either side has: its requests (the prediction scaled to the whole grid) and its
    per-request figures (sectors; wavefronts and conflicts)."""
    predicted = kernel.totals
    scale = kernel.blocks_total / max(1, len(kernel.sampled))
    scaled = "" if scale == 1 else \
        f" (predicted x{scale:.4g}: {len(kernel.sampled)} of {kernel.blocks_total} blocks traced)"
    out = []
    for space in (M.GLOBAL, M.SHARED):
        for op in M.SPACE_OPS[space]:
            key = M.requests_metric(space, op)
            p_req, m_req = predicted.get(key, 0), values.get(key)
            if not p_req and not m_req:
                continue
            label = M.Ratio(space, op, 0).label
            out.append(Compared(f"{label}: requests{scaled}", p_req * scale, m_req, False))
            per = ([("sectors/request", M.sectors_metric(op))] if space == M.GLOBAL else
                   [("wavefronts/request", M.wavefronts_metric(op)), ("conflicts/request", M.conflicts_metric(op))])
            for words, metric in per:
                p = predicted.get(metric, 0) / p_req if p_req else None
                m = values.get(metric) / m_req if m_req and values.get(metric) is not None else None
                out.append(Compared(f"{label}: {words}", p, m, True))
    return out


def why(kernel: M.KernelAccess) -> list[str]:
    """The notes of a kernel's lines: what the trace cannot see, which may explain a disagreement."""
    seen: list[str] = []
    for line in kernel.lines:
        for note in line.notes:
            if note not in seen:
                seen.append(note)
    return seen
