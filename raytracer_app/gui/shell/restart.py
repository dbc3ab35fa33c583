"""Render > Restart with / without the CUDA simulator.

numba chooses between real CUDA and its simulator once per process, when it is imported, so moving to
the simulator (or away from it) means starting the app again: the window closes (saving its settings)
and ``run_gui`` replaces the process with ``raytracer-app gui --backend sim`` (or ``--backend auto``)."""

from __future__ import annotations

import os
import sys


def restart_label() -> tuple[str, str]:
    """The menu item's text and tooltip for this process."""
    from kernels.backend import simulator_active

    if simulator_active():
        return ("Restart &without the CUDA Simulator",
                "close and start the app again with --backend auto (a CUDA GPU when there is one, else the CPU)")
    return ("Restart with the CUDA &Simulator",
            "close and start the app again with --backend sim: CUDA kernels run in numba's simulator (slow; "
            "small images and inputs; its own settings)")


def restart_argv() -> list[str]:
    """The command that starts the app again on the other side; its last item is the backend."""
    from kernels.backend import simulator_active

    return [sys.executable, "-m", "raytracer_app", "gui", "--backend", "auto" if simulator_active() else "sim"]


def exec_restart(argv: list[str]) -> None:
    """Replace this process with ``argv`` (does not return). The simulator's switch is an environment
    variable that the new process must not inherit when leaving the simulator."""
    from kernels.backend import choice

    env = dict(os.environ)
    if not choice(argv[-1]).is_simulator:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(argv[0], argv, env)
