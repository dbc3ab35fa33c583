"""Does compiling with line information change a kernel's time? The same `bench` command run alternately
without and with line information (every kernel and device function compiled as the per-line counters'
process compiles them: kernels.backend.numba_private.lineinfo_everywhere), each run a fresh process with a
numba cache folder of its own, each written as a result file; then `compare` of each pair, whose verdict
says whether the difference is beyond the runs' noise.

    python3 scripts/lineinfo_timing.py --out DIR [--rounds R] -- bench TARGET [bench options...]

e.g. ``-- bench reduction --backend cuda --variants best,interleaved-strided --sizes 1048576,268435456
--repeats 40`` (stage `lines` of scripts/gpu-session.sh). Plain timing runs keep line information off.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """import sys
from raytracer_app.cli import main
if sys.argv[1] == "on":
    from kernels.backend.numba_private import lineinfo_everywhere
    with lineinfo_everywhere():
        sys.exit(main(sys.argv[2:]))
sys.exit(main(sys.argv[2:]))
"""


def run(mode: str, bench: list[str], out: Path, cache: str) -> int:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache,
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-c", CHILD, mode, *bench, "--json", str(out)], env=env, cwd=str(ROOT),
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"lineinfo {mode}: bench failed (exit {done.returncode}): {done.stderr.strip()[-500:]}", file=sys.stderr)
    return done.returncode


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        print("usage: lineinfo_timing.py --out DIR [--rounds R] -- bench TARGET [options]", file=sys.stderr)
        return 2
    split = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=2, help="off/on pairs, alternated (default 2)")
    args = p.parse_args(argv[:split])
    bench = argv[split + 1:]
    if not bench or bench[0] != "bench" or "--json" in bench:
        print("the command after -- is a `bench` without --json (the script writes the result files)",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="lineinfo-timing-") as tmp:
        for r in range(1, args.rounds + 1):
            for mode in ("off", "on"):
                failed += run(mode, bench, out / f"lineinfo-{mode}-{r}.json", os.path.join(tmp, mode)) != 0
    if failed:
        return 1
    for r in range(1, args.rounds + 1):
        done = subprocess.run([sys.executable, "-m", "raytracer_app", "compare", str(out / f"lineinfo-off-{r}.json"),
                               str(out / f"lineinfo-on-{r}.json")], cwd=str(ROOT), capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                  p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)})
        print(f"--- round {r}: line information off (first file) against on (second)")
        print(done.stdout.rstrip() or done.stderr.rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
