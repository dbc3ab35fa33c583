"""The embedded default: with no cluster named, a run happens in this process as before and Dask is never
imported (the `cluster` extra is optional; a cold start must not pay for it)."""

from __future__ import annotations

import pytest

from tests.conftest import run_fresh_python

CHILD = r"""
import sys
from raytracer_app.cli import main
code = main(["bench", "reduction", "--backend", "cpu", "--n", "4096", "--variants", "numpy", "--repeats", "1"])
import raytracer_app.gui.shell.main_window  # the window with its Run on control, not connected
print("exit", code, "dask", any(m == "dask" or m.startswith(("dask.", "distributed")) for m in sys.modules))
"""


@pytest.mark.slow
def test_a_bench_without_a_cluster_runs_here_and_never_imports_dask(monkeypatch):
    monkeypatch.delenv("RAYTRACER_CLUSTER", raising=False)
    proc = run_fresh_python(CHILD, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "exit 0 dask False"
