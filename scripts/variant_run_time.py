"""Time the variant editor's Run as a user sees it: from pressing Run to the row in the benchmark panel's
table and chart (save, load and compile in the user-variant child process, verify, time), then a re-run
without edits. The editor runs offscreen beside a real benchmark panel, with throw-away settings and cache
folders; its buffer is the template of a built-in (`variant new`).

    QT_QPA_PLATFORM=offscreen python scripts/variant_run_time.py [--backend auto|cuda|sim] [--target reduction]
        [--from best] [--n N] [--repeats R] [--runs K] [--cold]

Without --cold the editor starts its child process when it is shown (as in the app: the dock is opened
before Run) and the script waits for that first; with --cold the first Run also starts the child process
(a new interpreter, numba's import, the CUDA context).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--target", default="reduction")
    parser.add_argument("--from", dest="variant", default="best")
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--runs", type=int, default=2, help="the first Run, then re-runs without edits")
    parser.add_argument("--cold", action="store_true", help="do not start the child process before the first Run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="variant-run-") as folder:
        os.environ["RAYTRACER_CACHE_DIR"] = os.path.join(folder, "cache")  # the autosave folder, tuning, ...
        return measure(args, folder)


def measure(args, folder: str) -> int:
    from kernels import backend as backends

    backends.prepare(args.backend)
    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QApplication

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, os.path.join(folder, "settings"))
    app = QApplication.instance() or QApplication(sys.argv[:1])
    from kernels.registry import by_name
    from raytracer_app.gui.bench_panel import BenchPanel
    from raytracer_app.gui.models import RenderModel
    from raytracer_app.gui.timing_log import TimingLog
    from raytracer_app.gui.variant_editor import VariantEditor

    backend = backends.resolve(args.backend)
    spec = by_name(args.target)
    model = RenderModel(backend)
    panel = BenchPanel(spec, model, TimingLog())
    panel.n.setMaximum(max(panel.n.maximum(), args.n))
    panel.n.setValue(args.n)
    panel.repeats.setValue(args.repeats)
    editor = VariantEditor(model, {spec.title: panel})
    editor.rowReady.connect(lambda title, row: panel.add_user_row(row))
    editor.target_box.setCurrentText(args.target)
    editor.new_from(args.variant)
    print(f"backend: {backend.label}; {args.target} template of {args.variant}, n = {args.n:,}, "
          f"{args.repeats} repeats")

    def wait(until, limit_s: float = 300.0) -> bool:
        deadline = time.perf_counter() + limit_s
        while not until() and time.perf_counter() < deadline:
            app.processEvents()
            time.sleep(0.001)
        return until()

    if not args.cold:
        t0 = time.perf_counter()
        from kernels.user_variants import loader

        loader.warm(backend)  # what showing the dock starts in the background
        print(f"child process ready (numba imported{', CUDA context made' if backend.is_gpu else ''}): "
              f"{time.perf_counter() - t0:.2f} s, before Run")
    code = 0
    for k in range(args.runs):
        rows_before = len(panel.rows)
        t0 = time.perf_counter()
        editor.run()
        if not wait(lambda: len(panel.rows) > rows_before or not editor.running):
            print("no row within 300 s")
            return 1
        t_row = time.perf_counter() - t0
        wait(lambda: not editor.running)
        if len(panel.rows) == rows_before:
            print(f"run {k + 1}: no row: {editor.status.text()}")
            return 1
        row = panel.rows[-1][0]
        what = "first Run (load + compile" + (", child start)" if args.cold and k == 0 else ")") if k == 0 \
            else "re-run without edits"
        timing = f"median {row.timing.median_ms:.4f} ms" if row.timing else "no timing"
        print(f"run {k + 1}, {what}: {t_row:.2f} s from Run to the row; {row.variant} {row.verified}, {timing}, "
              f"chart points {len(panel.chart.points)}")
        code = code or (0 if row.ok else 1)
    editor.shutdown()
    panel.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
