"""A benchmark panel's result files: every run saved under the cache folder (results/, by date and target),
Export JSON… of the last run, and Load baseline…: a saved result (bench --json, or a run the GUI saved)
drawn behind the panel's own rows as a ghost series, with Δ% and verdict cells for the rows that match
(kernels.harness.compare decides, as `raytracer-app compare` does)."""

from __future__ import annotations

from PyQt6.QtGui import QColor
from PyQt6.QtWidgets import QTableWidgetItem

from kernels.harness import compare, results
from kernels.service.result_files import read_result
from raytracer_app.gui.common.dialogs import ask_path
from raytracer_app.gui.common.saving import export_to, in_background, message_of


def home_short(path) -> str:
    """``path`` with the home folder written ~ (the status line's room is short)."""
    from pathlib import Path

    path, home = Path(path), Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def saved_folder():
    """Where the panels save their runs, made if it is not there yet (None when it cannot be)."""
    from kernels.io.cache import make_private_dir

    try:
        folder = results.saved_runs_folder()
        make_private_dir(folder)
        return folder
    except Exception:  # noqa: BLE001 - an unusable cache folder: the dialog opens where it last did
        return None

DELTA_TIP = ("this row against the loaded baseline: (median / baseline median - 1) x 100; positive is slower. "
             "Load a baseline with Load baseline… (a result file of bench --json, or a run saved by the GUI)")
VERDICT_TIP = ("FASTER / SLOWER: the [min, q3] intervals of the repeats at least 1% apart, Mann-Whitney p < 0.05 "
               "(9+ repeats a side), neither run disturbed; SAME: medians within 0.5%, both quiet; UNSURE "
               "otherwise (docs/results.md)")
VERDICT_FG = {compare.SLOWER: QColor(200, 0, 0), compare.FASTER: QColor(0, 140, 0)}


class PanelResults:
    """For one BenchPanel (``panel.spec``, ``panel.job``: the BenchRequest of its last Run, ``panel.rows`` as
    (row, x), ``panel._say``)."""

    def __init__(self, panel):
        self.panel = panel
        self.baseline: results.Result | None = None
        self._by_key: dict = {}
        self.last: results.Result | None = None  # the last run, as saved
        self.last_path = None
        self.baseline_path = ""
        self.peak = None
        self.ceilings: list = []  # the last run's measured ceilings (here, or each by its cluster worker)

    # ------------------------------------------------------------------ the baseline
    def match(self, row):
        """(the baseline's row, the verdict) for a row of this panel; (None, None) without a match."""
        base = self._by_key.get(compare.row_key(self.panel.spec.name, row))
        if base is None or base.timing is None or row.timing is None:
            return base, None
        return base, compare.timing_verdict(base.timing, row.timing)

    def cells(self, row) -> tuple[str, str, str]:
        """The Δ% and verdict cells of a row and the verdict's tooltip ('' without a baseline match)."""
        base, v = self.match(row)
        if v is None:
            return "", "", "" if self.baseline is None else "no matching row in the baseline"
        delta = "" if v.delta_pct is None else f"{v.delta_pct:+.2f}"
        return delta, v.name, f"{v.name} against {self.baseline.label}: {v.reason}"

    def set_cells(self, r: int, row) -> None:
        """The Δ% and verdict cells of the panel's table row ``r`` (empty without a baseline match)."""
        table, columns = self.panel.table, self.panel.columns
        delta, verdict, why = self.cells(row)
        for column, text in (("Δ%", delta), ("verdict", verdict)):
            c = columns.index(column)
            item = table.item(r, c)
            if item is None:
                item = QTableWidgetItem()
                table.setItem(r, c, item)
            item.setText(text)
            item.setToolTip(why)
            if text in VERDICT_FG:
                item.setForeground(VERDICT_FG[text])

    def load(self, path=None) -> bool:
        panel = self.panel
        if path is None:  # the dialog opens where the panel saves its runs
            path = ask_path(panel, "Load baseline", "Result JSON (*.json)", save=False, folder=saved_folder())
            if not path:
                return False
        try:
            loaded = in_background(lambda: read_result(path, "Load baseline"))
        except Exception as exc:  # noqa: BLE001 - InputError for any malformed file; anything else still one line
            panel._say(f"cannot load the baseline: {message_of(exc)}", error=True)
            return False
        if loaded.target != panel.spec.name:
            panel._say(f"cannot load the baseline: {path} holds {loaded.target} rows; this panel is "
                       f"{panel.spec.name}", error=True)
            return False
        self.baseline = loaded
        self.baseline_path = str(path)  # remembered with the panel's settings, loaded again next time
        self._by_key = {compare.row_key(loaded.target, r): r for r in loaded.rows}
        panel.chart.set_baseline(lambda row: self.match(row)[0], loaded.label)
        panel.refresh_baseline_cells()
        panel._say(f"baseline: {loaded.label}, {len(loaded.rows)} row(s) of {loaded.date}")
        return True

    # ------------------------------------------------------------------ saving runs
    def result_of_run(self, stopped: bool) -> results.Result:
        """The run as a result file: its request in the header, marked partial when it was stopped."""
        panel = self.panel
        result = results.make_result(panel.job, [r for r, _ in panel.rows], self.peak, ceilings=self.ceilings)
        result.partial = stopped
        return result

    def save_run(self, stopped: bool) -> str:
        """Save the run just finished under the cache folder; the status text's addition ('' with no rows)."""
        if not self.panel.rows or self.panel.job is None:
            return ""
        result = self.result_of_run(stopped)
        self.last = result

        def save():
            path = results.new_saved_run_path(result.target)
            results.write_result(path, result, "saved run")
            return path

        try:
            path = in_background(save)
        except Exception as exc:  # noqa: BLE001 - a full disk or an unwritable cache folder: the run is still shown
            return f"; not saved: {message_of(exc)}"
        self.last_path = path
        return f"; saved as {home_short(path)}"

    def export(self, path=None) -> bool:
        panel = self.panel
        if self.last is None:
            panel._say("nothing to export yet: Run first", error=True)
            return False
        last = self.last
        path = export_to(panel, lambda p: results.write_result(p, last, "Export JSON"),
                         lambda exc: panel._say(f"cannot export: {message_of(exc)}", error=True),
                         "Export results as JSON", "Result JSON (*.json)", f"{panel.spec.name}.json", path)
        if path is None:
            return False
        panel._say(f"{len(last.rows)} row(s) with their samples written to {path}{path.kept}")
        return True
