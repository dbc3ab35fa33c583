"""The variant editor's worker: loads, verifies and times a user's variant file (its code runs only in the
user-variant child process, kernels.user_variants), or compiles it beside a built-in for the Inspector,
in its own thread.

A Run's time goes to phases (kernels.harness.user_calls) the editor shows: the child is started and
warmed when the editor is shown, with the panel's problem made and shipped to it then; the problem (its
input and its reference result) is kept for the next Run at the same size, op, dtype and seed, and the
child keeps its arrays, so a re-run without edits only copies, times and verifies. A child ended by the
watchdog or a crash is started and warmed again after the Run reports."""

from __future__ import annotations

import time
from dataclasses import dataclass

from PyQt6.QtCore import Qt, pyqtSignal, pyqtSlot

from kernels.errors import InputError
from kernels.harness import bench
from kernels.backend.child import Cancelled
from raytracer_app.gui.common.workers import JobWorker, describe



@dataclass
class VariantJob:
    """One Run (or Compare) of the variant editor: the file as saved, and the benchmark panel's request (its
    size, options and repeats), whose problem the file runs on."""

    path: str
    request: object  # a BenchRequest of one size on the TARGET's algorithm, whose panel the row joins
    watchdog_s: float
    compare_with: str | None = None  # set: compile the file and this built-in for the Inspector instead
    arch: str = "sm_90"

    @property
    def backend(self):
        return self.request.backend

    @property
    def spec(self):
        return self.request.spec

    @property
    def n(self) -> int:
        return self.request.sizes[0]


class VariantWorker(JobWorker):
    """``rowReady(row, phases)``: a Run's row and where its time went; ``failed(line)``; ``compared``."""

    rowReady = pyqtSignal(object, object)  # Row, Phases
    failed = pyqtSignal(str)  # one line; 'path:line: ...' when the file does not load or compile
    compared = pyqtSignal(object, object)  # KernelReport of the file, of the built-in
    finished = pyqtSignal()
    warmed = pyqtSignal(float)  # seconds the warm-up took (child start, numba, context, the problem shipped)
    _warm = pyqtSignal(object, object)

    def __init__(self):
        super().__init__()
        self._warm.connect(self._warm_up, Qt.ConnectionType.QueuedConnection)
        self._problem: tuple | None = None  # (key, problem): the last one made, its reference with it

    def warm(self, backend, job: VariantJob | None = None) -> None:
        """Start the user-variant child for ``backend`` now (numba imported, CUDA context made) and, given
        the panel's problem as ``job``, make that problem and ship it to the child."""
        self._warm.emit(backend, job)

    @pyqtSlot(object, object)
    def _warm_up(self, backend, job) -> None:
        from kernels.user_variants import loader

        if self._stop.is_set():
            return
        t0 = time.perf_counter()
        try:
            problem = self.problem(job)[0] if job is not None and job.backend is backend else None
            loader.warm(backend, problem)
            if problem is not None:
                problem.expected  # noqa: B018 - the reference, computed now rather than at the Run
        except Exception:  # noqa: BLE001 - a Run starts the child again and says what is wrong
            pass
        self.warmed.emit(time.perf_counter() - t0)

    def problem(self, job: VariantJob):
        """(the job's problem, whether it was made now): kept for the next job of the same key."""
        key = (job.spec.name, job.request.sizes, job.request.options, job.request.seed)
        if self._problem is None or self._problem[0] != key:
            self._problem = None  # the old one's memory goes before the new one is made
            problem = next(job.request.problems())
            self._problem = (key, problem)
            return problem, True
        return self._problem[1], False

    @pyqtSlot(object)
    def _run(self, job: VariantJob) -> None:
        from kernels.user_variants import loader
        from kernels.harness.user_calls import Phases

        phases = Phases()
        try:
            if not loader.is_warm(job.backend):
                with phases.of("start"):
                    loader.warm(job.backend)
            with phases.of("load"):
                variant = loader.load(job.path, job.backend, job.watchdog_s, self._stop.is_set)
            if variant.run.target != job.spec.name:
                raise InputError(f"{job.path} declares TARGET {variant.run.target!r}; choose {variant.run.target} "
                                 f"beside New, or change its TARGET")
            if job.compare_with:
                self.compared.emit(*_compare_file(variant, job))
                return
            with phases.of("problem"):
                problem, made = self.problem(job)
                problem.expected  # noqa: B018 - its reference (kept with it), not counted as verify
            if not made:
                del phases["problem"]
            variant.run.should_stop = self._stop.is_set
            t0 = time.perf_counter()
            (row,) = bench.run(job.request, [variant], [problem])
            phases.update(variant.run.phases)
            phases["verify"] = max(0.0, time.perf_counter() - t0 - sum(variant.run.phases.values()))
            if variant.run.bad_file:
                self.failed.emit(variant.run.bad_file)
            elif not self._stop.is_set():
                self.rowReady.emit(row, phases)
        except Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001 - a file that does not load: one line, with its file and line
            self.failed.emit(describe(exc))
        finally:
            self._running.clear()
            self.finished.emit()
            if not loader.is_warm(job.backend) and not self._stop.is_set():
                self.warm(job.backend, job)  # ended by the watchdog or a crash: ready again for the next Run


def _compare_file(variant, job: VariantJob):
    from kernels.inspector.compiler import compile_variant_file
    from kernels.inspector.report import build, inspect
    from kernels.user_variants import loader

    decl = loader.kernel_decl(variant)
    file = variant.run.file
    compiled = compile_variant_file(job.spec.name, variant.name, file.path, file.source,
                                    variant.run.declared["inspect"], job.arch)
    return build(compiled, None, decl), inspect(job.spec.name, job.compare_with, job.arch)
