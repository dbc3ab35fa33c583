"""An Access pane's figures per line beside its trace's ratios: the trace's own totals per line (predicted:
sectors, wavefronts, conflicts, active lanes), Nsight Compute's on this GPU (*Measure per line*: stall %, top
stall, instructions executed, sectors, wavefronts, conflicts) and a shipped reference's (labelled "not this
machine"), one kernels.counters.lines.KernelLines per traced kernel. The view's heat picker offers them after
the three ratios; the pane's source column reads one with :meth:`PaneFigures.column`."""

from __future__ import annotations

from PyQt6.QtCore import QObject, pyqtSignal
from PyQt6.QtWidgets import QComboBox

from kernels.counters.lines import MEASURED, PREDICTED, REFERENCE
from raytracer_app.gui.common import line_figures as lf

KINDS = (PREDICTED, MEASURED, REFERENCE)  # what the Access view shows per line (no compile of its own)


class PaneFigures(QObject):
    """``changed(prefer)``: the pane's tables changed (``prefer``: a (key, kind) worth showing now, or None);
    ``said(text)``: for the pane's status."""

    changed = pyqtSignal(object)
    said = pyqtSignal(str)

    def __init__(self, backend_of, name: str, parent=None):
        super().__init__(parent)
        self.ask = None  # the TraceAsk the figures are of
        self.predicted: dict = {}  # kernel name -> KernelLines
        self.measured = None  # measure_lines' entry of the variant: [KernelLines] or the reason
        self.references: list = []
        self.tables: dict = {}  # kernel name -> the combined KernelLines
        self.measure = lf.LinesMeasure(backend_of, name, self)
        self.measure.said.connect(self.said)
        self.measure.measured.connect(self._measured)
        self.reference_box = QComboBox()
        self.reference_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.reference_box.setMinimumContentsLength(12)
        self.reference_box.currentIndexChanged.connect(
            lambda _: self._combine(("stall_pct", REFERENCE) if self.reference is not None else None))
        self._fill_references()

    @property
    def reference(self):
        index = self.reference_box.currentIndex() - 1
        return self.references[index] if 0 <= index < len(self.references) else None

    def set_traced(self, ask, predicted: dict, references, refused) -> None:
        """A trace's predicted figures and the variant's references; measured figures stay while the variant
        is the same."""
        if self.ask is None or (ask.target, ask.variant) != (self.ask.target, self.ask.variant):
            self.measured = None
        self.ask, self.predicted, self.references = ask, dict(predicted), list(references)
        self._fill_references()
        if refused:
            self.said.emit("reference not shown: " + "; ".join(refused))
        self.measure.refresh()
        self._combine(None)

    def start_measure(self, n: int | None = None) -> bool:
        if self.ask is None:
            self.said.emit("trace the variant first: its source lines are what the figures go beside")
            return False
        return self.measure.start(self.ask.target, [self.ask.variant], n)

    def kernels(self) -> list:
        return list(self.tables.values())

    def column(self, kernel_name: str, choice) -> dict:
        return lf.values(self.tables.get(kernel_name), choice)

    def label(self, kernel_name: str, kind: str) -> str:
        table = self.tables.get(kernel_name)
        return table.labels.get(kind, "") if table is not None else ""

    def summary(self, kernel_name: str, choice) -> str:
        """Where the chosen figure comes from and, for a measured or reference one, the hottest line."""
        table = self.tables.get(kernel_name)
        if table is None or choice is None:
            return ""
        words = [table.labels.get(choice.kind, "")]
        if choice.kind in (MEASURED, REFERENCE):
            words += lf.sentences([table], choice.kind)
        return " ".join(w for w in words if w)

    def why_none(self, kind: str) -> str:
        """': why' the pane has no figures of ``kind``, '' where there is nothing to add."""
        if kind == MEASURED and isinstance(self.measured, str):
            return f": not measured: {self.measured}"
        if kind == MEASURED and self.measured is None:
            if self.measure.why:
                return (": no measured figures here (Measure per line's tooltip says why)"
                        + ("; the shipped reference is offered instead" if self.references else ""))
            return ": Measure per line reads them"
        if kind == REFERENCE:
            return ": pick its reference beside Measure per line" if self.references else \
                ": no per-line reference is shipped for it"
        return ""

    def _fill_references(self) -> None:
        what = f"{self.ask.target} {self.ask.variant}" if self.ask is not None else "this variant"
        lf.fill_reference_box(self.reference_box, self.references, what)

    def _combine(self, prefer) -> None:
        extra = [self.measured if isinstance(self.measured, list) else [],
                 self.reference.kernels if self.reference is not None else []]
        tables = {}
        for name, table in self.predicted.items():
            for kernels in extra:
                match = next((k for k in kernels if k.name == name), None)
                if match is not None:
                    table = table.merged(match)
            tables[name] = table
        self.tables = tables
        self.changed.emit(prefer)

    def _measured(self, job, results) -> None:
        if self.ask is None or (job.target, tuple(job.variants)) != (self.ask.target, (self.ask.variant,)):
            return
        self.measured = results.get(self.ask.variant)
        if isinstance(self.measured, str) or not self.measured:
            self.said.emit(f"{self.ask.label}: no per-line figures ({self.measured or 'nothing measured'})")
            self._combine(None)
            return
        self.said.emit(f"{self.ask.label}: {self.measured[0].labels.get(MEASURED, 'measured')} per line")
        self._combine(("stall_pct", MEASURED))

    def shutdown(self, timeout_ms: int = 500) -> bool:
        return self.measure.shutdown(timeout_ms)
