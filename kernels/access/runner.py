"""The app's side of a traced run: the job goes to a simulator child process (``kernels/service/child.py``),
so the app never runs the simulator or its hooks itself, a run can be stopped within a second (the child is
ended), and the next run starts a fresh child."""

from __future__ import annotations

import threading

from kernels.access.job import Refused
from kernels.access.model import AccessResult
from kernels.access.tracejob import TraceJob
from kernels.errors import InputError
from kernels.backend.child import SimulatorProcess

_PROCESS: SimulatorProcess | None = None
_LOCK = threading.Lock()


def process() -> SimulatorProcess:
    """The child process traced runs use (started on the first run)."""
    global _PROCESS
    with _LOCK:
        if _PROCESS is None:
            _PROCESS = SimulatorProcess(simulate=True, name="access-trace")
        return _PROCESS


def end() -> None:
    """End the child process now (a no-op when none runs)."""
    with _LOCK:
        if _PROCESS is not None:
            _PROCESS.end()


def trace(job: TraceJob, should_stop=lambda: False, on_progress=None, child: SimulatorProcess | None = None
          ) -> AccessResult:
    """Run ``job`` in the child and return its tallies. ``on_progress((kernel, blocks done, blocks to
    trace))`` hears each traced block; ``should_stop()`` turning true ends the child and raises
    :class:`kernels.backend.child.Cancelled`. Bad input is InputError (one line); a failure in the run is
    ChildFailed (one line)."""
    def on_message(kind, value):
        if kind == "progress" and on_progress is not None:
            on_progress(value)

    answer = (child or process()).call("access", job, should_stop, on_message)
    if isinstance(answer, Refused):
        raise InputError(answer.message)
    return answer
