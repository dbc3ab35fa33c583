"""`raytracer-app bench TARGET --cluster ADDRESS [--on MODEL|any-gpu|each]`: the same request run on a Dask
cluster's workers (kernels/cluster), its rows printed as they arrive (each with the worker that ran it), then
merged in a local run's order into the table's summary, --csv and --json (one result file per GPU model with
--on each, each recording its device as the worker saw it)."""

from __future__ import annotations

import sys
from pathlib import Path

from kernels import signals
from kernels.errors import InputError
from kernels.harness.rows import ERROR, FAILED
from kernels.harness.summary import summary_lines
from kernels.harness.table import ceiling_lines, table_header, table_line, write_csv


def run(args, fields: dict, labels: dict) -> int:
    from kernels.backend import Backend, choice
    from kernels.cluster import jobs, remote

    for given, option in ((args.list, "--list"), (getattr(args, "whole_call", False), "--whole-call"),
                          (getattr(args, "resources", False), "--resources"), (args.device is not None, "--device"),
                          (getattr(args, "input", None) is not None, "--input")):  # a file of this machine's
        if given:
            raise InputError(f"{option} applies to a run here; give it without --cluster (--on picks the workers)")
    csv_path, json_path = _check_outputs(args)
    client = remote.connect(args.cluster, args.certs)
    try:
        named = choice(args.backend)
        backend = Backend(named.name) if not named.is_auto else Backend("cuda" if remote.gpu_models(client) else "cpu")
        counters = getattr(args, "counters", False)
        if counters:
            _check_counters(client, backend)
        chosen = remote.targets(client, args.on, backend)
        each = args.on == "each"  # one result file per GPU model, named with the model, however many there are
        if each and csv_path:
            raise InputError("--on each writes one result file per GPU model: give --json, not --csv")
        code = 0
        from kernels.service.bench_request import BenchRequest

        for model, resources in chosen.items():
            # checked here in the options' words, against the workers' GPU as they report it
            where = remote.remote_gpu(client, resources) if backend.is_gpu else backend
            request = BenchRequest(**fields, backend=where, labels=labels)
            job = jobs.bench_job(request)
            print(f"cluster: {client.scheduler.address}, {backend.kind} on {model if resources else 'every worker'}")
            counted = None
            if counters:  # before the timed runs, as here: ncu's replays must not heat a GPU between them
                from raytracer_app.cli import bench_counters

                counted, by, failed = bench_counters.on_cluster(client, request, resources, args.clock_control)
                if counted is None:
                    code = max(code, failed)
                    continue
                counted = (counted, by)
            code = max(code, _one(args, client, job, resources, csv_path,
                                  _per_model(json_path, model) if each and json_path else json_path, counted))
        return code
    finally:
        client.close()


def _check_counters(client, backend) -> None:
    """--counters reads Nsight Compute on a GPU worker: one line (exit 2) where the cluster has none."""
    from kernels.cluster import remote
    from kernels.counters.tool import CannotMeasure

    if not remote.gpu_models(client):
        raise CannotMeasure(f"counters cannot be read: the cluster at {client.scheduler.address} has no GPU worker "
                            "(its workers run the cpu and sim backends; Nsight Compute needs a CUDA GPU)")
    if not backend.is_gpu:
        raise CannotMeasure(f"counters cannot be read on the {backend.kind} backend: give --backend cuda (the "
                            "cluster's GPU workers read them)")


def _one(args, client, job, resources, csv_path, json_path, counted=None) -> int:
    from kernels.cluster import remote
    from kernels.registry import by_name

    finished: list = []

    def progress(kind, value):
        if kind == "row":
            if not finished:
                print(table_header() + "  worker")
            finished.append(value)
            print(f"{table_line(value)}  {value.worker}", flush=True)
        elif kind == "progress":
            print(f"progress: {value[0]}/{value[1]}", file=sys.stderr, flush=True)

    try:
        out = remote.run_bench(client, job, progress, resources=resources)
    except KeyboardInterrupt as exc:
        stopped = signals.say_stopped(exc, len(finished))
        _write(args, job, remote.RemoteRun(rows=finished, stopped=True), csv_path, json_path)
        return stopped
    for line in out.messages:
        print(line, file=sys.stderr)
    if out.peak is not None:
        print(f"peak: {out.peak.gbps:.1f} GB/s measured with a {out.peak.how}" if out.peak.gbps else
              f"peak: not measured ({out.peak.how})")
    for line in ceiling_lines(out.ceilings):  # what %ceil is against: each worker's, naming it
        print(line)
    if counted is not None:  # as after a local run's table: each row's counters, the guided analysis
        from raytracer_app.cli import bench_counters

        bench_counters.attach(out.rows, counted[0])
        bench_counters.print_counters(out.rows, by_name(job.request["algorithm"]).variants, out.peak)
        for line in bench_counters.worker_lines(counted[1]):
            print(line)
    for line in summary_lines(out.rows, out.peak, by_name(job.request["algorithm"]).variants):
        print(line)
    print(f"workers: {', '.join(out.workers) or 'none'}" + ("  (stopped: the rows that finished)" if out.stopped else ""))
    if not _write(args, job, out, csv_path, json_path):
        return 1
    if out.bad_files:
        for line in out.bad_files:
            print(f"raytracer-app: error: {line}", file=sys.stderr)
        return 2
    bad = [r for r in out.rows if r.verified in (FAILED, ERROR)]
    if bad:
        print(f"{len(bad)} of {len(out.rows)} runs failed verification or raised", file=sys.stderr)
        return 1
    return 1 if out.stopped else 0


def _check_outputs(args):
    from kernels.io.writer import check_output

    for option, path in (("--csv", args.csv), ("--json", args.json)):
        if path:
            check_output(path, option)
    return args.csv, args.json


def _per_model(path, model: str):
    if not path:
        return path
    p = Path(path)
    return str(p.with_name(f"{p.stem}-{model}{p.suffix or '.json'}"))


def _write(args, job, run, csv_path, json_path) -> bool:
    """``run`` (a RemoteRun; stopped: partial) to --csv and --json."""
    from kernels.cluster import remote
    from kernels.harness import results
    from kernels.io.writer import WriteFailed

    rows, partial = run.rows, run.stopped
    try:
        if csv_path:
            write_csv(rows, csv_path, "--csv")
            print(f"wrote {len(rows)} rows to {csv_path}")
        if json_path:
            results.write_result(json_path, remote.result_of(run, job, args.cluster, getattr(args, "argv", None)),
                                 "--json")
            print(f"wrote {len(rows)} rows with their samples to {json_path}" + (" (partial)" if partial else ""))
    except (WriteFailed, InputError) as exc:
        print(f"raytracer-app: failed: {exc}; the {len(rows)} rows are in the table above", file=sys.stderr)
        return False
    return True
