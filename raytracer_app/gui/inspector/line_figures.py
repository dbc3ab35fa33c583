"""The Inspector's figures per Python line: the row above the source pane that picks the figure shown beside
each line (static SASS instructions from the compile; measured stall %, top stall, instructions executed,
sectors, wavefronts and conflicts from Nsight Compute on this GPU; a shipped reference's, labelled), the
measurement (*Measure per line*, on a worker thread, *Stop*), the reference picker, and a line under the
source saying where the figure comes from and what the selected line has.

The combined table is kernels.inspector.lines.combined(static, measured), joined with the chosen reference's
kernels; the source pane reads a column of it through :meth:`SourceFigures.column`."""

from __future__ import annotations

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from kernels.counters.lines import MEASURED, REFERENCE, STATIC
from raytracer_app.gui.common import line_figures as lf

NONE = "no figures"


def _default_backend():
    from kernels.backend import Backend

    return Backend("cpu")


class SourceFigures(QWidget):
    """``changed()``: the column shown (or its values) changed, redraw the source; ``measuredLines(target,
    variant, kernels)``: per-line figures measured here; ``said(text)``: for the Inspector's status line."""

    changed = pyqtSignal()
    measuredLines = pyqtSignal(str, str, object)
    said = pyqtSignal(str)

    def __init__(self, backend_of=None, parent=None):
        super().__init__(parent)
        self.target = self.variant = None
        self.static = None  # KernelLines of the compile shown
        self.measured = None  # measure_lines' entry for the variant: [KernelLines] or the reason there is none
        self.known: dict = {}  # (target, variant) -> its measured entry, from this Inspector or a panel's Measure
        self.references: list = []  # LineReference of the variant, shipped
        self.kernels: list = []  # the combined tables, one per kernel
        self.options: list = []  # Choice, as in figure_box after NONE
        self.figure_box = QComboBox()
        self.figure_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.figure_box.setMinimumContentsLength(20)
        self.figure_box.setToolTip("the figure shown beside each Python line")
        self.figure_box.currentIndexChanged.connect(self._figure_chosen)
        self.inlined_box = QCheckBox("with inlined code")
        self.inlined_box.setToolTip("a line that calls a device function counts what the call inlined too (the "
                                    "device function's lines count their own code wherever it went)")
        self.inlined_box.toggled.connect(lambda _: self.changed.emit())
        self.kernel_box = QComboBox()
        self.kernel_box.setToolTip("the variant's kernels (a second launch of one is 'name#2')")
        self.kernel_box.currentIndexChanged.connect(lambda _: self._refresh_choices())
        self.measure = lf.LinesMeasure(backend_of or _default_backend, "inspector", self)
        self.measure.button.clicked.connect(self.start_measure)
        self.measure.said.connect(self.said)
        self.measure.measured.connect(self._measured)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("stop the per-line measurement (ends ncu's child within a second)")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.measure.stop)
        self.measure.running_changed.connect(self.stop_button.setEnabled)
        self.reference_box = QComboBox()
        self.reference_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.reference_box.setMinimumContentsLength(14)
        self.reference_box.currentIndexChanged.connect(
            lambda _: self._recombine(prefer=("stall_pct", REFERENCE) if self.reference is not None else None))
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setMinimumHeight(3 * self.note.fontMetrics().lineSpacing() + 4)  # wrapped lines stay in view
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for w in (QLabel("Per line"), self.figure_box, self.inlined_box, self.kernel_box, self.measure.button,
                  self.stop_button, self.reference_box):
            row.addWidget(w)
        row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.note)
        self._fill_references()
        self._recombine()

    # ------------------------------------------------------------------ what the panel tells
    def set_variant(self, target: str, variant: str) -> None:
        """A new inspection: the static figures come with its compile; a variant's measured figures and
        references stay while it is the one shown (another architecture, another block)."""
        if (target, variant) != (self.target, self.variant):
            self.measured, self.references = self.known.get((target, variant)), []
            self._fill_references()
        self.target, self.variant, self.static = target, variant, None
        self.measure.refresh()
        self._recombine()

    def set_lines(self, static, references, refused) -> None:
        """The compile's static figures (None without the compiler) and the variant's shipped references."""
        self.static = static
        self.references = list(references)
        self._fill_references()
        if refused:
            self.said.emit("reference not shown: " + "; ".join(refused))
        self._recombine()

    def take_measured(self, target: str, variant: str, kernels: list) -> None:
        """Per-line figures measured elsewhere (a benchmark panel's Measure reads them with its counters): shown
        when the variant is, at once if it is now."""
        if not kernels:
            return
        self.known[(target, variant)] = list(kernels)
        if (target, variant) == (self.target, self.variant):
            self.measured = list(kernels)
            self._recombine()

    def start_measure(self) -> bool:
        if self.target is None:
            return False
        return self.measure.start(self.target, [self.variant])

    # ------------------------------------------------------------------ what the panel reads
    @property
    def reference(self):
        index = self.reference_box.currentIndex() - 1
        return self.references[index] if 0 <= index < len(self.references) else None

    @property
    def current(self):
        """The chosen kernel's table, or None."""
        index = self.kernel_box.currentIndex()
        return self.kernels[index] if 0 <= index < len(self.kernels) else None

    @property
    def choice(self) -> lf.Choice | None:
        index = self.figure_box.currentIndex() - 1
        return self.options[index] if 0 <= index < len(self.options) else None

    def column(self) -> tuple[dict, lf.Choice | None]:
        """({(file as shown, line): value}, the figure) of what the source pane shows."""
        choice = self.choice
        return lf.values(self.current, choice, self.inlined_box.isChecked()), choice

    def choose(self, key: str, kind: str) -> bool:
        """Show figure ``key`` of ``kind`` (as picking it does); False where no line has it."""
        for i, c in enumerate(self.options):
            if (c.key, c.kind) == (key, kind):
                self.figure_box.setCurrentIndex(i + 1)
                return True
        return False

    def line_selected(self, file: str | None, line: int | None) -> None:
        """The note under the row: where the figure comes from, the selected line's figures (else the sentence
        naming the hottest line), and why there are no measured figures; the kernel's notes in its tooltip."""
        kernel, choice = self.current, self.choice
        parts = []
        if choice is not None and kernel is not None:
            parts.append(kernel.labels.get(choice.kind, ""))
        words = lf.line_words(kernel.row(file, line)) if kernel is not None and file is not None else ""
        if words:
            parts.append(words)
        elif kernel is not None and choice is not None and choice.kind in (MEASURED, REFERENCE):
            parts += lf.sentences([kernel], choice.kind)
        parts.append(self._measured_note())
        self.note.setText("\n".join(p for p in parts if p))
        self.note.setToolTip("\n".join(kernel.notes) if kernel is not None else "")

    # ------------------------------------------------------------------ inside
    def _measured_note(self) -> str:
        if isinstance(self.measured, str):
            return f"not measured: {self.measured}"
        if self.measure.why and self.measured is None:
            shown = "; the shipped reference is offered instead" if self.references else ""
            return f"no measured figures here (Measure per line's tooltip says why){shown}"
        return ""

    def _fill_references(self) -> None:
        what = f"{self.target} {self.variant}" if self.target else "this variant"
        lf.fill_reference_box(self.reference_box, self.references, what)

    def _recombine(self, prefer: tuple | None = None) -> None:
        from kernels.inspector.lines import combined, joined

        base = combined(self.static, self.measured if not isinstance(self.measured, str) else None)
        kernels = [] if isinstance(base, str) else base
        if self.reference is not None:
            kernels = joined(kernels, self.reference.kernels)
        self.kernels = kernels
        box = self.kernel_box
        box.blockSignals(True)
        chosen = box.currentText()
        box.clear()
        box.addItems([k.name for k in kernels])
        if chosen in [k.name for k in kernels]:
            box.setCurrentText(chosen)
        box.blockSignals(False)
        box.setVisible(len(kernels) > 1)
        self._refresh_choices(prefer)

    def _refresh_choices(self, prefer: tuple | None = None) -> None:
        """The figures the chosen kernel has; the one shown stays where it can (else ``prefer``, else static
        SASS instructions)."""
        kernel = self.current
        was = self.choice
        self.options = lf.choices([kernel]) if kernel is not None else []
        box = self.figure_box
        box.blockSignals(True)
        box.clear()
        box.addItem(NONE)
        for i, c in enumerate(self.options):
            box.addItem(c.text)
            box.setItemData(i + 1, c.tooltip([kernel]), Qt.ItemDataRole.ToolTipRole)
        wanted = [prefer, (was.key, was.kind) if was else None, ("sass_instructions", STATIC)]
        index = next((i + 1 for w in wanted if w for i, c in enumerate(self.options) if (c.key, c.kind) == w), 0)
        box.setCurrentIndex(index)
        box.blockSignals(False)
        self.changed.emit()

    def _figure_chosen(self, _index: int) -> None:
        self.changed.emit()

    def _measured(self, job, results) -> None:
        variant = job.variants[0]
        got = self.known[(job.target, variant)] = results.get(variant)
        if isinstance(got, str) or not got:
            self.said.emit(f"{variant}: no per-line figures ({got or 'nothing measured'})")
        else:
            self.said.emit(f"{variant}: measured per line ({got[0].labels.get(MEASURED, '')})")
            self.measuredLines.emit(job.target, variant, got)
        if (job.target, variant) == (self.target, self.variant):  # else shown when it is inspected again
            self.measured = got
            self._recombine(prefer=("stall_pct", MEASURED))

    def show_reference(self, index: int = 0) -> None:
        """Show the ``index``-th shipped reference and its stall % (as picking it does)."""
        self.reference_box.setCurrentIndex(index + 1)

    def shutdown(self, timeout_ms: int = 500) -> bool:
        return self.measure.shutdown(timeout_ms)
