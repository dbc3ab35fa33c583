"""A sweep split into pieces that workers run at once, the order they are handed out in, and their rows
merged back in a local run's order.

A local run goes problem by problem (each size, each swept option's values in turn), launch by launch,
variant by variant. A worker process compiles every kernel it runs (0.5-1 s a variant), so a piece is one
variant with all its sizes, ascending, where the rows allow it: the variant's kernels compile on one worker,
that worker's problems are built once for all the variants it runs (kernels/cluster/problem_cache.py), and
the guard that skips a row far past --max-seconds (kernels/harness/estimate.py) sees the variant's smaller
sizes first, as in a local run. When whole variants would leave workers idle at the end (14 equal variants
over 4 GPUs: 4, 4, 3, 3), a GPU kernel's sizes are cut into runs of at most the largest row's estimate; host
code and the simulator keep theirs whole (a call there can take seconds: the guard must see the smaller
sizes first). Where the rows of a problem belong together (repeats spread over shuffled rounds, fresh
processes, variant files whose NAMEs only their loading tells), a piece is one size and every variant.

Pieces are handed out longest first by the estimate (linear in n, estimate.relative_cost): a free worker
takes the longest piece left (LPT scheduling: no big row starts at the tail), preferring, among those within
AFFINITY_SLACK of it, one of a variant it already ran (its kernels compiled). Each row is keyed (size, row
within the size, variant), which sorts into the local order."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kernels.harness.estimate import relative_cost

BALANCE_SLACK = 0.05  # whole variants are kept when their longest-first spread is this close to an even one
AFFINITY_SLACK = 0.1  # a free worker prefers its own variant among pieces this close to the longest left


@dataclass(frozen=True)
class Piece:
    index: int
    changes: dict  # what this piece changes in the request's JSON (sizes, variants)
    size_indices: tuple  # the request's sizes it runs (their indices), ascending
    variant_index: int  # its variant's place in a local run (0 for a piece of every variant)
    rows_per_size: int | None = None  # its rows at each of its sizes (a piece of one variant and its sizes)
    cost: float = 1.0  # the estimate its order comes from (relative)
    variant: str | None = None  # the one variant it runs; None: every variant


def split(request: dict, spec, workers: int = 1) -> list[Piece]:
    """The pieces of the request ``request`` (a BenchRequest's JSON, settled) of the algorithm ``spec`` for
    ``workers`` workers, in a local run's order."""
    sizes = list(request.get("sizes") or [])
    sized = spec.size is not None and request.get("input") is None and len(sizes) > 1
    names = list(request.get("variants") or ["all"])
    chosen = [v for v in spec.variants if names == ["all"] or v.name in names]  # a local run's order
    by_variant = (request.get("rounds", 1) == 1 and request.get("processes", 1) == 1
                  and not request.get("variant_files") and len(chosen) > 1)
    if not by_variant:
        if not sized:
            return [Piece(0, {}, (0,), 0, cost=_cost(sizes[:1]))]
        return [Piece(i, {"sizes": [n]}, (i,), 0, cost=_cost([n])) for i, n in enumerate(sizes)]
    runs = {v.name: [list(range(len(sizes)))] if sized else [[0]] for v in chosen}
    if sized and workers > 1 and _on_a_gpu(request) and not _balanced(
            [_cost(sizes) for _ in chosen], workers):
        cap = max(relative_cost(n) for n in sizes)
        for v in chosen:
            if not v.runs_on_host:
                runs[v.name] = _cut(sizes, cap)
    per_size = rows_per_size(request, spec) if sized else None
    out = []
    for j, v in enumerate(chosen):
        for run in runs[v.name]:
            changes = {"variants": [v.name]}
            if sized:
                changes["sizes"] = [sizes[i] for i in run]
            out.append(Piece(len(out), changes, tuple(run), j, per_size,
                             _cost([sizes[i] for i in run] if sized else sizes[:1]), v.name))
    return out


def of_requests(requests: list[dict]) -> list[Piece]:
    """A run of separate requests, each with its own options and launch (a lesson's steps, size by size): a
    piece each, its rows keyed by its place in ``requests``, so the merge keeps their order."""
    return [Piece(k, dict(r), (k,), 0, cost=_cost(list(r.get("sizes") or [])[:1]),
                  variant=next(iter(r.get("variants") or []), None)) for k, r in enumerate(requests)]


def rows_per_size(request: dict, spec, variants: int = 1) -> int:
    """The rows ``variants`` variants give at one size: a row per swept combination and launch."""
    swept = 1
    for option in spec.options:
        if option.sweep:
            swept *= max(1, len((request.get("options") or {}).get(option.name) or [None]))
    return swept * max(1, len(request.get("launches") or [])) * variants


def _on_a_gpu(request: dict) -> bool:
    from kernels.backend import choice

    return choice(str((request.get("backend") or {}).get("kind", "cpu"))).is_gpu


def _cost(sizes) -> float:
    return sum(relative_cost(n) for n in sizes) if sizes else relative_cost(None)


def _cut(sizes: list, cap: float) -> list[list[int]]:
    """The indices of ``sizes`` (ascending) in consecutive runs whose estimate is at most ``cap`` each (a
    size past it alone)."""
    runs, run, total = [], [], 0.0
    for i, n in enumerate(sizes):
        if run and total + relative_cost(n) > cap:
            runs.append(run)
            run, total = [], 0.0
        run.append(i)
        total += relative_cost(n)
    return runs + [run]


def spread(costs, workers: int) -> float:
    """The longest worker's share when ``costs`` go out longest first, each to the least loaded worker."""
    loads = [0.0] * max(1, workers)
    for c in sorted(costs, reverse=True):
        loads[loads.index(min(loads))] += c
    return max(loads)


def _balanced(costs, workers: int) -> bool:
    even = max(sum(costs) / workers, max(costs))
    return spread(costs, workers) <= even * (1 + BALANCE_SLACK)


def longest_first(parts) -> list[Piece]:
    return sorted(parts, key=lambda p: (-p.cost, p.index))


def take(left: list, ran: set) -> Piece:
    """Remove from ``left`` (longest first) and return the piece a free worker that ran the variants ``ran``
    takes next: the longest, or one of its own variants nearly as long."""
    longest = left[0].cost
    for k, p in enumerate(left):
        if p.cost < longest * (1 - AFFINITY_SLACK):
            break
        if p.variant is not None and p.variant in ran:
            return left.pop(k)
    return left.pop(0)


def rest(piece: Piece, keyed: dict, index: int) -> Piece | None:
    """What is left of ``piece`` once the rows of ``keyed`` came (its worker died), numbered ``index``: its
    sizes whose rows are not all here (a piece of every variant: the whole piece again; a row that comes twice
    is kept once); None when every row came."""
    sizes = piece.changes.get("sizes")
    if not piece.rows_per_size or not sizes:
        return replace(piece, index=index)
    left = [(i, n) for i, n in zip(piece.size_indices, sizes)
            if sum(k[0] == i and k[2] == piece.variant_index for k in keyed) < piece.rows_per_size]
    if not left:
        return None
    return replace(piece, index=index, changes={**piece.changes, "sizes": [n for _, n in left]},
                   size_indices=tuple(i for i, _ in left), cost=_cost([n for _, n in left]))


def row_key(piece: Piece, seq: int) -> tuple:
    if piece.rows_per_size:
        i, seq = divmod(seq, piece.rows_per_size)
        return piece.size_indices[i], seq, piece.variant_index
    return piece.size_indices[0], seq, piece.variant_index


def merged(keyed: dict) -> list:
    """The rows of ``keyed`` ({row_key: row}) in a local run's order."""
    return [keyed[k] for k in sorted(keyed)]
