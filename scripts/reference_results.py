"""Make the reference results the app ships (assets/reference-results/): on a GPU machine, `bench --json`
for the reduction, the histogram and the hash table at their default sizes, and the ray tracer at the sphere
counts of the window's Sphere Count Curve (1024x1024, every memory), each written as a result file named by
the device and target (nvidia-h100-80gb-hbm3-reduction.json). The files carry the device, date, versions and
the command that made them; the lead copies them into assets/reference-results/ and commits them.
With --lessons, the lessons instead (or too, with --targets): `lesson NAME --json` at the lesson's own sizes,
with --counters where Nsight Compute can read them here (else without, said so), each written as a lesson
result file named by the device and lesson (nvidia-h100-80gb-hbm3-lesson-reduction.json).

    python3 scripts/reference_results.py --out DIR [--backend cuda] [--repeats R] [--targets a,b]
        [--lessons all|a,b] [--counters]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CURVE_TARGET = "spheres"  # the Sphere Count Curve's (count_curve.py runs the same target)


def targets() -> tuple[str, ...]:
    """Every benchmark panel's target (kernels.registry), then the sphere count curve's."""
    from kernels.registry import with_panels

    return (*(a.name for a in with_panels()), CURVE_TARGET)


CURVE_COUNTS = (20, 100, 1000, 2340, 10_000, 100_000, 1_000_000)  # count_curve.GPU_COUNTS
CURVE_MEMORIES = ("global", "constant", "shared", "binned")
CURVE_REPEATS = 5  # count_curve.sweep_for's on a GPU


def plan(backend: str, repeats: int | None, chosen=None) -> list[list[str]]:
    """The command lines, in order (the --json file name is filled in when each runs)."""
    out = []
    for target in chosen or targets():
        cmd = ["raytracer-app", "bench", target, "--backend", backend]
        runs = repeats
        if target == CURVE_TARGET:  # as the window's curve runs it: 5 repeats (a million spheres take a while)
            cmd += ["--sizes", ",".join(map(str, CURVE_COUNTS)), "--size", "1024x1024",
                    "--variants", ",".join(f"spheres-{m}" for m in CURVE_MEMORIES)]
            runs = repeats or CURVE_REPEATS
        if runs:
            cmd += ["--repeats", str(runs)]
        out.append(cmd + ["--json"])
    return out


def lesson_plan(backend: str, repeats: int | None, lessons, counters: bool) -> list[list[str]]:
    """The lesson command lines, in order (the --json file name is filled in when each runs)."""
    out = []
    for name in lessons:
        cmd = ["raytracer-app", "lesson", name, "--backend", backend]
        cmd += ["--repeats", str(repeats)] if repeats else []
        out.append(cmd + (["--counters"] if counters else []) + ["--json"])
    return out


def run_lesson(cmd: list[str], out: Path, timeout: float) -> Path:
    """One lesson run into a lesson result file named by its device and lesson; with --counters refused here
    (exit 2: no ncu, no permission), run again without them."""
    from kernels.lessons.references import file_name
    from kernels.lessons.results import read

    name = cmd[2]
    scratch = out / f"lesson-{name}.json"
    done = _run(cmd, scratch, out, timeout)
    if done.returncode == 2 and "--counters" in cmd:
        why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "?"
        print(f"lesson {name}: no counters here ({why}); running it without them")
        cmd = [c for c in cmd if c != "--counters"]
        done = _run(cmd, scratch, out, timeout)
    if done.returncode != 0 or not scratch.exists():
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    run = read(scratch, "the lesson's result")
    if not run.measured:
        raise SystemExit(f"{' '.join(cmd)} did not time its steps ({run.how}): a reference needs a GPU")
    final = out / file_name(run.device, name)
    os.replace(scratch, final)
    counted = sum(r.counters is not None for r in run.results)
    print(f"{final.name}: {run.device} {run.date}, {len(run.results)} steps at n = {run.sizes} "
          f"({sum(r.time_ms is not None for r in run.results)} timed, {counted} with counters), "
          f"command: {' '.join(run.command or cmd)}")
    print(done.stdout, end="")  # the lesson's table, for the session log
    return final


def _run(cmd: list[str], scratch: Path, out: Path, timeout: float):
    """``cmd`` (ending in --json) with the scratch file's name, inside ``out`` so the recorded command reads it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "raytracer_app", *cmd[1:], scratch.name], env=env, cwd=out,
                          capture_output=True, text=True, timeout=timeout)


def run_one(cmd: list[str], out: Path, timeout: float) -> Path:
    """One bench run into a result file named by its device and target; returns its path."""
    from kernels.harness.results_read import read_result
    from raytracer_app.gui.common.reference_results import file_name

    target = cmd[2]
    scratch = out / f"{target}.json"  # run inside ``out``, so the recorded command reads --json TARGET.json
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-m", "raytracer_app", *cmd[1:], scratch.name], env=env, cwd=out,
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0 or not scratch.exists():
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    result = read_result(scratch, "the run's result")
    final = out / file_name(result.device.get("name", "device"), target)
    os.replace(scratch, final)
    timed = sum(r.timing is not None for r in result.rows)
    print(f"{final.name}: {result.device.get('name')} {result.date}, {len(result.rows)} rows ({timed} timed), "
          f"command: {' '.join(result.command or cmd)}")
    return final


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=lambda x: Path(x).resolve(), help="folder for the result files")
    p.add_argument("--backend", default="cuda", help="cuda for the shipped files (cpu only to try the script)")
    p.add_argument("--repeats", type=int, default=None, help="timed repeats (default: bench's own)")
    p.add_argument("--targets", default="", help="targets separated by commas (default: every panel's and spheres)")
    p.add_argument("--lessons", default="", help="lessons separated by commas, or all (default: none)")
    p.add_argument("--counters", action="store_true", help="the lessons with their measured counters (ncu), where "
                                                            "they can be read here")
    p.add_argument("--timeout", type=float, default=400, help="seconds allowed per bench run (a lesson: 1.5x)")
    args = p.parse_args(argv)
    from kernels.lessons.catalog import names

    lessons = list(names()) if args.lessons == "all" else [x for x in args.lessons.split(",") if x]
    unknown = sorted(set(lessons) - set(names()))
    if unknown:
        p.error(f"unknown lesson(s) {', '.join(unknown)}; known: {', '.join(names())}")
    chosen = [t for t in args.targets.split(",") if t] or ([] if lessons else list(targets()))
    unknown = sorted(set(chosen) - set(targets()))
    if unknown:
        p.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(targets())}")
    args.out.mkdir(parents=True, exist_ok=True)
    for cmd in plan(args.backend, args.repeats, chosen) if chosen else []:
        run_one(cmd, args.out, args.timeout)
    for cmd in lesson_plan(args.backend, args.repeats, lessons, args.counters):
        run_lesson(cmd, args.out, 1.5 * args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
