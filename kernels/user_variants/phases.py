"""Where a Run's time goes, phase by phase (load, problem, ship, copy, compile, time, verify): measured in
the app and in the child, shown by the editor and printed by scripts/variant_run_time.py. Imports no
numba."""

from __future__ import annotations

import contextlib
import time

# the order the editor shows them in; a phase that did not happen (e.g. no compile on a re-run) is left out
ORDER = ("start", "load", "problem", "ship", "copy", "compile", "time", "verify")


class Phases(dict):
    """{phase: seconds}; ``with phases.of("compile"):`` adds the block's wall time to that phase."""

    @contextlib.contextmanager
    def of(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[name] = self.get(name, 0.0) + time.perf_counter() - t0

    def text(self) -> str:
        """'load 0.05 s, compile 0.61 s, ...' in ORDER, then any other phase."""
        names = [n for n in ORDER if n in self] + [n for n in self if n not in ORDER]
        return ", ".join(f"{n} {self[n]:.2f} s" for n in names)
