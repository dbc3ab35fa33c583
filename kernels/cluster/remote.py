"""The client's side of a cluster run: connect (one line for a bad or unreachable address), choose the workers
(``on``: a GPU model such as H200, 'any-gpu', or every worker for the cpu and sim backends), split a sweep
into pieces (kernels/cluster/pieces.py) handed to each worker as it is free, stream each row as it arrives
(``Client.subscribe_topic``), stop on request (a ``distributed.Event`` the workers check between rows; a worker
still busy 10 s later is restarted and the run reported as stopped), and merge the rows in a local run's
order. A worker killed mid-run loses no finished row: the rows it sent are kept, and what is left of its
piece (the sizes whose rows did not all come) is handed to another worker; when no worker can take the
pieces left, the run stops with what it has."""

from __future__ import annotations

import json
import queue
import re
import time
import uuid
from dataclasses import dataclass, field

from kernels.backend import Backend
from kernels.cluster import GPU_RESOURCE
from kernels.cluster import jobs, pieces
from kernels.errors import InputError, one_line

CONNECT_TIMEOUT_S = 6  # with the start of Python and Dask: one line within 10 s
RESTART_AFTER_S = 10.0  # a worker that has not stopped this long after Stop is restarted
ORPHAN_AFTER_S = 10.0  # pieces no worker can take for this long: the run stops with what it has
_ADDRESS = re.compile(r"^(?:(tcp|tls)://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.\-_]+):(\d{1,5})$")


class ClusterError(Exception):
    """The cluster could not be reached or failed while running: one line, exit status 1."""


def parse_address(text: str, certs=None, label: str = "--cluster") -> str:
    """'HOST:PORT', 'tcp://HOST:PORT' or 'tls://HOST:PORT' as Dask wants it (tls:// when certificates are
    given); InputError naming ``label`` otherwise."""
    found = _ADDRESS.match(str(text).strip())
    if not found or not 0 < int(found.group(3)) < 65536:
        raise InputError(f"{label} {text!r} is not a cluster address: give HOST:PORT, e.g. 127.0.0.1:8786, or "
                         "tls://HOST:PORT")
    scheme = found.group(1) or ("tls" if certs else "tcp")
    if scheme == "tls" and not certs:
        raise InputError(f"{label} {text}: a TLS cluster admits only clients with a certificate; give --certs DIR "
                         "(made by `raytracer-app cluster certs`)")
    return f"{scheme}://{found.group(2)}:{found.group(3)}"


def connect(address: str, certs=None, label: str = "--cluster"):
    """A Dask Client of the cluster at ``address``; ClusterError within CONNECT_TIMEOUT_S when it cannot be
    reached (or refuses this client)."""
    import logging

    address = parse_address(address, certs, label)
    from distributed import Client

    from kernels.cluster.security import client_security

    security = client_security(certs) if certs else None
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # the one line below says it
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S, security=security, set_as_default=False)
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, a TLS handshake refused: one line
        hint = "" if certs else " (a cluster listening with TLS refuses a client without certificates: --certs DIR)"
        raise ClusterError(f"cannot reach the cluster at {address}: {one_line(exc)}{hint}") from None


@dataclass(frozen=True)
class WorkerInfo:
    address: str
    name: str
    resources: dict

    @property
    def model(self) -> str | None:
        """The GPU model this worker declared (a resource besides GPU), or None for a cpu/sim worker."""
        if GPU_RESOURCE not in self.resources:
            return None
        return next((r for r in self.resources if r != GPU_RESOURCE), "GPU")


def workers(client) -> list[WorkerInfo]:
    info = client.scheduler_info(n_workers=-1)["workers"] if _takes_n_workers(client) else \
        client.scheduler_info()["workers"]
    return sorted((WorkerInfo(a, str(w.get("name", a)), dict(w.get("resources") or {})) for a, w in info.items()),
                  key=lambda w: w.name)


def _takes_n_workers(client) -> bool:
    import inspect

    return "n_workers" in inspect.signature(client.scheduler_info).parameters


def gpu_models(client) -> list[str]:
    return sorted({w.model for w in workers(client) if w.model})


def targets(client, on: str | None, backend) -> dict:
    """{model or 'cpu': resources each piece asks for} for ``on`` and the Backend ``backend``: None (a GPU
    model for a GPU backend, every worker for cpu and sim), 'any-gpu', 'each' (every GPU model) or a model's name."""
    found = workers(client)
    if not found:
        raise ClusterError("the cluster has no workers")
    models = {}
    for w in found:
        if w.model:
            models.setdefault(w.model, []).append(w)
    if on is None and not backend.is_gpu:
        return {"cpu": None}
    if on in (None, "any-gpu"):
        if not models:
            raise InputError("the cluster has no GPU worker (its workers run the cpu and sim backends)")
        model = max(models, key=lambda m: len(models[m]))  # the model with the most GPUs: the fastest split
        return {model: {model: 1}}
    if on == "each":
        if not models:
            raise InputError("--on each runs on every GPU model; the cluster has no GPU worker")
        return {m: {m: 1} for m in sorted(models)}
    if on not in models:
        raise InputError(f"--on {on}: no worker of the cluster has that GPU (it has "
                         f"{', '.join(sorted(models)) or 'no GPU'}; or give any-gpu, each)")
    return {on: {on: 1}}


@dataclass(frozen=True)
class RemoteGpu(Backend):
    """A GPU of a cluster's worker as this process sees it: a request for it is validated here, with the
    CLI's or the panel's words, against the name, limits and free memory the worker reported (this host may
    have no GPU at all). Nothing runs on it here."""

    remote_name: str = ""
    remote_limits: object = None
    remote_free: int | None = None
    remote_arch: str = "sm_90"  # its compute capability: the inspector's evidence is compiled for it

    @property
    def device_name(self) -> str:
        return self.remote_name

    @property
    def limits(self):
        return self.remote_limits

    @property
    def label(self) -> str:
        return f"cuda ({self.remote_name}, on the cluster)"

    def free_device_bytes(self) -> int | None:
        return self.remote_free

    def activate(self) -> None:
        raise RuntimeError("a cluster's GPU runs nothing in this process")


def remote_gpu(client, resources: dict):
    """The GPU of the cluster's workers that have ``resources`` (one of them asked), as a Backend whose
    requests validate here."""
    import dataclasses

    from kernels.backend.devices import DeviceLimits
    from kernels.cluster.worker_side import gpu_facts

    chosen = [w.address for w in workers(client) if all(w.resources.get(r, 0) >= n for r, n in resources.items())]
    if not chosen:
        raise ClusterError(f"no worker of the cluster has {', '.join(resources)}")
    try:
        facts = client.run(gpu_facts, workers=chosen[:1])[chosen[0]]
    except Exception as exc:  # noqa: BLE001 - the worker's failure, in one line
        raise ClusterError(f"the cluster's worker could not say what its GPU is: {one_line(exc)}") from None
    known = {f.name for f in dataclasses.fields(DeviceLimits)}
    limits = DeviceLimits(**{k: tuple(v) if isinstance(v, list) else v for k, v in facts["limits"].items()
                             if k in known})
    return RemoteGpu("cuda", 0, "", facts["name"], limits, facts["free"], facts.get("arch", "sm_90"))


@dataclass
class RemoteRun:
    """A cluster run's rows in a local run's order (each saying its worker), the peak, and whether it stopped
    early; ``device``: the result file header's device, as a worker of the run recorded it; ``ceilings``:
    what each worker measured for its rows (kernels.harness.ceilings.gathered: equal figures once)."""

    rows: list = field(default_factory=list)
    keys: list = field(default_factory=list)  # each row's key (pieces.row_key: size index, row, variant index)
    peak: object = None
    stopped: bool = False
    bad_files: list = field(default_factory=list)
    device: dict = field(default_factory=dict)
    ceilings: list = field(default_factory=list)  # Figures, each naming the worker(s) that measured it
    workers: list = field(default_factory=list)
    messages: list = field(default_factory=list)
    latency_ms: list = field(default_factory=list)  # each streamed row: its worker's send to its arrival here


class _Collector:
    """A run's arrivals: each row once (a piece run again after its worker died sends its rows again), in the
    caller's ``send`` as it comes (as ``kind``: 'row', or 'counters' for a counters batch's records), keyed
    for the merge; the first copy peak; each row's latency."""

    def __init__(self, parts, send, expected: int, out: RemoteRun, counters: bool = False, on_key=None):
        from kernels.harness.results_read import row_from_dict

        self.parts, self.send, self.expected, self.out = parts, send, expected, out
        self.keyed: dict = {}
        self.measured: list = []  # (worker, [Figure]) of each finished piece
        self.queue: queue.Queue = queue.Queue()
        self._row, self.kind = (counted_record, "counters") if counters else (row_from_dict, "row")
        self.on_key = on_key or (lambda key, row: None)

    def arrived(self, event) -> None:
        """Client.subscribe_topic's handler (on the client's event loop): queued for the caller's thread."""
        self.queue.put((time.time(), event[1]))

    def take(self, piece, seq: int, d: dict) -> None:
        key = pieces.row_key(piece, seq)
        if key not in self.keyed:
            self.keyed[key] = self._row(d, "a cluster row")
            self.send(self.kind, self.keyed[key])
            self.on_key(key, self.keyed[key])
            if self.expected:
                self.send("progress", (len(self.keyed), self.expected))

    def peak(self, gbps, how) -> None:
        """The first worker's copy peak, before its rows, as a run here sends it."""
        from kernels.harness.peak import Peak

        if self.out.peak is None:
            self.out.peak = Peak(gbps, how)
            self.send("peak", self.out.peak)

    def drain(self, wait: float = 0.0) -> None:
        """Take what came (waiting up to ``wait`` seconds for the first)."""
        while True:
            try:
                arrived, msg = self.queue.get(timeout=wait) if wait else self.queue.get_nowait()
            except queue.Empty:
                return
            wait = 0.0
            if not isinstance(msg, dict) or not isinstance(msg.get("piece"), int) \
                    or not 0 <= msg["piece"] < len(self.parts):
                continue
            if "peak" in msg:
                self.peak(*msg["peak"])
                continue
            if isinstance(msg.get("sent"), float):
                self.out.latency_ms.append((arrived - msg["sent"]) * 1e3)
            self.take(self.parts[msg["piece"]], msg["seq"], json.loads(msg["row"]))

    def finished(self, piece, result: dict) -> None:
        """A piece's return: its rows (any whose event was missed), peak, device, worker."""
        for seq, d in enumerate(result["rows"]):
            self.take(piece, seq, d)
        out = self.out
        out.stopped |= bool(result["stopped"])
        out.bad_files += [b for b in result["bad_files"] if b not in out.bad_files]
        if result["peak"] is not None:
            self.peak(result["peak"]["gbps"], result["peak"]["how"])
        out.device = out.device or result["device"]
        from kernels.harness.ceilings import Figure

        worker = f"worker {result['worker']}"
        try:
            self.measured.append((worker, [Figure.from_json(d, f"{worker}'s ceiling")
                                           for d in result.get("ceilings", [])]))
        except ValueError as exc:  # its rows stay; the figures they were judged against are not known here
            out.messages.append(str(exc))
        if result["worker"] not in out.workers:
            out.workers.append(result["worker"])


def run_bench(client, job: jobs.Job, progress=None, stop=None, resources=None, workers=None,
              parts=None, on_key=None) -> RemoteRun:
    """Run the bench ``job`` (or a counters job: its rows are CountedRecords) on the cluster, split over the
    workers that have ``resources`` (None: any), or over the worker addresses ``workers`` alone: each free
    worker is handed the next piece (longest first, its own variants preferred: kernels/cluster/pieces.py)
    the moment it is free. ``parts``: pieces made by the caller (a lesson's steps: pieces.of_requests);
    ``on_key(key, row)``: each row as it comes, with its merge key (pieces.row_key)."""
    from distributed import Event

    from kernels.cluster.worker_side import run_job
    from kernels.registry import by_name

    spec = by_name(job.request["algorithm"])
    eligible = _Eligible(client, resources, workers)
    expected = len(parts) if parts is not None else _expected_rows(job.request, spec)
    parts = list(parts) if parts is not None else pieces.split(job.request, spec, max(1, len(eligible.now())))
    out = RemoteRun()
    got = _Collector(parts, progress or (lambda kind, value: None), expected, out, job.kind == "counters", on_key)
    run_id = uuid.uuid4().hex[:12]
    topic, stop_name = f"raytracer-rows-{run_id}", f"raytracer-stop-{run_id}"
    client.subscribe_topic(topic, got.arrived)
    stop_event = Event(stop_name, client=client)

    def submit(piece, address):
        doc = jobs.to_json(jobs.Job(job.kind, {**job.request, **piece.changes}, job.files, piece.index,
                                    job.clock_control))
        # on its worker only: when that worker dies, what is left of the piece is handed out again (_HandOut)
        future = client.submit(run_job, doc, topic, stop_name, key=f"raytracer-{run_id}-{piece.index}",
                               resources=resources, workers=[address], allow_other_workers=False, pure=False)
        future.add_done_callback(lambda _: got.queue.put((time.time(), None)))  # the loop wakes at once
        return future

    hand = _HandOut(parts, submit, got.keyed)
    stop_at = None
    try:
        try:
            stop_at = _follow(client, hand, got, stop or (lambda: False), stop_event, eligible)
        except KeyboardInterrupt:  # Ctrl-C here: the workers stop too; the rows that came stay with the caller
            _quietly(stop_event.set)
            raise
        got.drain()
        for future, piece in sorted(hand.futures.items(), key=lambda fp: fp[1].index):
            if future.status == "finished":
                got.finished(piece, future.result())
            elif future.status == "error":
                exc = future.exception()
                if isinstance(exc, InputError):
                    raise exc
                out.stopped = True
                out.messages.append(f"a piece of the run failed on the cluster: {one_line(exc)}")
            else:
                out.stopped = True
        out.stopped |= bool(hand.left)  # pieces never handed out: Stop, a failure, no worker left
    finally:
        client.unsubscribe_topic(topic)
        for future in hand.futures:
            if not future.done():
                future.cancel()
        _quietly(stop_event.clear)
        _forget_problems(client, topic, set(hand.where.values()) & set(eligible.now()))
    out.stopped |= stop_at is not None
    out.rows, out.keys = pieces.merged(got.keyed), sorted(got.keyed)
    from kernels.harness.ceilings import gathered

    out.ceilings = gathered(got.measured)
    return out


@dataclass(frozen=True)
class CountedRecord:
    """One ncu run of a counters batch (a size and a launch of a piece's variants): the worker that read it
    and {variant: Measured, or the reason it has none}."""

    worker: str
    measured: dict


def counted_record(d: dict, what: str) -> CountedRecord:
    from kernels.counters.metrics import Measured

    try:
        return CountedRecord(str(d["worker"]), {str(k): v if isinstance(v, str) else Measured.from_dict(v)
                                                for k, v in d["measured"].items()})
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{what} does not parse: {exc}") from None


def run_counters(client, job: jobs.Job, progress=None, stop=None, resources=None) -> tuple[dict, dict, RemoteRun]:
    """The counters job ``job`` (jobs.counters_job) split by variant over the workers with ``resources``:
    ({(size index, launch index): {variant: Measured or reason}} as a local `bench --counters` gives it,
    {(size index, launch index, variant): the worker that read it}, the RemoteRun)."""
    out = run_bench(client, job, progress, stop, resources)
    measured, by = {}, {}
    for (si, li, _), record in zip(out.keys, out.rows):
        measured.setdefault((si, li), {}).update(record.measured)
        by.update({(si, li, name): record.worker for name in record.measured})
    return measured, by, out


class _Eligible:
    """The workers a run may use, now: those with ``resources`` (None: any), or of the addresses ``chosen``."""

    def __init__(self, client, resources, chosen):
        self.client, self.resources, self.chosen = client, resources, chosen
        self.last: list = []

    def now(self) -> list[str]:
        try:
            found = workers(self.client)
        except Exception:  # noqa: BLE001 - the scheduler not answering: the workers seen last
            return self.last
        self.last = [w.address for w in found
                     if (self.chosen is None or w.address in self.chosen)
                     and all(w.resources.get(r, 0) >= n for r, n in (self.resources or {}).items())]
        return self.last


class _HandOut:
    """The pieces not yet handed out (longest first) and those that were: each free worker gets one piece
    at a time, so the order holds to the end and the last pieces go to whichever worker is free first."""

    def __init__(self, parts, submit, keyed: dict):
        self.parts, self.keyed = parts, keyed  # every piece by its index (those made again too); the rows here
        self.left = pieces.longest_first(parts)
        self.submit = submit
        self.futures: dict = {}  # future -> its piece
        self.where: dict = {}  # future -> the worker it was handed to
        self.ran: dict = {}  # worker -> the variants it was handed (their kernels compiled there)
        self.halted = False

    def fill(self, live: list) -> None:
        if any(f.status == "error" for f in self.futures):
            self.halted = True  # a failed piece: the run ends with what it has (an InputError is raised)
        if self.halted:
            return
        busy = {w for f, w in self.where.items() if not f.done()}
        for address in live:
            if not self.left:
                return
            if address in busy:
                continue
            piece = pieces.take(self.left, self.ran.setdefault(address, set()))
            future = self.submit(piece, address)
            self.futures[future], self.where[future] = piece, address
            if piece.variant is not None:
                self.ran[address].add(piece.variant)

    def lost(self, live: list) -> None:
        """Pieces whose worker is gone (killed, restarted with a new address): their rows that came stay;
        what is left of each is handed out again, to the next free worker."""
        for future, address in list(self.where.items()):
            if future.done() or address in live:
                continue
            future.cancel()
            piece = self.futures.pop(future)
            del self.where[future]
            again = pieces.rest(piece, self.keyed, len(self.parts))
            if again is not None:
                self.parts.append(again)  # the collector finds its rows' piece by this index
                self.left = pieces.longest_first([*self.left, again])

    def done(self) -> bool:
        return (self.halted or not self.left) and all(f.done() for f in self.futures)


def _follow(client, hand: _HandOut, got: _Collector, should_stop, stop_event, eligible: _Eligible):
    """Hand out pieces and take rows as they come until every piece is done, a stop is over, or no worker
    can take the pieces left; returns when Stop was asked (None if it was not)."""
    out = got.out
    stop_at = orphaned_at = None
    live = eligible.now()
    turn = 0
    while True:
        turn += 1
        if stop_at is None:
            hand.fill(live)
        got.drain(wait=0.02)  # a row is taken the moment it comes; a piece's end wakes it too
        if hand.done():
            return stop_at
        if stop_at is None and should_stop():
            stop_event.set()
            stop_at = time.monotonic()
            hand.halted = True
        if stop_at is not None and time.monotonic() - stop_at > RESTART_AFTER_S:
            _restart_busy(client, hand.futures, out)
            return stop_at
        if turn % 25 == 0:  # twice a second: workers that left or joined
            live = eligible.now()
            if stop_at is None:
                got.drain()  # the rows a dying worker sent before it went, then what is left of its pieces
                hand.lost(live)
            orphaned_at = None if live else orphaned_at or time.monotonic()
            if orphaned_at is not None and time.monotonic() - orphaned_at > ORPHAN_AFTER_S:
                what = f"with {', '.join(eligible.resources)}" if eligible.resources else "of the run"
                out.messages.append(f"no worker {what} is left: the run stopped with {len(got.keyed)} rows")
                out.stopped = True
                return stop_at


def _forget_problems(client, topic: str, addresses) -> None:
    """The run's problems kept on its workers (their host and GPU memory) go (only live workers are asked: the
    scheduler would wait 30 s on a dead one)."""
    from kernels.cluster.worker_side import forget_problems

    if addresses:
        _quietly(lambda: client.run(forget_problems, topic, workers=sorted(addresses), wait=False,
                                    on_error="ignore"))


def _expected_rows(request: dict, spec) -> int:
    """The rows a whole run gives, where the request says it (not with variant files, whose NAMEs only their
    loading tells)."""
    if request.get("variant_files"):
        return 0
    names = request.get("variants") or ["all"]
    count = len(spec.variants) if names == ["all"] else len(names)
    return max(1, len(request.get("sizes") or [])) * pieces.rows_per_size(request, spec, count)


def _restart_busy(client, futures, out) -> None:
    """Stop asked 10 s ago and some piece still runs (a kernel that does not return): restart its worker."""
    ours = {f.key for f in futures if not f.done()}
    busy = [w for w, keys in client.processing().items() if ours & set(keys)]
    for future in futures:
        future.cancel()
    if busy:  # the worker process ends at once; its nanny starts a fresh one (restart_workers waits on it)
        from kernels.cluster.worker_side import end_worker_process

        _quietly(lambda: client.run(end_worker_process, workers=busy, wait=False))
        out.messages.append(f"{len(busy)} worker(s) did not stop within {RESTART_AFTER_S:.0f} s and were restarted")
    out.stopped = True


def _quietly(call) -> None:
    try:
        call()
    except Exception:  # noqa: BLE001 - a clean-up on a cluster that went away
        pass


@dataclass
class RemoteFrame:
    """A frame drawn on a worker (kernels.harness.frames.Frame), the worker's time for it (request to frame)
    and the round trip seen here: the difference is the transfer and Dask's scheduling."""

    frame: object
    worker_ms: float
    round_trip_ms: float
    worker: str

    @property
    def transfer_ms(self) -> float:
        return self.round_trip_ms - self.worker_ms


def render(client, request, resources=None, workers=None) -> RemoteFrame:
    """Render the RenderRequest ``request`` on a worker (one with ``resources``, or of the addresses
    ``workers``: a window's frames go to one worker, which keeps its compiled kernels and buffers)."""
    from kernels.cluster.worker_side import run_job

    start = time.perf_counter()
    future = client.submit(run_job, jobs.to_json(jobs.render_job(request)), "", "", resources=resources,
                           workers=workers, pure=False)
    try:
        out = future.result()
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - a worker's failure: one line
        raise ClusterError(f"the frame failed on the cluster: {one_line(exc)}") from None
    return RemoteFrame(out["frame"], out["worker_ms"], (time.perf_counter() - start) * 1e3, out["worker"])


def call(client, function, *args, resources=None, stop=None):
    """``function(*args)`` (one of kernels/cluster/worker_side.py's) on a worker with ``resources``: what it
    returns, an InputError as it was raised there (a GPU without Nsight Compute, say), any other failure as
    one line. ``stop`` (a callable, checked ten times a second): passed on to ``function`` as a Stop it
    watches (its ``stop_name``, a distributed Event); stopped, what it returns by RESTART_AFTER_S later, else
    None (the future cancelled)."""
    from distributed import Event

    event, kwargs = None, {}
    if stop is not None:
        name = f"raytracer-stop-{uuid.uuid4().hex[:12]}"
        event, kwargs = Event(name, client=client), {"stop_name": name}
    try:
        future = client.submit(function, *args, resources=resources, pure=False, **kwargs)
        asked = None
        while stop is not None and not future.done():
            if asked is None and stop():
                event.set()
                asked = time.monotonic()
            if asked is not None and time.monotonic() - asked > RESTART_AFTER_S:
                future.cancel()
                return None
            time.sleep(0.1)
        return future.result()
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - the worker's failure, in one line
        raise ClusterError(f"{function.__name__} failed on the cluster: {one_line(exc)}") from None
    finally:
        if event is not None:
            _quietly(event.clear)


class LessonPlace:
    """Where a lesson's steps run when they run on a cluster (:func:`kernels.lessons.run.run_lesson`'s
    ``place``): each step's request on a worker with ``resources``, and the copy peak measured there."""

    def __init__(self, client, resources=None):
        self.client, self.resources = client, resources
        self.workers: list = []

    def run(self, request, stop) -> list:
        out = run_bench(self.client, jobs.bench_job(request), stop=stop, resources=self.resources)
        self.workers += [w for w in out.workers if w not in self.workers]
        return out.rows

    def run_steps(self, requests: list, stop, arrived) -> None:
        """Every step request at once, a piece each, split over the workers (the longest first, as a sweep's
        pieces): ``arrived(index in requests, row)`` as each row comes, in any order."""
        docs = [jobs.bench_job(r).request for r in requests]
        out = run_bench(self.client, jobs.Job("bench", docs[0]), stop=stop, resources=self.resources,
                        parts=pieces.of_requests(docs), on_key=lambda key, row: arrived(key[0], row))
        self.workers += [w for w in out.workers if w not in self.workers]

    def measure_steps(self, lesson, sizes, backend, on_progress=None, should_stop=None) -> dict:
        """`lesson --counters` here: each ncu run of kernels.lessons.measured (a size, a launch and the steps'
        variants) a counters piece, split over the workers at once; {(n, step index): Measured or reason}.
        A worker that cannot read counters raises CannotMeasure; a failed piece, MeasureFailed."""
        from kernels.counters.tool import MeasureFailed
        from kernels.lessons import measured

        plan = measured.batch_requests(lesson, sizes, backend)
        if not plan:
            return {}
        docs = [r.to_json() for r, _ in plan]
        out: dict = {}

        def arrived(key, record):
            request, steps = plan[key[0]]
            measured.take(out, lesson, request.sizes[0], steps, record.measured)
            if on_progress:
                on_progress(f"{', '.join(record.measured)} read on worker {record.worker} (n = "
                            f"{request.sizes[0]:,})")

        run = run_bench(self.client, jobs.Job("counters", docs[0], clock_control=measured.CLOCK_CONTROL),
                        stop=should_stop, resources=self.resources, parts=pieces.of_requests(docs), on_key=arrived)
        self.workers += [w for w in run.workers if w not in self.workers]
        if run.messages and not (should_stop and should_stop()):
            raise MeasureFailed("; ".join(run.messages))
        return out

    def copy_peak(self, backend):
        from kernels.cluster.worker_side import copy_peak
        from kernels.harness.peak import Peak

        found = self.client.submit(copy_peak, backend.kind, resources=self.resources, pure=False).result()
        return Peak(found["gbps"], found["how"])


def result_of(out: RemoteRun, job: jobs.Job, address: str, command=None):
    """A result file (kernels/harness/results.py) of a cluster run: its rows in a local run's order, each with
    its worker, and the device as the run's first worker recorded it, with the cluster's address and the
    ceilings every worker measured."""
    from kernels.harness import results

    device = {**(out.device or {"name": "?"}), "cluster": address,
              "ceilings": [f.to_json() for f in out.ceilings]}  # every worker's, not the first one's alone
    return results.Result(target=job.request["algorithm"], rows=list(out.rows), device=device,
                          request=results._plain(job.request), partial=out.stopped, **results.provenance(command))
