"""Figures per source line (kernels.counters.lines.KernelLines) as the Inspector's source pane and the Access
view's source column show them: the figures a picker offers, a cell's text, how hot a line is, a line's
figures in words, the sentence naming the hottest line; and the measurement itself (Nsight Compute's source
counters, kernels.inspector.lines.measure_lines) on a worker thread, with its button disabled, the reason as
its tooltip, where counters cannot be read; with *Run on* a cluster (run_on.py), on the cluster's GPU (the
compile for the inlined-at chains here, for its architecture; ncu's run there). No widget is held here but
that button."""

from __future__ import annotations

from dataclasses import dataclass

from PyQt6.QtCore import QObject, pyqtSignal, pyqtSlot
from PyQt6.QtGui import QColor
from PyQt6.QtWidgets import QPushButton

from kernels.counters import lines_text
from kernels.counters.lines import COLUMNS, KINDS, MEASURED, OWN, PREDICTED, REFERENCE, STATIC, WITH_INLINED
from raytracer_app.gui.common.run_on import resources_for, run_on
from raytracer_app.gui.common.workers import JobWorker, WorkerThread, describe

KIND_WORDS = {STATIC: "static", PREDICTED: "predicted", MEASURED: "measured", REFERENCE: "reference"}
# what a line's summary names per kind, in this order
SUMMARY_KEYS = ("sass_instructions", "stall_pct", "top_stall", "inst_executed", "global_sectors", "shared_wavefronts",
                "shared_conflicts", "lanes")


@dataclass(frozen=True)
class Choice:
    """One figure a view can show per line: a column of COLUMNS of one kind."""

    key: str
    kind: str

    @property
    def text(self) -> str:
        return f"{COLUMNS[self.key].label} ({KIND_WORDS[self.kind]})"

    def tooltip(self, kernels=()) -> str:
        """What the figure counts, and where it comes from (the kernels' label of its kind)."""
        where = next((k.labels[self.kind] for k in kernels if self.kind in k.labels), "")
        return COLUMNS[self.key].what + (f"\n{where}" if where else "")


def choices(kernels, kinds=KINDS) -> list[Choice]:
    """The figures some line of ``kernels`` has, of ``kinds``: by kind (static, predicted, measured,
    reference), then in COLUMNS' order."""
    present = {(key, kind) for k in kernels for key, kind in k.columns() if key in COLUMNS and kind in kinds}
    return [Choice(key, kind) for kind in KINDS if kind in kinds for key in COLUMNS if (key, kind) in present]


def by_text(options: list[Choice], text: str) -> Choice | None:
    return next((c for c in options if c.text == text), None)


def cell(key: str, value) -> str:
    """A figure as a cell shows it: '62.0%', 'long_scoreboard', '1.20M', '' for none."""
    return lines_text.cell(key, value, none="")


def values(lines, choice: Choice | None, inlined: bool = False) -> dict:
    """{(file, line): value} of the choice in one kernel's lines ({} without one); ``inlined``: a call line
    with what it inlines."""
    if lines is None or choice is None:
        return {}
    return lines.values(choice.key, choice.kind, WITH_INLINED if inlined else OWN)


def levels(column: dict) -> dict:
    """{where: 0..1} of a numeric column, its largest value 1 (a word, such as the top stall, has no level)."""
    numbers = {w: v for w, v in column.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    top = max(numbers.values(), default=0)
    return {w: v / top for w, v in numbers.items()} if top > 0 else {}


def tint(level: float) -> QColor:
    """A line's background for a level from :func:`levels`: paler to deeper orange."""
    return QColor.fromHsvF(0.08, 0.08 + 0.5 * level, 1.0)


def line_words(row) -> str:
    """One line's figures of every kind it has, for a status line or a tooltip ('' without any)."""
    if row is None:
        return ""
    parts = []
    for kind in KINDS:
        got = []
        for key in SUMMARY_KEYS:
            value, more = row.get(key, kind), row.get(key, kind, WITH_INLINED)
            if value is None and more is None:
                continue
            text = f"{COLUMNS[key].label} {cell(key, value) or 'none of its own'}"
            if more is not None and more != value:
                text += f" ({cell(key, more)} with inlined code)"
            got.append(text)
        if got:
            parts.append(f"{KIND_WORDS[kind]}: " + ", ".join(got))
    return f"line {row.line}: " + "; ".join(parts) if parts else ""


def sentences(kernels, kind: str = MEASURED) -> list[str]:
    """The guided analysis's sentence naming each kernel's line with most stall samples."""
    from kernels.counters.rules import stall_line

    several = len(kernels) > 1
    return [s for s in (stall_line(k, f" of {k.name}" if several else "", kind) for k in kernels) if s]


def fill_reference_box(box, references, what: str) -> None:
    """The per-line reference choice (``box``, a QComboBox): 'no reference', then each shipped reference with
    its heading as the tooltip; disabled, saying so for ``what`` (e.g. 'reduction best'), when none is."""
    from PyQt6.QtCore import Qt

    box.blockSignals(True)
    box.clear()
    box.addItem("no reference")
    for ref in references:
        box.addItem(f"{ref.short} reference")
        box.setItemData(box.count() - 1, f"{ref.heading()} ({ref.path.name})", Qt.ItemDataRole.ToolTipRole)
    box.blockSignals(False)
    box.setEnabled(bool(references))
    box.setToolTip("figures per line measured on the GPUs the app ships results from (not this machine)"
                   if references else f"no per-line reference shipped for {what}")


@dataclass(frozen=True)
class LinesJob:
    """A per-line measurement: variants of one target on a GPU backend, at size ``n`` (None: the
    declaration's); ``client``: a cluster's (Run on), whose GPU measures them instead."""

    target: str
    variants: tuple
    backend: object
    n: int | None = None
    client: object = None


class LinesWorker(JobWorker):
    """Compiles the variants for this GPU's architecture (the inspector's cached compile, for the inlined-at
    chains) and measures them per line in one ncu run; Stop ends ncu's child within a second."""

    progress = pyqtSignal(str)
    done = pyqtSignal(object, object, bool)  # LinesJob, {variant: [KernelLines] or the reason}, stopped
    failed = pyqtSignal(object, str)

    @pyqtSlot(object)
    def _run(self, job: LinesJob) -> None:
        from kernels.inspector.lines import measure_lines

        got = {}
        try:
            if job.client is not None:  # Run on a cluster: its GPU measures
                got = self._on_cluster(job)
            else:
                static = self._static(job)
                if not self._stop.is_set():
                    got = measure_lines(job.target, list(job.variants), job.backend, job.n,
                                        on_progress=lambda d, t, text: self.progress.emit(f"ncu: {text}"),
                                        should_stop=self._stop.is_set, static=static)
        except Exception as exc:  # noqa: BLE001 - CannotMeasure's one line, or what broke
            self.failed.emit(job, describe(exc))
        finally:
            self._running.clear()
        self.done.emit(job, got, self._stop.is_set())

    def _on_cluster(self, job: LinesJob) -> dict:
        """The one ncu run on a GPU worker of the cluster (its model with the most GPUs); Stop reaches it."""
        from kernels.backend import Backend
        from kernels.cluster import remote, worker_side

        resources = resources_for(job.client, Backend("cuda"))
        gpu = remote.remote_gpu(job.client, resources)
        static = self._static(job, gpu.remote_arch)
        if self._stop.is_set():
            return {}
        self.progress.emit(f"ncu: measuring per line on the cluster's {gpu.device_name}…")
        return remote.call(job.client, worker_side.measure_lines, job.target, list(job.variants), job.n, static,
                           resources=resources, stop=self._stop.is_set) or {}

    def _static(self, job: LinesJob, arch: str | None = None) -> dict:
        """{variant: KernelReport} for the GPU's architecture (``arch``: a cluster's); {} without the compiler
        packages or a compile."""
        from kernels.inspector import toolchain

        if toolchain.missing():
            return {}
        from kernels.inspector.bench_columns import device_arch
        from kernels.inspector.report import inspect_many

        self.progress.emit("compiling for this GPU's architecture (the line chains of inlined code)…")
        try:
            reports = inspect_many([(job.target, v) for v in job.variants], arch or device_arch(job.backend))
        except Exception:  # noqa: BLE001 - measured without chains: call lines show their own instructions
            return {}
        return {v: r for (_, v), r in reports.items() if not isinstance(r, Exception)}


MEASURE_TIP = ("measure each line on this GPU with Nsight Compute (stall samples by reason, instructions "
               "executed, global sectors, shared wavefronts and conflicts); one ncu run in a child process, Stop "
               "ends it")


class LinesMeasure(QObject):
    """The *Measure per line* button and its worker. ``backend_of()`` is the window's backend when asked.
    ``measured(job, results)`` when figures came; ``said(text)`` for the tool's status (progress, a failure,
    stopped); ``running_changed(bool)``."""

    measured = pyqtSignal(object, object)
    said = pyqtSignal(str)
    running_changed = pyqtSignal(bool)

    def __init__(self, backend_of, name: str, parent=None):
        super().__init__(parent)
        self.backend_of = backend_of
        self.button = QPushButton("Measure per line")
        self.worker = LinesWorker()
        self.thread = WorkerThread(self.worker, f"lines-{name}")
        self.worker.progress.connect(self.said)
        self.worker.failed.connect(lambda job, text: self.said.emit(f"per-line measurement failed: {text}"))
        self.worker.done.connect(self._done)
        self.thread.start()
        run_on().changed.connect(self._where_changed)
        self.refresh()

    def reason(self) -> str:
        """'' where counters can be tried (the window's backend, or Run on a cluster with a GPU: ncu is
        checked there), else the one line saying why not."""
        where = run_on()
        if where.remote:
            return "" if where.models else ("counters cannot be read: needs a CUDA GPU, and the cluster's workers "
                                            "(Run on) have none")
        from kernels.counters.tool import why_not

        return why_not(self.backend_of())

    def refresh(self) -> None:
        self.why = why = self.reason()
        self.button.setEnabled(not why and not self.running())
        models = run_on().models if run_on().remote else []
        tip = MEASURE_TIP.replace("on this GPU", f"on the cluster's {models[0]} (Run on)") if models else MEASURE_TIP
        self.button.setToolTip(why or tip)

    @pyqtSlot(str)
    def _where_changed(self, _state: str) -> None:
        self.refresh()

    def running(self) -> bool:
        return self.worker.running()

    def start(self, target: str, variants, n: int | None = None) -> bool:
        why = self.reason()
        if why:
            self.said.emit(why)
            self.refresh()
            return False
        if self.running() or not variants:
            return False
        backend, where = self.backend_of(), run_on()
        self.worker.start(LinesJob(target, tuple(variants), backend, n, where.client))
        self.refresh()
        self.running_changed.emit(True)
        place = (f"the cluster's {where.models[0]}" if where.remote else
                 getattr(backend, "device_name", "") or "this GPU")
        self.said.emit(f"measuring {', '.join(variants)} per line with Nsight Compute on {place}…")
        return True

    def stop(self) -> None:
        if self.running():
            self.worker.stop()

    def _done(self, job, results, stopped: bool) -> None:
        self.refresh()
        self.running_changed.emit(False)
        if stopped:
            self.said.emit("per-line measurement stopped")
        elif results:
            self.measured.emit(job, results)

    def shutdown(self, timeout_ms: int = 500) -> bool:
        self.worker.stop()
        return self.thread.shutdown(timeout_ms)
