"""Stopping a command within a second: Ctrl-C (SIGINT) and SIGTERM end the CLI's commands with exit status
130 and 143, leaving no partial file and no child process behind, wherever the main thread is.

Python raises KeyboardInterrupt only between bytecodes of the main thread; inside a numba kernel, an LLVM
compile or a long C call it cannot, and a CPU kernel cannot be interrupted mid-call. So the signal also
wakes a watchdog thread (through the signal module's wakeup descriptor, written by the C-level handler at
once): when the main thread has not finished unwinding ``GRACE_S`` later, the watchdog runs the registered
clean-ups (the writer's temporary files, child processes, temporary folders) and ends the process with the
signal's status. The CPU kernels are compiled ``nogil=True`` so that the watchdog can run beside them.
Outputs are written atomically (kernels/io/writer.py), so an output is either whole or not there.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
import threading
import time
from typing import Callable

GRACE_S = 0.5  # the main thread's time to unwind before the process is ended from the watchdog
EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Terminated(KeyboardInterrupt):
    """SIGTERM: handled as Ctrl-C is (unwinding, clean-ups), ending with status 143."""


_cleanups: dict[int, Callable[[], None]] = {}
_lock = threading.Lock()
_ids = itertools.count()
_said = threading.Event()  # the one line "interrupted" was printed
_received: list[int] = []  # the signal that started the stop, while stoppable() runs


def on_forced_exit(cleanup: Callable[[], None]) -> int:
    """Run ``cleanup`` if the process is ended by the watchdog (it must be quick and never raise much);
    returns a token for :func:`forget`."""
    token = next(_ids)
    with _lock:
        _cleanups[token] = cleanup
    return token


def forget(token: int) -> None:
    with _lock:
        _cleanups.pop(token, None)


@contextlib.contextmanager
def cleaned_up(cleanup: Callable[[], None]):
    """Within the block, ``cleanup`` runs if the process is ended by the watchdog."""
    token = on_forced_exit(cleanup)
    try:
        yield
    finally:
        forget(token)


def status_of(exc: KeyboardInterrupt) -> int:
    return EXIT_STATUS[signal.SIGTERM] if isinstance(exc, Terminated) else EXIT_STATUS[signal.SIGINT]


def say_stopped(exc: KeyboardInterrupt, rows: int | None = None) -> int:
    """Print the one line (once) and return the exit status for ``exc``; ``rows``: a run that keeps what it
    finished says how many ('... after N row(s)'). Said, the watchdog (should the outputs' writing outlast
    its grace) ends the process without a second line."""
    if not _said.is_set():
        _said.set()
        after = "" if rows is None else f" after {rows} row(s)"
        print(f"raytracer-app: {'terminated' if isinstance(exc, Terminated) else 'interrupted'}{after}",
              file=sys.stderr, flush=True)
    return status_of(exc)


def stopped_by() -> KeyboardInterrupt | None:
    """The interruption a signal started (None without one): for a failure that is only its echo, e.g. a
    KeyboardInterrupt that numba turned into SystemError on its way out of a kernel."""
    if not _received:
        return None
    return Terminated() if _received[0] == signal.SIGTERM else KeyboardInterrupt()


def _on_signal(signum, frame):
    # further signals change nothing: the watchdog is counting; a second KeyboardInterrupt raised inside
    # the first one's handling would only print a traceback
    for sig in EXIT_STATUS:
        signal.signal(sig, signal.SIG_IGN)
    _received[:] = [signum]
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def exit_now(status: int) -> None:
    """End the process at once with ``status`` after an interruption the command unwound from: its output
    flushed and the clean-ups run, but not the interpreter's teardown (freeing a large frame, stopping
    numba's threads), which can take longer than the second a stop may take. The command said its line."""
    _said.set()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    _forced_exit(status)


def _forced_exit(status: int) -> None:
    if not _said.is_set():
        _said.set()
        os.write(2, f"raytracer-app: {'terminated' if status == 143 else 'interrupted'}\n".encode())
    with _lock:
        cleanups = list(_cleanups.values())
    for cleanup in cleanups:
        try:
            cleanup()
        except BaseException:  # noqa: BLE001 - ending now whatever a clean-up does
            pass
    os._exit(status)


def _watch(fd: int, stop: threading.Event) -> None:
    while True:
        try:
            data = os.read(fd, 64)
        except OSError:
            return
        if stop.is_set() or not data:
            return
        received = [s for s in data if s in EXIT_STATUS]
        if not received:
            continue
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            if stop.is_set():  # the command unwound and returned in time
                return
            time.sleep(0.02)
        _forced_exit(EXIT_STATUS[signal.Signals(received[0])])


@contextlib.contextmanager
def stoppable():
    """Within the block (in the main thread), SIGINT raises KeyboardInterrupt, SIGTERM :class:`Terminated`,
    and either ends the process ``GRACE_S`` later if it is still running. Elsewhere (another thread, a
    platform without wakeup descriptors) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    stop = threading.Event()
    try:
        old_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(read_end)
        os.close(write_end)
        yield
        return
    old = {sig: signal.signal(sig, _on_signal) for sig in EXIT_STATUS}
    _said.clear()
    _received.clear()
    watchdog = threading.Thread(target=_watch, args=(read_end, stop), name="signal-watchdog", daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        stop.set()
        for sig, handler in old.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(old_fd)
        os.write(write_end, b"\0")  # wakes the watchdog, which sees stop and returns
        watchdog.join(1.0)
        os.close(write_end)
        os.close(read_end)
