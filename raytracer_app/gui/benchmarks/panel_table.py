"""A benchmark panel's results table: one line per measured row, and, while the panel's GPU reference is
shown, the shipped reference rows as ghost rows below them (grey, italic, "H100 reference" in the source
column, not selectable, never part of the panel's measurements: Export CSV leaves them out unless asked).
Columns that do not fit scroll inside the table, never widening the panel."""

from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QColor
from PyQt6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from kernels.harness.ceilings import COPY
from kernels.harness.rows import ERROR, FAILED, SKIPPED
from raytracer_app.gui.common.charts import row_value
from raytracer_app.gui.benchmarks.panel_results import DELTA_TIP, VERDICT_TIP

# what a reader looks for first comes first; launch details and the note go to the right
TABLE_COLUMNS = ("variant", "source", "n", "median ms", "Δ%", "verdict", "GB/s", "verified", "% copy BW",
                 "% ceiling", "min ms", "max ms", "block", "grid", "note")
MEASURED = "this run"
GHOST = "reference"  # the data (UserRole) of a ghost row's items
PCT_TIP = ("percent of this device's copy bandwidth (the dashed line on the chart: a device-to-device copy on a "
           "GPU, numpy's copy on the CPU): the bytes the kernel reads per second divided by it. Above 100 % is "
           "no error: a copy reads and writes every byte, so a read-only kernel (a reduction, a histogram) moves "
           "half the copy's traffic per byte of input and can pass it (the reason at large N); and an input that "
           "fits in the L2 cache (marked \"in cache\") is read from the cache, not memory.")
CEILING_TIP = ("percent of the ceiling this algorithm's rows are judged against, measured in this run (the dotted "
               "line on the chart): the copy bandwidth for a reduction or a histogram; random 32-byte sector reads "
               "(find) or 8-byte compare-and-swaps (insert, erase, insert-or-add) over a table of the row's size for "
               "a hash table. docs/measurements.md says what each measures.")
IN_CACHE_TIP = ("\nThis row's input fits in the cache (the GPU's L2, or the CPU's last-level cache for host code): "
                "its GB/s measure the cache, not memory.")
FAILED_BG, SKIPPED_FG = QColor(255, 190, 190), QColor(120, 120, 120)
GHOST_FG = QColor(110, 110, 140)


def verified_text(row) -> str:
    if row.verified == FAILED:
        return f"FAILED: got {row.result}, expected {row.expected}" + (f" ({row.note})" if row.note else "")
    if row.verified in (SKIPPED, ERROR) and row.note:
        return f"{row.verified}: {row.note}"
    return row.verified


def _fmt(x, digits=4):
    return "" if x is None else f"{x:.{digits}f}"


def _ceiling_tip(row) -> str:
    name, rate = getattr(row, "ceiling", ""), getattr(row, "ceiling_rate", None)
    if not name:
        return CEILING_TIP
    return f"against {name}: {rate / 1e9:.4g} G/s measured in this run\n{CEILING_TIP}" if rate else CEILING_TIP


def is_ghost(item) -> bool:
    return item is not None and item.data(Qt.ItemDataRole.UserRole) == GHOST


class ResultsTable(QTableWidget):
    """``rate_unit`` names the rate column (GB/s, or the algorithm's own unit)."""

    def __init__(self, rate_unit: str):
        self.rate_unit = rate_unit
        self.columns = tuple(rate_unit if c == "GB/s" else c for c in TABLE_COLUMNS)
        super().__init__(0, len(self.columns))
        self.ghost_rows: list = []
        self.ghost_label = ""
        self.setHorizontalHeaderLabels(self.columns)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setMinimumWidth(120)  # columns scroll inside the table: its contents never widen the panel
        tips = {"% copy BW": PCT_TIP, "% ceiling": CEILING_TIP, "Δ%": DELTA_TIP, "verdict": VERDICT_TIP,
                "verified": "yes: the result matches an independent reference; FAILED / skipped / error say why",
                "source": f"{MEASURED}: measured here; DEVICE reference (grey, italic): a GPU's shipped result, shown "
                          "by the panel's reference choice, never exported with Export CSV unless you ask"}
        for column, tip in tips.items():
            self.horizontalHeaderItem(self.columns.index(column)).setToolTip(tip)
        self.verticalHeader().hide()
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        # rows of one text line, and room for MIN_ROWS of them at any window size (with a reference's ghost
        # rows below this run's, 3 rows showed at 1366x768)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.setMinimumHeight(self.min_height())
        # a copy-bound algorithm's ceiling is the copy bandwidth: its "% ceiling" would repeat "% copy BW"
        self.setColumnHidden(self.columns.index("% ceiling"), True)

    MIN_ROWS = 8

    def min_height(self) -> int:
        """Header, MIN_ROWS rows, a horizontal scroll bar and the frame."""
        return (self.horizontalHeader().sizeHint().height() + self.MIN_ROWS * self.verticalHeader().defaultSectionSize()
                + self.horizontalScrollBar().sizeHint().height() + 2 * self.frameWidth() + 2)

    def measured_count(self) -> int:
        return self.rowCount() - len(self.ghost_rows)

    def clear_measured(self) -> None:
        for _ in range(self.measured_count()):
            self.removeRow(0)

    def _values(self, row, source: str) -> tuple:
        t = row.timing
        rate = row_value(row, self.rate_unit) if self.rate_unit != "GB/s" else None
        in_cache = row.cache_resident == "yes"  # then GB/s measures the cache, not memory: say so beside %
        pct = _fmt(row.pct_of_peak, 1) + (" (in cache)" if in_cache and row.pct_of_peak is not None else "")
        return (row.variant, source, row.n, _fmt(t and t.median_ms), "", "", _fmt(rate[0] if rate else row.gbps, 2),
                verified_text(row), pct, _fmt(getattr(row, "pct_of_ceiling", None), 1), _fmt(t and t.min_ms), _fmt(t and t.max_ms), row.block, row.grid, row.note)

    def _fill(self, r: int, row, source: str, ghost: bool) -> None:
        in_cache = row.cache_resident == "yes"
        if getattr(row, "ceiling", "") not in ("", COPY.name):
            self.setColumnHidden(self.columns.index("% ceiling"), False)
        for c, v in enumerate(self._values(row, source)):
            item = QTableWidgetItem(str(v))
            column = TABLE_COLUMNS[c]
            item.setToolTip(verified_text(row) if column == "verified" else
                            PCT_TIP + (IN_CACHE_TIP if in_cache else "") if column == "% copy BW" else
                            _ceiling_tip(row) if column == "% ceiling" else str(v))
            if ghost:
                font = item.font()
                font.setItalic(True)
                item.setFont(font)
                item.setForeground(GHOST_FG)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)  # not selectable: no measurement of this run
                item.setData(Qt.ItemDataRole.UserRole, GHOST)
                item.setToolTip(f"{source}: {row.device}, not measured here\n{item.toolTip()}")
            elif row.verified == FAILED:
                item.setBackground(FAILED_BG)
                item.setForeground(QColor(160, 0, 0))
            elif row.verified == ERROR:
                item.setForeground(QColor(200, 0, 0))
            elif row.verified == SKIPPED:
                item.setForeground(SKIPPED_FG)
            self.setItem(r, c, item)

    def add_measured(self, row) -> int:
        """A measured row, after the measured rows and before any ghost rows; its table row."""
        r = self.measured_count()
        self.insertRow(r)
        self._fill(r, row, MEASURED, ghost=False)
        self.scrollToItem(self.item(r, 0))
        return r

    def set_ghosts(self, rows, label: str) -> None:
        """The reference rows (``label``, e.g. 'H100 reference') as ghost rows; none with no rows."""
        for _ in range(len(self.ghost_rows)):
            self.removeRow(self.rowCount() - 1)
        self.ghost_rows, self.ghost_label = list(rows or []), label
        for row in self.ghost_rows:
            r = self.rowCount()
            self.insertRow(r)
            self._fill(r, row, label, ghost=True)
