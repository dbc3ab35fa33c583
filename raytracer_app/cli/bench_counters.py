"""`bench TARGET --counters`: Nsight Compute's counters for every GPU variant row (one ncu run per size and
launch, before the timed runs, so a machine that cannot read counters stops with one line before anything is
timed), the columns they add, and the guided analysis after the table."""

from __future__ import annotations

import sys
import time


def gpu_variants(variants, backend) -> list:
    return [v for v in variants if v.kind == "gpu" and v.skip_reason(backend) is None]


def measure_all(request, clock_control: str) -> dict:
    """{(problem index, launch index): {variant: Measured or reason}} for the request's built-in GPU variants;
    raises CannotMeasure (exit 2) before anything is timed when counters cannot be read here."""
    from kernels.counters.measure import measure
    from kernels.counters.tool import CannotMeasure, why_not

    backend = request.backend
    reason = why_not(backend)
    if reason:
        raise CannotMeasure(reason)
    names = [v.name for v in gpu_variants(request.selected(request.spec.variants), backend)]
    out = {}
    if not names:
        return out
    t0 = time.perf_counter()
    problems = [request.with_changes(input=None, sizes=(n,)) for n in request.sizes] if not request.input else [request]
    for pi, one in enumerate(problems):
        for li, launch in enumerate(request.launches):
            def progress(done, total, text, pi=pi, li=li):
                print(f"counters: {text} (size {pi + 1}/{len(problems)}, launch {li + 1}/{len(request.launches)}, "
                      f"{time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)

            narrowed = one.with_changes(launches=(launch,), variants=tuple(names), variant_files=(), processes=1)
            out[(pi, li)] = measure(narrowed.to_json(), backend, clock_control=clock_control,
                                    on_progress=progress)
    print(f"counters: {len(names)} variants measured by ncu (--clock-control {clock_control}) in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    return out


def on_cluster(client, request, resources, clock_control: str) -> tuple[dict | None, dict, int]:
    """--counters with --cluster: the batch split by variant over the GPU workers with ``resources`` (each
    variant's ncu runs on one worker, several variants at once), before the timed runs as here; returns
    (measured as :func:`measure_all` gives it, or None when the batch did not finish; {(size index, launch
    index, variant): worker}; the exit status so far). A worker that cannot read counters raises
    CannotMeasure (exit 2)."""
    from kernels.cluster import jobs, remote

    names = [v.name for v in gpu_variants(request.selected(request.spec.variants), request.backend)]
    if not names:
        return {}, {}, 0
    t0 = time.perf_counter()

    def progress(kind, value):
        if kind == "counters":
            print(f"counters: {', '.join(value.measured)} read on worker {value.worker}", file=sys.stderr,
                  flush=True)
        elif kind == "progress":
            print(f"counters: {value[0]}/{value[1]} ncu runs", file=sys.stderr, flush=True)

    measured, by, out = remote.run_counters(client, jobs.counters_job(request, names, clock_control), progress,
                                            resources=resources)
    for line in out.messages:
        print(line, file=sys.stderr)
    if out.stopped:
        print("counters: the batch did not finish; nothing is timed", file=sys.stderr)
        return None, by, 1
    print(f"counters: {len(names)} variants measured by ncu (--clock-control {clock_control}) on "
          f"{len(out.workers)} worker(s) in {time.perf_counter() - t0:.1f} s", flush=True)
    return measured, by, 0


def worker_lines(by: dict) -> list[str]:
    """Which worker read each variant's counters (a cluster's batch), one line per worker."""
    read: dict = {}
    for (_, _, name), worker in sorted(by.items()):
        read.setdefault(worker, [])
        if name not in read[worker]:
            read[worker].append(name)
    return [f"counters read on worker {w}: {', '.join(names)}" for w, names in sorted(read.items())]


def attach(rows, measured: dict) -> None:
    """Put each variant's record on its row: rows come size by size, and within a size launch by launch."""
    sizes = list(dict.fromkeys(r.n for r in rows))
    for si, n in enumerate(sizes):
        group = [r for r in rows if r.n == n]
        launches = len({li for (pi, li) in measured if pi == si}) or 1
        per_launch = max(1, len(group) // launches)
        for i, row in enumerate(group):
            got = measured.get((si, min(i // per_launch, launches - 1)), {}).get(row.variant)
            if got is None:
                continue
            if isinstance(got, str):
                row.counters_note = got
            else:
                row.counters = got


def _model_bytes(variant, row) -> float | None:
    decl = getattr(variant, "inspect", None)
    m = row.counters
    if decl is None or m is None:
        return None
    k = max(m.kernels, key=lambda k: k.get("duration_ns") or 0)
    block, grid = k.get("block"), k.get("grid")
    if not block or not grid:
        return None
    try:
        return float(decl.traffic(row.n, int(block), int(grid)).bytes)
    except Exception:  # noqa: BLE001 - a model that cannot take this launch: no comparison
        return None


def print_counters(rows, variants, peak) -> None:
    from kernels.counters.columns import clock_text, table_header, table_lines
    from kernels.counters.rules import Facts, analyse

    by_name = {v.name: v for v in variants}
    counted = [r for r in rows if r.counters is not None or r.counters_note]
    if not counted:
        return
    print()
    print(table_header())
    for r in counted:
        for line in table_lines(r.variant, r.counters):
            print(line)
        if r.counters is None:
            print(f"{r.variant:<24} no counters: {r.counters_note}")
    print()
    for r in counted:
        if r.counters is None:
            continue
        facts = Facts(r.counters, n=r.n, median_ms=r.timing.median_ms if r.timing else None, gbps=r.gbps,
                      copy_peak_gbps=peak.gbps if peak else None, model_bytes=_model_bytes(by_name[r.variant], r),
                      ceiling=r.ceiling, ceiling_rate=r.ceiling_rate, pct_of_ceiling=r.pct_of_ceiling)
        clock = clock_text(r.clocks)
        print(f"{r.variant} (n={r.n}):" + (f" {clock}" if clock else ""))
        for sentence in analyse(facts):
            print(f"  - {sentence}")


def clocks_note(rows) -> str:
    """Once, when GPU rows have no clocks: why."""
    from kernels.counters.clocks import unavailable

    return "" if any(r.clocks is not None for r in rows) else unavailable()
