"""Time the variant editor's Run as a user sees it: from pressing Run to the row in the benchmark panel's
table and chart (save, load and compile in the user-variant child process, verify, time), then a re-run
without edits, each with its phases (start, load, problem, ship, copy, compile, time, verify: what the
editor's status line shows). The editor runs offscreen beside a real benchmark panel, with throw-away
settings and cache folders; its buffer is the template of a built-in (`variant new`).

    QT_QPA_PLATFORM=offscreen python scripts/variant_run_time.py [--backend auto|cuda|sim] [--target reduction]
        [--from VARIANT] [--n N] [--repeats R] [--runs K] [--cold]

--from defaults to best, or in the simulator (where best's warp shuffles do not run) the target's first GPU
variant that runs there; --n to
2^24, or the simulator's default size there. Without --cold the editor warms its child process when it is
shown (as in the app: the dock is opened before Run: the child started, numba imported, the CUDA context
made, the panel's problem made and shipped) and the script waits for that first; with --cold the first
Run does all of that itself.
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
    parser.add_argument("--from", dest="variant")
    parser.add_argument("--n", type=int)
    parser.add_argument("--repeats", type=int)
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
    from raytracer_app.gui.benchmarks.panel import BenchPanel
    from raytracer_app.gui.render.models import RenderModel
    from raytracer_app.gui.shell.timing_log import TimingLog
    from raytracer_app.gui.editor.editor import VariantEditor

    backend = backends.resolve(args.backend)
    spec = by_name(args.target)
    sim = backend.is_simulator
    runnable = [v.name for v in spec.variants if v.kind == "gpu" and not (sim and v.sim_skip)]
    args.variant = args.variant or ("best" if "best" in runnable else runnable[0])
    args.n = args.n or (spec.size.default_for(backend, gui=True) if sim else 1 << 24)
    args.repeats = args.repeats or (2 if sim else 20)
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
        warmed = []
        editor.worker.warmed.connect(warmed.append)
        editor.worker.warm(backend, editor.problem_job())  # what showing the dock starts in the background
        wait(lambda: warmed)
        print(f"child process ready (numba imported{', CUDA context made' if backend.is_gpu else ''}, the problem "
              f"made and shipped): {time.perf_counter() - t0:.2f} s, before Run")
    code = 0
    for k in range(args.runs):
        rows_before = len(panel.rows)
        t0 = time.perf_counter()
        editor.run()
        if not wait(lambda rows_before=rows_before: len(panel.rows) > rows_before or not editor.running):
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
        noise = f", noise {row.timing.noise:.0%}" if row.timing and row.timing.noise is not None else ""
        print(f"run {k + 1}, {what}: {t_row:.2f} s from Run to the row; {row.variant} {row.verified}, {timing}"
              f"{noise}, chart points {len(panel.chart.points)}")
        if editor.last_phases is not None:
            print(f"  phases: {editor.last_phases.text()} (sum {sum(editor.last_phases.values()):.2f} s)")
        code = code or (0 if row.ok else 1)
    editor.shutdown()
    panel.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
