"""A sweep's rows that would take far longer than ``--max-seconds`` are skipped with their estimate, before
they run: a row's one call at size n is estimated from the same variant's and launch's last timed row at a
smaller size, scaled linearly in n (every target's work grows at least linearly with its n: elements,
keys, spheres). One call estimated past FAR_PAST x the limit is not run: a row needs a warm-up and a timed
call at least, so it would take four times the limit or more (a CPU twin at a million spheres took minutes
in a GPU sweep)."""

from __future__ import annotations

from kernels.backend import Skip, SkipKind

FAR_PAST = 2.0  # one call estimated past this many times --max-seconds: skipped


def relative_cost(n: int | None) -> float:
    """A row's cost at size ``n`` relative to another's: linear in n, the one model of this module (a cluster
    orders a sweep's pieces by it, kernels/cluster/pieces.py). No size (a target without one): 1."""
    return float(n) if n else 1.0


class Guard:
    """Remembers each (variant, launch)'s last timed call and says which rows to skip."""

    def __init__(self, max_seconds: float, option: str = "--max-seconds"):
        self.max_seconds, self.option = float(max_seconds), option
        self.last: dict = {}  # (variant name, launch) -> (n, median ms of one call)

    def skip(self, variant: str, launch, n: int) -> Skip | None:
        """A Skip naming the estimate when one call at ``n`` would take far past the limit, else None."""
        seen = self.last.get((variant, launch))
        if seen is None or n <= seen[0]:
            return None
        n0, ms = seen
        estimate_s = ms * (relative_cost(n) / relative_cost(n0)) / 1e3
        if estimate_s <= FAR_PAST * self.max_seconds:
            return None
        return Skip(SkipKind.TOO_LONG, f"estimated {estimate_s:,.3g} s a call at n {n:,} ({ms:,.3g} ms at n {n0:,}, "
                                       f"linear in n), far past {self.option} {self.max_seconds:g}: not run")

    def record(self, row, launch) -> None:
        if row.timing is not None and row.ok and row.n > 0:
            self.last[(row.variant, launch)] = (row.n, row.timing.median_ms)
