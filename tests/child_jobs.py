"""Jobs for the child-process deadline tests (tests/test_reliability_round4.py): each is called in a child of
kernels/backend/child.py as function(payload, send), as the app's own jobs are."""

from __future__ import annotations

import time

from kernels.backend import watchdog


def beating(seconds, send):
    """Work that goes on for ``seconds``, beating from the thread that does it."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)
        watchdog.beat()
    return "done"


def stuck(payload, send):
    """Work stuck in its own thread while another thread of the child stays alive (the old heartbeat's
    blind spot): no beat comes from the work."""
    import threading

    threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
    watchdog.beat()
    while True:
        time.sleep(0.05)


def half_message(payload, send):
    """A message's header and its first bytes written, then nothing: the parent must not block reading it."""
    import gc
    import os
    import struct
    from multiprocessing.connection import Connection

    conn = next(o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed)
    os.write(conn.fileno(), struct.pack("!i", 1 << 20) + b"\x80\x04" + b"x" * 100)
    time.sleep(3600)


def _stall_after_started() -> None:
    """``python -m tests.child_jobs``: a `--processes` child that says it started, starts a grandchild (its
    pid written where RAYTRACER_TEST_GRANDCHILD says) and then stalls without a beat."""
    import os
    import subprocess
    import sys

    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open(os.environ["RAYTRACER_TEST_GRANDCHILD"], "w") as f:
        f.write(str(grandchild.pid))
    watchdog.say_started()
    time.sleep(3600)


if __name__ == "__main__":
    _stall_after_started()
