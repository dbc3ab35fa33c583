import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import child_pythonpath

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # a new interpreter
def test_bare_loop_runs_offscreen_and_prints_frames_per_second():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(QT_QPA_PLATFORM="offscreen", PYTHONPATH=child_pythonpath(str(ROOT)))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bare_loop.py"), "--backend", "cpu", "--size", "32x24",
         "--spheres", "5", "--seconds", "0.3"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith("bare loop, backend cpu") and "32x24, 5 spheres" in line
    fps = float(line.split(": ")[1].split(" frames per second")[0])
    assert fps > 0
