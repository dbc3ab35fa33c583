"""Test session setup. Runs before numba is imported anywhere:

- Without a GPU, the session runs the CUDA kernels in Numba's simulator (NUMBA_ENABLE_CUDASIM=1), so
  tests that launch CUDA kernels on small inputs run everywhere; with a GPU they run on the GPU instead.
  RAYTRACER_TEST_BACKEND=sim|cuda overrides the detection.
- Tests marked ``gpu`` need a real GPU and are skipped with the reason when there is none.
- Qt runs offscreen.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import pytest


def _gpu_present() -> bool:
    forced = os.environ.get("RAYTRACER_TEST_BACKEND")
    if forced:
        return forced == "cuda"
    return os.path.exists("/dev/nvidiactl") or shutil.which("nvidia-smi") is not None


if not _gpu_present():
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# caches (best's tuning, the inspector's compiles) go to a folder of this session, never the user's; the
# session removes it at its end (pytest_unconfigure)
_SESSION_CACHE = None
if "RAYTRACER_CACHE_DIR" not in os.environ:
    _SESSION_CACHE = tempfile.mkdtemp(prefix="raytracer-test-cache-")
    os.environ["RAYTRACER_CACHE_DIR"] = _SESSION_CACHE


def pytest_unconfigure(config):
    if _SESSION_CACHE is not None:
        shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


def pytest_configure(config):
    # added here, not in pyproject.toml: naming numba's warning class there would import numba before
    # this file could choose the simulator. The seed variants launch small grids on purpose.
    # numba-cuda 0.30 raises its own class (numba.cuda.core.errors), not numba.core.errors': match the message
    from kernels.backend import SMALL_GRID_WARNING

    config.addinivalue_line("filterwarnings", f"ignore:{SMALL_GRID_WARNING}")


def pytest_collection_modifyitems(config, items):
    from kernels import backend

    if backend.gpu_available():
        return
    why = "the CUDA simulator" if backend.simulator_active() else "no CUDA backend"
    skip = pytest.mark.skip(reason=f"needs a real CUDA GPU; none here (this session uses {why})")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def child_pythonpath(root: str | None = None) -> str:
    """PYTHONPATH for a child Python process: the project first, then whatever this session already had (a
    GPU machine puts its extra packages there)."""
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)


def run_fresh_python(code: str, *args: str, timeout: int = 120, **env: str) -> subprocess.CompletedProcess:
    """``python -c code args`` in a new interpreter that starts as the app does: the project importable and
    numba left to find its backend (this session's simulator switch is not passed on); ``env`` adds
    variables. Output is captured as text."""
    child_env = {**os.environ, "PYTHONPATH": child_pythonpath(), **env}
    child_env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                          env=child_env)


@pytest.fixture(scope="session")
def cuda_backend():
    """The backend that runs @cuda.jit kernels in this session: the simulator, or the real GPU."""
    from kernels import backend

    return backend.resolve("sim") if backend.simulator_active() else backend.resolve("cuda")


@pytest.fixture(scope="session")
def cpu_backend():
    from kernels import backend

    return backend.resolve("cpu")
