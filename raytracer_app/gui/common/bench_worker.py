"""The benchmark worker: runs a panel's BenchRequest through the service's ``run_bench`` in its own thread,
streaming rows as they finish."""

from __future__ import annotations

import traceback

from PyQt6.QtCore import pyqtSignal, pyqtSlot

from kernels.backend.child import SimulatorProcess
from kernels.errors import InputError
from kernels.service.bench import run_bench
from raytracer_app.gui.common.run_on import resources_for, run_on
from raytracer_app.gui.common.workers import COMPUTE_LOCK, JobWorker, describe


class BenchWorker(JobWorker):
    """Runs BenchRequests through the service's ``run_bench`` in its own thread, streaming rows as they come."""

    started = pyqtSignal(object)  # the request
    peakReady = pyqtSignal(object)  # bench.Peak
    rowReady = pyqtSignal(object)  # bench.Row
    progress = pyqtSignal(int, int)  # done, total
    ceilingsReady = pyqtSignal(object)  # the run's measured ceilings (kernels.harness.ceilings.Figure), before finished
    finished = pyqtSignal(object, bool)  # rows, stopped
    failed = pyqtSignal(str)

    def __init__(self):
        super().__init__()
        self.sim = SimulatorProcess()  # simulator runs happen in this child: Stop ends it at once

    def _relay(self, kind: str, value) -> None:
        if kind == "peak":
            self.peakReady.emit(value)
        elif kind == "row":
            self.rowReady.emit(value)
        elif kind == "progress":
            self.progress.emit(*value)

    @pyqtSlot(object)
    def _run(self, request) -> None:
        rows: list = []
        measured: list = []  # what the rows are judged against: measured here, or by the cluster's workers
        try:
            self.started.emit(request)
            client = run_on().client
            if client is not None:  # *Run on* a cluster: the same request on its workers, rows as they come
                from kernels.cluster import jobs, remote

                run = remote.run_bench(client, jobs.bench_job(request), self._relay, self._stop.is_set,
                                       resources=resources_for(client, request.backend))
            else:  # a simulator run goes to this worker's child process, so that Stop ends it at once
                run = run_bench(request, self._relay, self._stop.is_set, simulator=self.sim, lock=COMPUTE_LOCK)
            rows, measured = run.rows, run.ceilings
        except Exception as exc:  # noqa: BLE001 - a bad value (InputError naming the constraint) or a broken module
            if not isinstance(exc, InputError):
                traceback.print_exc()
            self.failed.emit(describe(exc))
        finally:
            stopped = self._stop.is_set()
            self._running.clear()
            self.ceilingsReady.emit(measured)
            self.finished.emit(rows, stopped)
