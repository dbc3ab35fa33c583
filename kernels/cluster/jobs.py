"""A job a cluster worker runs, as JSON: its kind ('bench' or 'render'), its request as that request's own JSON
(:meth:`kernels.service.bench_request.BenchRequest.to_json`), and the text of each variant file it names, so a
user's file travels with the request (the worker writes it to a folder of its own and runs it there).

:func:`to_json` and :func:`from_json` are the one pair every caller goes through: a job that does not parse is
an InputError naming the field."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from kernels.errors import InputError

KINDS = ("bench", "render", "counters")  # counters: `bench --counters`, one ncu run per size and launch
SCHEMA = "raytracer-app/cluster-job"
MAX_FILE_BYTES = 1 << 20  # a variant file is source code; the one reader's limit for it


@dataclass(frozen=True)
class Job:
    """``request``: the request's JSON (a BenchRequest's with ``variant_files`` as the files' names);
    ``files``: each variant file's name -> its text, in the request's order; ``piece``: which part of a
    split sweep this is (its index, None for a whole run); ``clock_control``: a counters job's ncu setting."""

    kind: str
    request: dict
    files: tuple[tuple[str, str], ...] = ()
    piece: int | None = None
    clock_control: str = "none"


def to_json(job: Job) -> dict:
    return {"schema": SCHEMA, "kind": job.kind, "request": dict(job.request),
            "files": [{"name": n, "text": t} for n, t in job.files], "piece": job.piece,
            "clock_control": job.clock_control}


def from_json(doc) -> Job:
    if not isinstance(doc, Mapping) or doc.get("schema") != SCHEMA:
        raise InputError(f"a cluster job must be a JSON object with schema {SCHEMA!r}")
    kind = doc.get("kind")
    if kind not in KINDS:
        raise InputError(f"a cluster job's kind {kind!r} is not one of {', '.join(KINDS)}")
    request = doc.get("request")
    if not isinstance(request, Mapping):
        raise InputError("a cluster job's request must be a JSON object")
    files = doc.get("files") or []
    if not isinstance(files, list) or not all(isinstance(f, Mapping) and isinstance(f.get("name"), str)
                                              and isinstance(f.get("text"), str) for f in files):
        raise InputError("a cluster job's files must be a list of {name, text} objects")
    piece = doc.get("piece")
    if piece is not None and (not isinstance(piece, int) or isinstance(piece, bool) or piece < 0):
        raise InputError(f"a cluster job's piece {piece!r} must be a whole number or null")
    clock_control = doc.get("clock_control", "none")
    if not isinstance(clock_control, str):
        raise InputError(f"a cluster job's clock_control {clock_control!r} must be text")
    return Job(kind, dict(request), tuple((f["name"], f["text"]) for f in files), piece, clock_control)


def bench_job(request) -> Job:
    """The job of a BenchRequest: its variant files read here, by the one input reader, and sent as their text
    under their file names (made unique)."""
    from kernels.io.reader import read_bytes

    doc = request.to_json()
    names, files = [], []
    for path in doc.get("variant_files") or []:
        text = read_bytes(path, "--variant-file", MAX_FILE_BYTES, "a variant file is source code").decode(
            "utf-8", errors="replace")
        name = _unique(Path(path).name or "variant.py", names)
        names.append(name)
        files.append((name, text))
    return Job("bench", {**doc, "variant_files": names}, tuple(files))


def counters_job(request, variants, clock_control: str = "none") -> Job:
    """The counters batch of `bench --counters` for the BenchRequest ``request``: Nsight Compute's counters for
    the built-in GPU variants ``variants`` at each size and launch, as a local run reads them (each swept
    option at its first value: the profiled child builds a request's first problem; no variant files, one
    process, one round), so the sweep's pieces (kernels/cluster/pieces.py) are its variants."""
    doc = request.to_json()
    swept = {o.name for o in request.spec.options if o.sweep}
    options = {k: (list(v)[:1] if k in swept and isinstance(v, (list, tuple)) else v)
               for k, v in (doc.get("options") or {}).items()}
    doc.update(variants=list(variants), variant_files=[], processes=1, rounds=1, options=options)
    return Job("counters", doc, clock_control=clock_control)


def _unique(name: str, taken: list) -> str:
    stem, suffix, i = Path(name).stem, Path(name).suffix or ".py", 1
    out = f"{stem}{suffix}"
    while out in taken:
        i += 1
        out = f"{stem}-{i}{suffix}"
    return out


@dataclass
class WrittenFiles:
    """A job's variant files written into ``folder`` (the worker's): their paths in the request's order."""

    folder: Path
    paths: list = field(default_factory=list)


def write_files(job: Job, folder: Path) -> WrittenFiles:
    out = WrittenFiles(Path(folder))
    for name, text in job.files:
        path = out.folder / Path(name).name  # a name only: never a path the sender chose
        path.write_text(text, encoding="utf-8")
        out.paths.append(str(path))
    return out


# --- a frame: RenderRequest <-> JSON (its params through its render kind's codec) ------------------------------


def render_job(request) -> Job:
    """The job of a RenderRequest (kernels/service/requests.py)."""
    r = request
    doc = {"kind": r.kind, "backend": {"kind": r.backend.kind, "device": r.backend.device}, "size": list(r.size),
           "block": list(r.block), "params": r.renderable.params_to_json(r.params), "repeats": r.repeats,
           "seq": r.seq, "timed": r.timed}
    return Job("render", doc)


def render_request(doc: Mapping, backend=None):
    """The RenderRequest ``doc`` (from :func:`render_job`) describes, validated again on ``backend`` (default:
    the recorded kind on device 0, a worker's one GPU)."""
    from kernels.backend import Backend
    from kernels.registry import renderable_named
    from kernels.service.requests import RenderRequest

    try:
        values = dict(doc)
        backend = backend or Backend(str(values.pop("backend")["kind"]), 0)
        values.pop("backend", None)
        kind = renderable_named(str(values.pop("kind")))
        params = kind.params_from_json(values.pop("params"))
        values["size"], values["block"] = tuple(values["size"]), tuple(values["block"])
        return RenderRequest(kind.name, backend, params=params, **values)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"a cluster render request does not parse: {exc}") from None
