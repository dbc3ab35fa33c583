"""A sweep split into pieces that workers run at once, and their rows merged back in a local run's order.

A local run goes problem by problem (each size, each swept option's values in turn), launch by launch,
variant by variant. A piece is one size and one variant (or one size and every variant, when the rows of a
problem belong together: repeats spread over shuffled rounds, fresh processes, variant files whose NAMEs
only their loading tells); its rows come in the order (swept values, launch). Each row is keyed (size,
row within the piece, variant), which sorts into the local order. The largest sizes are started first
(kernels/cluster/remote.py), so that no worker is left with a long piece while the others idle."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Piece:
    index: int
    changes: dict  # what this piece changes in the request's JSON (sizes, variants)
    size_index: int
    variant_index: int


def split(request: dict, spec) -> list[Piece]:
    """The pieces of the request ``request`` (a BenchRequest's JSON, settled) of the algorithm ``spec``."""
    sizes = list(request.get("sizes") or [])
    by_size = spec.size is not None and request.get("input") is None and len(sizes) > 1
    names = list(request.get("variants") or ["all"])
    names = [v.name for v in spec.variants if names == ["all"] or v.name in names]  # a local run's order
    by_variant = (request.get("rounds", 1) == 1 and request.get("processes", 1) == 1
                  and not request.get("variant_files") and len(names) > 1)
    size_parts = [{"sizes": [n]} for n in sizes] if by_size else [{}]
    variant_parts = [{"variants": [v]} for v in names] if by_variant else [{}]
    pieces = []
    for i, size in enumerate(size_parts):
        for j, variant in enumerate(variant_parts):
            pieces.append(Piece(len(pieces), {**size, **variant}, i, j))
    return pieces


def row_key(piece: Piece, seq: int) -> tuple:
    return piece.size_index, seq, piece.variant_index


def merged(keyed: dict) -> list:
    """The rows of ``keyed`` ({row_key: row}) in a local run's order."""
    return [keyed[k] for k in sorted(keyed)]
