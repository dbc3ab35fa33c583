"""What a Dask worker runs for a job (kernels/cluster/jobs.py): the request, rebuilt and validated here, through
the one door (:func:`kernels.service.bench.run_bench`), on this worker's backend (its GPU is device 0: the
worker started with ``CUDA_VISIBLE_DEVICES`` naming one GPU).

Each row goes back the moment it finishes through ``Worker.log_event(topic, ...)`` (the client subscribes to
the topic); a stop asked by the client is a ``distributed.Event`` that a thread here watches, so the run
checks a local flag between rows and samples. What the task returns is the whole piece again (rows, peak,
the ceilings its rows are judged against, device), so a row whose event was missed is still merged. The problems a piece built stay for the sweep's
next pieces on this worker (kernels/cluster/problem_cache.py) until the client says the sweep is over."""

from __future__ import annotations

import json
import tempfile
import threading
import time

_PEAKS: dict = {}  # backend kind -> the copy peak this worker process measured (one per sweep's worker)
_PROBLEMS: list = []  # the one ProblemCache of the sweep this worker runs pieces of (its scope: the topic)
_PROBLEMS_LOCK = threading.Lock()
STOP_POLL_S = 0.2  # how often the watching thread asks the scheduler whether Stop was pressed


def run_job(doc: dict, topic: str, stop_name: str) -> dict:
    from distributed import get_worker

    from kernels.cluster import jobs

    job = jobs.from_json(doc)
    worker = get_worker()
    if job.kind == "render":
        return _render(job, worker.name)
    if _stop_asked(stop_name):  # a piece that starts after Stop: none of it runs (its set-up alone, once per
        # queued piece, made a stopped sweep on one H200 take 10 s)
        return {"piece": job.piece, "rows": [], "stopped": True, "peak": None, "ceilings": [], "bad_files": [],
                "device": {}, "worker": str(worker.name)}
    stop = _StopWatch(stop_name)
    try:
        return (_counters if job.kind == "counters" else _bench)(job, worker, topic, stop)
    finally:
        stop.end()


def _bench(job, worker, topic, stop) -> dict:
    from kernels.backend import Backend
    from kernels.harness import results
    from kernels.service.bench import run_bench
    from kernels.service.bench_request import BenchRequest

    from kernels.cluster import jobs

    recorded = job.request.get("backend") or {}
    backend = Backend(str(recorded.get("kind", "cpu")), 0)
    seq = 0

    def send(kind, value):
        nonlocal seq
        if kind == "row":
            value.worker = str(worker.name)
            # as JSON text: the event's msgpack would turn the row's lists into tuples
            worker.log_event(topic, {"piece": job.piece, "seq": seq, "row": json.dumps(results.row_dict(value)),
                                     "sent": time.time()})  # the row's latency to the client (same host's clock)
            seq += 1
        elif kind == "peak" and value is not None:  # the copy ceiling a panel's chart draws
            worker.log_event(topic, {"piece": job.piece, "peak": [value.gbps, value.how]})

    with tempfile.TemporaryDirectory(prefix="raytracer-job-") as folder:
        written = jobs.write_files(job, folder)
        request = BenchRequest.from_json({**job.request, "variant_files": written.paths}, backend)
        run = run_bench(request, send, stop.is_set, known_peak=_PEAKS.get(backend.kind),
                        problem_cache=_problem_cache(topic, backend))
    if run.peak is not None and run.peak.gbps:
        _PEAKS.setdefault(backend.kind, run.peak)
    for r in run.rows:
        r.worker = str(worker.name)
    device = results.device_info(backend, run.peak, run.ceilings)
    if backend.is_gpu:  # --on each compares models: the driver and power limit too, where NVML says them
        from kernels.counters.clocks import board

        device.update(board(backend.device))
    return {"piece": job.piece, "rows": [results.row_dict(r) for r in run.rows], "stopped": run.stopped,
            "peak": None if run.peak is None else {"gbps": run.peak.gbps, "how": run.peak.how},
            "ceilings": [f.to_json() for f in run.ceilings],  # measured by this worker for these rows
            "bad_files": list(run.bad_files), "device": device, "worker": str(worker.name)}


def _counters(job, worker, topic, stop) -> dict:
    """A piece of `bench --counters`'s batch (kernels/cluster/jobs.py's counters_job): one ncu run per size and
    launch for its variants, each record ({variant: Measured's dict, or why it has none}) sent as it is read,
    keyed as a bench piece's rows are (size by size, launch by launch); Stop ends ncu's child within a second."""
    from kernels.backend import Backend
    from kernels.counters import measure as ncu

    backend, request, records = Backend("cuda", 0), job.request, []
    for n in request.get("sizes") or []:
        for launch in request.get("launches") or []:
            if stop.is_set():
                break
            got = ncu.measure({**request, "sizes": [n], "launches": [launch]}, backend, job.clock_control,
                              should_stop=stop.is_set)
            if stop.is_set():  # ncu ended early: its batch has no record
                break
            record = {"worker": str(worker.name),
                      "measured": {k: v if isinstance(v, str) else v.as_dict() for k, v in got.items()}}
            worker.log_event(topic, {"piece": job.piece, "seq": len(records), "row": json.dumps(record),
                                     "sent": time.time()})
            records.append(record)
    return {"piece": job.piece, "rows": records, "stopped": stop.is_set(), "peak": None, "ceilings": [],
            "bad_files": [], "device": {}, "worker": str(worker.name)}


def _problem_cache(scope: str, backend):
    """The sweep ``scope``'s problems on this worker (a new sweep's drops the last one's)."""
    from kernels.cluster.problem_cache import ProblemCache, budget

    with _PROBLEMS_LOCK:
        if not _PROBLEMS or _PROBLEMS[0].scope != scope:
            limit = budget()
            free = backend.free_device_bytes() if backend.is_gpu else None
            if free:  # the problems' device copies stay too: a share of the GPU's free memory at most
                limit = min(limit, free // 4)
            _PROBLEMS[:] = [ProblemCache(scope, limit)]
        return _PROBLEMS[0]


async def forget_problems(scope: str) -> int:
    """Run on each worker when the sweep ``scope`` is over (a coroutine: ``Client.run`` does not wait for
    it): its problems (host and device memory) go."""
    with _PROBLEMS_LOCK:
        if _PROBLEMS and _PROBLEMS[0].scope == scope:
            kept = len(_PROBLEMS[0])
            _PROBLEMS.clear()
            return kept
    return 0


def gpu_facts() -> dict:
    """This worker's GPU (device 0: CUDA_VISIBLE_DEVICES names one) as a client validates requests for it."""
    import dataclasses

    from kernels.backend import Backend

    gpu = Backend("cuda", 0)
    from kernels.inspector.bench_columns import device_arch

    return {"name": gpu.device_name, "limits": dataclasses.asdict(gpu.limits), "free": gpu.free_device_bytes(),
            "arch": device_arch(gpu)}


def copy_peak(kind: str) -> dict:
    """This worker's copy bandwidth (a lesson's ceiling), measured once per process."""
    from kernels.backend import Backend
    from kernels.harness.peak import copy_peak

    if kind not in _PEAKS:
        _PEAKS[kind] = copy_peak(Backend(kind, 0))
    return {"gbps": _PEAKS[kind].gbps, "how": _PEAKS[kind].how}


def measure_access(job) -> tuple[dict, dict]:
    """`access --measured` on this worker's GPU: Nsight Compute's figures for the trace ``job``
    (kernels/access/planning.py) and the same run's per-line counters."""
    from kernels.access.measured import measure
    from kernels.backend import Backend

    lines: dict = {}
    return measure(job, Backend("cuda", 0), lines_out=lines), lines


def measure_lines(target: str, names: list, n: int | None, static: dict, stop_name: str | None = None) -> dict:
    """`inspect --lines --measured` (and the window's Measure per line) on this worker's GPU: the variants'
    per-line counters, one ncu run; ``stop_name``: the client's Stop (ncu's child ends within a second)."""
    from kernels.backend import Backend
    from kernels.inspector.lines import measure_lines as measure

    stop = _StopWatch(stop_name) if stop_name else None
    try:
        return measure(target, names, Backend("cuda", 0), n, static=static,
                       should_stop=stop.is_set if stop else None)
    finally:
        if stop:
            stop.end()


def measure_counters(request: dict, stop_name: str | None = None) -> dict:
    """A benchmark panel's Measure on this worker's GPU: Nsight Compute's counters for the variants of
    ``request`` (a BenchRequest's JSON of one problem and one launch), one ncu run; ``stop_name``: the client's
    Stop (ncu's child ends within a second)."""
    from kernels.backend import Backend
    from kernels.counters.measure import measure

    stop = _StopWatch(stop_name) if stop_name else None
    try:
        return measure(request, Backend("cuda", 0), should_stop=stop.is_set if stop else None)
    finally:
        if stop:
            stop.end()


def end_worker_process() -> None:
    """Run on a worker that did not stop (a kernel that does not return): its process ends now, whatever it
    runs, and its nanny starts a fresh worker in its place."""
    import os

    os._exit(70)


_RENDERERS: dict = {}  # kept between frames: compiled kernels and device buffers are reused


def _render(job, worker_name) -> dict:
    """A frame (kernels.harness.frames.Frame: its image, kernel and whole-frame timings), as the CLI's `render`
    and a window draw it here."""
    from kernels.service.render import render_frame

    from kernels.cluster import jobs

    start = time.perf_counter()
    frame = render_frame(_RENDERERS, jobs.render_request(job.request))
    frame.image = frame.image.copy()  # out of the renderer's pinned buffers, which the next frames reuse
    return {"frame": frame, "worker_ms": (time.perf_counter() - start) * 1e3, "worker": str(worker_name)}


def _stop_asked(name: str) -> bool:
    from distributed import Event

    try:
        return Event(name).is_set()
    except Exception:  # noqa: BLE001 - the scheduler gone: nothing to stop, the task ends with the run
        return False


class _StopWatch:
    """The client's Stop as a local flag: a thread waits on the distributed Event and sets the flag. The Event
    is made here, on the task's thread, where Dask finds the worker's client (a thread of its own does not)."""

    def __init__(self, name: str):
        from distributed import Event, get_client

        self._flag = threading.Event()
        self._done = threading.Event()
        try:
            self._event = Event(name, client=get_client())
        except Exception:  # noqa: BLE001 - the scheduler gone: nothing to stop, the task ends with the run
            self._event = None
        self._thread = threading.Thread(target=self._watch, name="raytracer-stop-watch", daemon=True)
        self._thread.start()

    def _watch(self):
        try:
            while self._event is not None and not self._done.is_set():
                if self._event.wait(timeout=STOP_POLL_S):
                    self._flag.set()
                    return
        except Exception:  # noqa: BLE001 - the scheduler gone: the task ends with the run, nothing to stop
            return

    def is_set(self) -> bool:
        return self._flag.is_set()

    def end(self):
        self._done.set()
