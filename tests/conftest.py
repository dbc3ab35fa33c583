"""Test session setup. Runs before numba is imported anywhere:

- Without a GPU, the session runs the CUDA kernels in Numba's simulator (NUMBA_ENABLE_CUDASIM=1), so
  tests that launch CUDA kernels on small inputs run everywhere; with a GPU they run on the GPU instead.
  RAYTRACER_TEST_BACKEND=sim|cuda overrides the detection.
- Tests marked ``gpu`` need a real GPU and are skipped with the reason when there is none.
- Qt runs offscreen.
- With pytest-xdist installed (the ``test`` extra), a plain ``python -m pytest`` runs on up to two worker
  processes (``-n 0``, or tests of one file only, run in this one; see ``pytest_cmdline_main``). Each
  worker has its own cache folder; the inspector's compile cache is one folder for the session, shared by
  the workers (its entries are keyed by what they hold and written atomically), so that every kernel is
  compiled once per architecture.
"""

import contextlib
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
# caches (best's tuning, results the window keeps, the inspector's compiles) go to a folder of this session,
# never the user's; the process that made it removes it at the session's end (pytest_unconfigure). xdist
# workers inherit the folder from the main process and each takes a cache folder of its own in it, so that
# what one test writes no other test running at the same time can see; the inspector's compiles are shared.
_SESSION_ENV = "RAYTRACER_TEST_SESSION_DIR"
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
_SESSION_DIR = None  # set in the process that made the folder (and so removes it)
if _WORKER is None and "RAYTRACER_CACHE_DIR" not in os.environ:
    _SESSION_DIR = tempfile.mkdtemp(prefix="raytracer-test-")
    os.environ[_SESSION_ENV] = _SESSION_DIR
    os.environ["RAYTRACER_CACHE_DIR"] = os.path.join(_SESSION_DIR, "cache")
    os.environ.setdefault("RAYTRACER_INSPECT_CACHE", os.path.join(_SESSION_DIR, "inspect"))
elif _WORKER is not None and os.environ.get(_SESSION_ENV):
    os.environ["RAYTRACER_CACHE_DIR"] = os.path.join(os.environ[_SESSION_ENV], f"cache-{_WORKER}")
if _WORKER is not None and hasattr(os, "sched_setaffinity"):
    # one core per worker: the simulator hands the GIL between its Python threads thousands of times a
    # second, and a thread woken on the core the other worker keeps busy waits for the scheduler each time
    _CORES = sorted(os.sched_getaffinity(0))
    if len(_CORES) > 1:
        os.sched_setaffinity(0, {_CORES[int(_WORKER.lstrip("gw") or 0) % len(_CORES)]})


def pytest_unconfigure(config):
    if _SESSION_DIR is not None:
        shutil.rmtree(_SESSION_DIR, ignore_errors=True)


MAX_WORKERS = 2  # each worker pays its own start (numba, Qt, the CPU twins' compiles): two, as 2-core CI has
# the files that compile with NVIDIA's tools for about a minute each start first, one per worker, so that
# neither starts last while the other worker idles; the others keep their order (the first of them warm
# numba's cache before the files that start new interpreters come)
_FIRST = ("test_inspector.py", "test_user_variant_templates.py")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """``python -m pytest`` on xdist workers when pytest-xdist is installed and ``-n`` was not given (not
    in pyproject's addopts: a machine without the plugin, as the GPU machine's bundle, would refuse the
    option). Runs before xdist's own hook, which turns ``-n`` into workers. A test file runs whole on one
    worker (``--dist loadfile``), so that a module's costly fixtures are made once, and the two longest
    files go first (pytest_collection_modifyitems)."""
    if not config.pluginmanager.hasplugin("xdist") or _WORKER is not None:
        return
    files = {arg.split("::")[0] for arg in config.args}
    one_file = len(files) == 1 and files.pop().endswith(".py")  # it would run whole on one worker anyway
    if config.option.numprocesses is None and not config.option.collectonly and not one_file:
        config.option.numprocesses = "auto"
        if config.option.dist == "no":
            config.option.dist = "loadfile"
            config.option.loadscopereorder = False  # keep the order made below, not one by test count


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """Workers for ``-n auto``: PYTEST_XDIST_AUTO_NUM_WORKERS if set; none with a GPU (its tests and
    timings keep the device to themselves, as before); else the usable cores, at most MAX_WORKERS."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    if _gpu_present():
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_WORKERS)) if cores > 1 else 0


def pytest_configure(config):
    # added here, not in pyproject.toml: naming numba's warning class there would import numba before
    # this file could choose the simulator. The seed variants launch small grids on purpose.
    # numba-cuda 0.30 raises its own class (numba.cuda.core.errors), not numba.core.errors': match the message
    from kernels.backend import SMALL_GRID_WARNING

    config.addinivalue_line("filterwarnings", f"ignore:{SMALL_GRID_WARNING}")
    if _WORKER is None:
        _compile_the_projects_bytecode()


def _compile_the_projects_bytecode() -> None:
    """The project's modules byte-compiled into their __pycache__ folders (ignored by git) once, before the
    workers start: the session starts about 130 interpreters (CLI children, the simulator's and the variant
    files' children, scripts), and where PYTHONDONTWRITEBYTECODE is set, as on CI, each would compile every
    module it imports from source again (0.2-0.4 s a start). Up-to-date files are left as they are."""
    import compileall

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for package in ("kernels", "raytracer_app"):
        compileall.compile_dir(os.path.join(root, package), quiet=2, workers=0)


def pytest_collection_modifyitems(config, items):
    if _WORKER is not None:  # every worker collects, and must order, the same
        items.sort(key=lambda item: _FIRST.index(item.path.name) if item.path.name in _FIRST else len(_FIRST))
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


class SessionCompiles:
    """``compiles(arch)``: every declared GPU kernel compiled by the inspector for ``arch`` (its child
    process, ptxas, nvdisasm), once in a test session for both ARCHS together (one numba lowering of each
    kernel for both). The compiles go to ``folder``, the session's inspector cache, where every other test
    that inspects (and a second xdist worker) finds them; a lock on the folder keeps two workers from
    compiling the same kernels at once."""

    ARCHS = ("sm_90", "sm_80")

    def __init__(self, folder):
        self.folder = folder
        self._done: dict = {}

    def __call__(self, arch: str) -> dict:
        if arch not in self._done:
            from kernels.inspector import declarations
            from kernels.inspector.compiler import compile_for_archs
            from kernels.io.cache import make_private_dir

            archs = self.ARCHS if arch in self.ARCHS else (arch,)
            make_private_dir(self.folder)
            with _locked(self.folder / f".{'-'.join(archs)}.lock"):
                self._done.update(compile_for_archs(list(declarations.all_declarations()), archs, self.folder))
        return self._done[arch]


@contextlib.contextmanager
def _locked(path):
    try:
        import fcntl
    except ImportError:  # no flock (Windows): workers may compile the same kernel twice, never wrongly
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def compiled_kernels():
    """The session's :class:`SessionCompiles`, in the inspector's cache folder of this session (above)."""
    from kernels.inspector.compiler import cache_dir

    return SessionCompiles(cache_dir())
