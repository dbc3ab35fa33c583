"""Every script in scripts/registry.py runs at its tiny smoke size (pyqtgraph runs every example the same
way): it exits 0, or, needing a GPU where there is none, it is skipped with the reason."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import child_pythonpath

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from registry import SCRIPTS  # noqa: E402


def test_the_registry_lists_every_script():
    on_disk = {p.name for p in (ROOT / "scripts").glob("*.py")} - {"registry.py"}
    assert {s.file for s in SCRIPTS} == on_disk


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.file)
def test_script_runs_at_its_smoke_size(script, tmp_path):
    if script.needs_gpu:
        from kernels import backend

        if not backend.gpu_available():
            pytest.skip(f"{script.file} needs a real CUDA GPU; none here")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": child_pythonpath(str(ROOT)),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "NUMBA_ENABLE_CUDASIM": "0"}
    env.pop("NUMBA_ENABLE_CUDASIM")  # each script chooses its backend itself
    args = [a.format(tmp=tmp_path) for a in script.smoke]
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / script.file), *args], capture_output=True,
                          text=True, timeout=240, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() or (tmp_path / "screenshot.png").exists()  # it reported or produced something
