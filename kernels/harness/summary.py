"""The sentences after a bench's table: how `best` compares with the fastest library peer, within or beyond the
two rows' noise, and what share of the copy and spec bandwidth it reaches."""

from __future__ import annotations

from typing import Sequence

from kernels.backend import SkipKind
from kernels.harness.peak import Peak
from kernels.harness.rows import Row
from kernels.timing import Timing


def summary_lines(rows: Sequence[Row], peak: Peak | None, variants: Sequence) -> list[str]:
    """For each problem, how each `best` row compares with the fastest library peer (the variants of
    kind 'peer'): the speed ratio with both rows' noise, and 'a loss' when best is slower; then the copy
    peak and spec percentages, and which peers are not installed."""
    peer_names = {v.name for v in variants if v.kind == "peer"}
    lines = []
    by_problem: dict[tuple, list[Row]] = {}
    for r in rows:
        by_problem.setdefault((r.op, r.dtype, r.n), []).append(r)
    for (op, dtype, n), group in by_problem.items():
        bests = [r for r in group if r.variant == "best" and r.ok and r.timing]
        peers = [r for r in group if r.variant in peer_names and r.ok and r.timing]
        missing = sorted({r.variant for r in group if r.skip and r.skip.kind is SkipKind.MISSING_LIBRARY})
        for b in bests:
            parts = [f"best ({op}, {dtype}, n={n}): {b.timing.median_ms:.4f} ms{_noise_text(b.timing)}"]
            if peers:
                fastest = min(peers, key=lambda r: r.timing.median_ms)
                parts.append(comparison_text(b.timing, fastest.timing, fastest.variant))
            cold_peers = [r for r in peers if r.cold_timing is not None]
            if b.cold_timing is not None and cold_peers:
                fastest = min(cold_peers, key=lambda r: r.cold_timing.median_ms)
                parts.append("cold (L2 flushed): " + comparison_text(b.cold_timing, fastest.cold_timing, fastest.variant))
            if b.gbps and peak and peak.gbps:
                parts.append(f"{b.gbps / peak.gbps:.0%} of copy bandwidth (measured, read + write)")
            if b.pct_of_spec is not None:
                parts.append(f"{b.pct_of_spec:.0f}% of the spec bandwidth ({b.spec_gbps:.0f} GB/s)")
            for name in missing:
                parts.append(f"{name}: not installed")
            lines.append("; ".join(parts))
    return lines


def _noise_text(t: Timing) -> str:
    return "" if t.noise is None else f" (noise {100 * t.noise:.1f}%)"


def comparison_text(best: Timing, peer: Timing, peer_name: str) -> str:
    """'best is 1.04x the speed of <peer> (...; noise 2.0% / 1.5%): a win', or '0.96x ...: a loss'; a gap smaller
    than the two noises together is still named, with 'within the noise'."""
    ratio = peer.median_ms / best.median_ms  # > 1: best is faster
    noise = (best.noise or 0.0) + (peer.noise or 0.0)
    verdict = "a win" if ratio > 1 else "a tie" if ratio == 1 else "a loss"
    if verdict != "a tie" and abs(ratio - 1) <= noise:
        verdict += " within the noise"
    return (f"best is {ratio:.2f}x the speed of {peer_name} ({peer.median_ms:.4f} ms; noise "
            f"{100 * (best.noise or 0):.1f}% / {100 * (peer.noise or 0):.1f}%): {verdict}")
