"""What a Dask cluster of this host's GPUs costs and gives (issue 47, docs/cluster.md): it starts one with the
app's own `cluster start` (a scheduler on loopback, a worker per GPU; without a GPU, cpu workers) and measures

- a reduction sweep's wall time in this process (`bench` without a cluster: the reference), on one GPU
  worker and on every GPU worker of the most common model; each cluster sweep on freshly started worker
  processes ("cold": CUDA's start, the imports and every kernel's compile inside) and again at once on the
  same ones ("warm"); each written as a result file and the warm ones compared row by row with `compare`'s
  rules (no FASTER, no SLOWER expected), with which variants each worker ran;
- whether numba's on-disk cache folder is one for every worker of the host;
- row latency: from a row's end on its worker (``Worker.log_event``) to its arrival in this client;
- Stop latency: from Stop, asked as the first row of a long sweep arrives, to the run's return with its rows;
- the remote render's frame rate at 1024x1024 (Julia set): frames per second through the client, the kernel's
  and the worker's whole-frame time and the transfer (round trip minus the worker's time; no window, so no
  paint time);

then `cluster stop`. Every figure is printed and written to OUT/cluster-bench.json; the sweeps' result files
are OUT/local-warm.json, OUT/one-gpu-cold.json, OUT/one-gpu-warm.json, OUT/all-gpus-cold.json and
OUT/all-gpus-warm.json.

    python3 scripts/cluster_bench.py --out DIR [--backend cuda|cpu] [--sizes N,...] [--variants gpu|a,b]
        [--repeats 20] [--no-local] [--no-cold] [--frames-seconds 10] [--frame-size 1024x1024] [--port 8791]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = "1048576,4194304,16777216,67108864,268435456"  # 2^20 .. 2^28


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="folder for the result files and cluster-bench.json")
    p.add_argument("--backend", choices=("cuda", "cpu"), default=None, help="default: cuda with a GPU, else cpu")
    p.add_argument("--sizes", default=SIZES, help=f"the sweep's sizes (default {SIZES})")
    p.add_argument("--variants", default="gpu", help="'gpu' (every GPU variant; the default) or names")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--no-local", dest="local", action="store_false",
                   help="leave out the sweep in this process (cold and warm: two more sweeps)")
    p.add_argument("--no-cold", dest="cold", action="store_false",
                   help="leave out the cold sweeps (no worker restarts; the warm ones then include compiles)")
    p.add_argument("--frames-seconds", type=float, default=10.0)
    p.add_argument("--frame-size", default="1024x1024")
    p.add_argument("--port", type=int, default=8791, help="the scheduler's port (0: a free one)")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # the cluster's state and logs in a folder of this run: a cluster the user started is left alone
    os.environ["RAYTRACER_CACHE_DIR"] = tempfile.mkdtemp(prefix="cluster-bench-")
    from kernels import backend as backends
    from kernels.cluster import local, remote

    backend = backends.Backend(args.backend or ("cuda" if backends.gpu_available() else "cpu"))
    figures: dict = {"backend": backend.kind}
    if args.local:  # before the cluster starts: its workers would share this process's GPU 0 otherwise
        figures.update(_local(backend, args, out))
    state = local.start("all", f"127.0.0.1:{args.port or _free_port()}")
    client = remote.connect(state["address"])
    figures["address"] = state["address"]
    try:
        figures.update(_numba_cache(client))
        figures.update(_sweeps(client, backend, args, out, figures.get("local_s")))
        figures.update(_stop_latency(client, backend, args))
        figures.update(_frames(client, backend, args))
    finally:
        client.close()
        local.stop()
    (out / "cluster-bench.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(f"wrote {out / 'cluster-bench.json'}")
    return 0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(backend, args, **changes):
    from kernels.cluster import jobs

    return jobs.bench_job(_bench_request(backend, args, **changes))


def _bench_request(backend, args, **changes):
    from kernels.registry import by_name

    spec = by_name("reduction")
    if args.variants == "gpu":  # every GPU variant (the CPU twins on a cpu run), not the library peers
        names = [v.name for v in spec.variants if (v.kind == "gpu" if backend.runs_cuda_kernels
                                                   else v.kind not in ("gpu", "peer"))]
    else:
        names = args.variants.split(",")
    fields = dict(algorithm="reduction", backend=backend, sizes=tuple(int(n) for n in args.sizes.split(",")),
                  variants=tuple(names), repeats=args.repeats)
    fields.update(changes)
    from kernels.service.bench_request import BenchRequest

    return BenchRequest(**fields)


def _chosen_workers(client, backend) -> list:
    from kernels.cluster import remote

    found = remote.workers(client)
    if backend.is_gpu:
        models = [w.model for w in found if w.model]
        model = max(set(models), key=models.count)
        found = [w for w in found if w.model == model]
    return [w.address for w in found]


def _local(backend, args, out: Path) -> dict:
    """The sweep in this process, as `bench` runs it without a cluster: once cold (compiles), once warm."""
    from kernels.harness import results
    from kernels.service.bench import run_bench

    request = _bench_request(backend, args)
    seconds = {}
    for phase in ("cold", "warm"):
        start = time.perf_counter()
        run = run_bench(request)
        seconds[phase] = time.perf_counter() - start
        print(f"local ({phase}): {len(run.rows)} rows in this process in {seconds[phase]:.2f} s")
    results.write_result(out / "local-warm.json", results.make_result(request, run.rows, run.peak), "--json")
    return {"local_cold_s": round(seconds["cold"], 3), "local_s": round(seconds["warm"], 3)}


def _cache_dir() -> str:
    import numba

    return str(numba.config.CACHE_DIR or "(beside each module's source: __pycache__)")


def _numba_cache(client) -> dict:
    """Each worker's numba cache folder: one for all on a host means a kernel compiled with cache=True by one
    worker is loaded by the others (the reduction kernels are not cached on disk: each worker compiles)."""
    folders = sorted(set(client.run(_cache_dir).values()))
    print(f"numba's on-disk cache: {'one folder for every worker' if len(folders) == 1 else 'folders'} {folders}")
    return {"numba_cache_dirs": folders}


def _sweeps(client, backend, args, out: Path, local_s) -> dict:
    from kernels.cluster import remote
    from kernels.harness import compare, results

    job = _request(backend, args)
    count = len(_chosen_workers(client, backend))
    timed = {}
    for label, take in (("one-gpu", 1), ("all-gpus", count)):
        if args.cold:
            client.restart()  # fresh worker processes: nothing imported, compiled or kept
        chosen = _chosen_workers(client, backend)[:take]  # (new addresses)
        for phase in ("cold", "warm") if args.cold else ("warm",):
            start = time.perf_counter()
            run = remote.run_bench(client, job, workers=chosen)
            timed[f"{label}-{phase}"] = (time.perf_counter() - start, run)
            results.write_result(out / f"{label}-{phase}.json", remote.result_of(run, job, "loopback", sys.argv),
                                 "--json")
            verified = sum(r.verified == "yes" for r in run.rows)
            print(f"{label} ({phase}): {len(chosen)} worker(s), {len(run.rows)} rows ({verified} verified) in "
                  f"{timed[f'{label}-{phase}'][0]:.2f} s")
    one, every = timed["one-gpu-warm"], timed["all-gpus-warm"]
    c = compare.compare(remote.result_of(one[1], job, "", None), remote.result_of(every[1], job, "", None))
    counts = {k: v for k, v in c.counts().items()}
    latency = every[1].latency_ms
    ran = {}
    for r in every[1].rows:
        ran.setdefault(r.worker, set()).add(r.variant)
    figures = {"workers": count, "sweep_rows": len(every[1].rows), "one_gpu_s": round(one[0], 3),
               "all_gpus_s": round(every[0], 3), "ratio": round(every[0] / one[0], 3),
               "one_gpu_cold_s": round(timed["one-gpu-cold"][0], 3) if args.cold else None,
               "all_gpus_cold_s": round(timed["all-gpus-cold"][0], 3) if args.cold else None,
               "ratio_cold": round(timed["all-gpus-cold"][0] / timed["one-gpu-cold"][0], 3) if args.cold else None,
               "ratio_to_local": round(every[0] / local_s, 3) if local_s else None,
               "compare": counts, "variants_per_worker": {w: len(v) for w, v in sorted(ran.items())},
               "row_latency_ms_median": round(statistics.median(latency), 2) if latency else None,
               "row_latency_ms_max": round(max(latency), 2) if latency else None}
    print(f"sweep, warm: {figures['all_gpus_s']} s on {count} worker(s) against {figures['one_gpu_s']} s on one: "
          f"{figures['ratio']}x; compare: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    if args.cold:
        print(f"sweep, cold (fresh workers: CUDA's start, imports, compiles): {figures['all_gpus_cold_s']} s "
              f"against {figures['one_gpu_cold_s']} s: {figures['ratio_cold']}x")
    if local_s:
        print(f"sweep, warm, against this process's run ({local_s} s): {figures['ratio_to_local']}x")
    print(f"variants each worker ran: {figures['variants_per_worker']}")
    print(f"row latency (worker row end -> client): median {figures['row_latency_ms_median']} ms, max "
          f"{figures['row_latency_ms_max']} ms over {len(latency)} rows")
    return figures


def _stop_latency(client, backend, args, tries: int = 3) -> dict:
    from kernels.cluster import remote

    latencies = []
    for _ in range(tries):
        asked = []
        job = _request(backend, args, repeats=max(args.repeats, 20) if backend.is_gpu else args.repeats)

        def stop(asked=asked):  # this try's list, bound now
            return bool(asked)

        def progress(what, value, asked=asked):
            if what == "row" and not asked:
                asked.append(time.perf_counter())

        run = remote.run_bench(client, job, progress, stop, workers=_chosen_workers(client, backend))
        if asked:
            latencies.append((time.perf_counter() - asked[0]) * 1e3)
        print(f"stop: the run returned {latencies[-1]:.0f} ms after Stop with {len(run.rows)} rows "
              f"(stopped: {run.stopped})" if asked else "stop: the sweep ended before its first row was seen")
    return {"stop_ms": [round(x, 1) for x in latencies]}


def _frames(client, backend, args) -> dict:
    from kernels.cluster import remote
    from kernels.julia.params import JuliaParams
    from kernels.service.requests import RenderRequest

    width, height = (int(x) for x in args.frame_size.lower().split("x"))
    request = RenderRequest("julia", backend, (width, height), params=JuliaParams())
    worker = _chosen_workers(client, backend)[:1]  # one worker draws every frame, as for a window
    remote.render(client, request, workers=worker)  # the first frame compiles
    frames, start = [], time.perf_counter()
    while time.perf_counter() - start < args.frames_seconds or not frames:
        frames.append(remote.render(client, request, workers=worker))
    seconds = time.perf_counter() - start
    med = lambda xs: round(statistics.median(xs), 3) if xs else None  # noqa: E731
    figures = {"frame_size": f"{width}x{height}", "frames": len(frames), "fps": round(len(frames) / seconds, 1),
               "kernel_ms_median": med([f.frame.kernel.median_ms for f in frames if f.frame.kernel is not None]),
               "worker_frame_ms_median": med([f.worker_ms for f in frames]),
               "round_trip_ms_median": med([f.round_trip_ms for f in frames]),
               "transfer_ms_median": med([f.transfer_ms for f in frames])}
    print(f"remote render {figures['frame_size']}: {figures['fps']} frames/s over {len(frames)} frames; kernel "
          f"{figures['kernel_ms_median']} ms, the worker's whole frame {figures['worker_frame_ms_median']} ms, "
          f"round trip {figures['round_trip_ms_median']} ms (transfer and scheduling "
          f"{figures['transfer_ms_median']} ms; no window: no paint time)")
    return figures


if __name__ == "__main__":
    sys.exit(main())
