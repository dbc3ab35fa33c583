"""What every tool's worker shares: JobWorker (one job at a time on its own thread, Stop polled), WorkerThread,
and COMPUTE_LOCK. Each tool's own workers are in its room (render/worker.py, benchmarks/worker.py, ...).

Workers live in their own QThread and talk to the GUI through queued signals only. One lock serialises
compute calls across workers: the CUDA simulator swaps module globals while a kernel runs, so two
threads must never launch at once (and on the CPU two parallel kernels would only slow each other).
"""

from __future__ import annotations

import threading

from PyQt6.QtCore import QObject, Qt, QThread, pyqtSignal

from kernels.backend.child import ChildFailed
from kernels.errors import InputError, one_line

COMPUTE_LOCK = threading.RLock()
ORPHANS: list = []  # worker threads still inside a kernel when their window closed (see run_gui)


def describe(exc: BaseException) -> str:
    """One line for the user: InputError messages as they are, anything else with its type."""
    if isinstance(exc, (InputError, ChildFailed)):  # a child's message is already one line
        return str(exc)
    return one_line(exc)  # numba's errors span many lines, with terminal colours


class JobWorker(QObject):
    """A worker object living on its own thread that runs one job at a time: ``start(job)`` queues
    ``_run(job)`` there; ``stop()`` sets ``_stop``, which the job polls; ``running()`` is true from ``start``
    until the job clears ``_running`` (before it reports that it finished)."""

    _start = pyqtSignal(object)

    def __init__(self):
        super().__init__()
        self._stop = threading.Event()
        self._running = threading.Event()
        self._start.connect(self._run, Qt.ConnectionType.QueuedConnection)

    def start(self, job) -> None:
        self._stop.clear()
        self._running.set()
        self._start.emit(job)

    def stop(self) -> None:
        self._stop.set()

    def running(self) -> bool:
        return self._running.is_set()


class WorkerThread(QThread):
    """A QThread running one worker object's event loop; ``shutdown`` quits and joins it."""

    def __init__(self, worker: QObject, name: str):
        super().__init__()
        self.setObjectName(name)
        self.worker = worker
        worker.moveToThread(self)

    def shutdown(self, timeout_ms: int = 30000) -> bool:
        self.quit()
        done = self.wait(timeout_ms)
        if done:
            ender = getattr(self.worker, "end_children", None)
            child = getattr(self.worker, "sim", None)
            if ender is not None:
                ender()
            elif child is not None:
                child.end()
        return done
