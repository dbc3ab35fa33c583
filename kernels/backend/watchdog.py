"""Every child process the app waits on, under one deadline: the one mechanism of the simulator's and the
user variants' child (kernels/backend/child.py), the `--processes` children (kernels/service/bench_processes.py),
the inspector's compiler child (kernels/inspector/compiler.py) and Nsight Compute's (kernels/counters/measure.py).

Parent side. A child starts in a process group of its own with SIGINT ignored, so a terminal's Ctrl-C reaches
the parent only, which ends its children. Everything the parent waits on from a child counts against one
:class:`Deadline`: ``start_s`` until the child says it started, then at most ``silence_s`` between two signs
of progress, each message counted only once it has arrived whole (a half-written one is silence), up to its
end. A child that misses it is ended with its whole process group (:func:`end_group`) and reported in one
line (:class:`Stalled`). :func:`watch` does this for a child started with :func:`popen` that speaks through
marker lines on its stderr.

Child side. Progress comes from the work itself, never from a thread beside it (a thread would beat on while
the work is stuck): :func:`beat` is called by the simulator after every block it runs, by the timers after
every timed call and by the harness after every row; it reaches the parent through the sink the child's
serving loop installed (:func:`beats_to`: a pipe message, or :data:`ALIVE` on stderr), at most every BEAT_S.
Imports neither numba nor Qt.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

BEAT_S = 0.25  # at most four beats a second reach the parent, however often the work calls beat()
SILENCE_S = 120.0  # the app's own work: its longest step without a beat (one CPU kernel's compile, one frame)
STARTED = "@started"  # a child's word on stderr that it has read its job
ALIVE = "@alive"  # a child's beat on stderr
LOG_TAIL_BYTES = 64 * 2**10  # what is kept of a child's stderr: its last lines, however much it printed
POLL_S = 0.05


class Stalled(RuntimeError):
    """The child missed its deadline; its process group has been ended. ``started``: whether it had said it
    started (False: it stalled starting, or never read its job)."""

    def __init__(self, seconds: float, what: str = "", started: bool = True):
        why = ("nothing finished within {s:g} s (a kernel that never ends?)" if started else
               "its process did not start and take the job within {s:g} s")
        super().__init__(f"{what + ': ' if what else ''}stopped by the watchdog: {why.format(s=seconds)}; "
                         f"its process was ended")
        self.seconds, self.started = seconds, started


# ------------------------------------------------------------------------------------------------ child side
_sink = None
_last_beat = 0.0


def beat() -> None:
    """The work progressed: tell the parent (at most every BEAT_S; a no-op outside a served child)."""
    global _last_beat
    sink = _sink
    if sink is None:
        return
    now = time.monotonic()
    if now - _last_beat < BEAT_S:
        return
    _last_beat = now
    try:
        sink()
    except (OSError, ValueError):  # the parent has gone: the serving loop finds out itself
        pass


@contextlib.contextmanager
def beats_to(sink):
    """While the block runs, :func:`beat` calls ``sink()`` (None: beats go nowhere)."""
    global _sink, _last_beat
    before, _sink, _last_beat = _sink, sink, 0.0
    try:
        yield
    finally:
        _sink = before


def beat_on_stderr() -> None:
    """A :func:`popen` child's beat. Its stderr is its parent's pipe: when that is broken the parent has
    gone (killed outright), and the child, in a session of its own that no terminal signal reaches, ends."""
    try:
        print(ALIVE, file=sys.stderr, flush=True)
    except BrokenPipeError:
        os._exit(1)


def say_started() -> None:
    """A :func:`popen` child has read its job: the parent's start-up deadline ends here."""
    print(STARTED, file=sys.stderr, flush=True)


def ignore_interrupts() -> None:
    """A child ignores SIGINT: a terminal's Ctrl-C is the parent's to handle, and the parent ends the child
    (so no child prints its own traceback beside the parent's one line)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def interrupts_blocked():
    """SIGINT blocked in the calling thread while the block runs: a child started inside inherits the block,
    so a Ctrl-C before it has set SIGINT aside stays pending and is then dropped (see child.py's entry)."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (AttributeError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# ----------------------------------------------------------------------------------------------- parent side
class Deadline:
    """``start_s`` until :meth:`heard` says the child started, then ``silence_s`` between two signs of
    progress, counted from the moment it was made."""

    def __init__(self, start_s: float, silence_s: float | None = None):
        self.start_s = start_s
        self.silence_s = silence_s if silence_s is not None else start_s
        self.started = False
        self._heard = time.monotonic()

    def heard(self, started: bool = True) -> None:
        self._heard = time.monotonic()
        self.started = self.started or started

    @property
    def limit(self) -> float:
        return self.silence_s if self.started else self.start_s

    def overdue(self) -> bool:
        return time.monotonic() - self._heard > self.limit

    def stalled(self, what: str = "") -> Stalled:
        return Stalled(self.limit, what, self.started)


def end_group(proc, grace_s: float = 0.5) -> None:
    """End a running child and, where it leads a process group of its own, everything in that group:
    SIGTERM, then SIGKILL after ``grace_s``. ``proc``: a subprocess.Popen or a multiprocessing.Process."""
    pid = proc.pid

    def alive() -> bool:
        return proc.poll() is None if isinstance(proc, subprocess.Popen) else proc.is_alive()

    if pid is None or not alive():
        return
    try:  # early in its start a child may not lead its group yet: then it alone is ended
        leads = os.getpgid(pid) == pid
    except ProcessLookupError:
        return

    def send(sig) -> None:
        try:
            os.killpg(pid, sig) if leads else os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def wait(seconds) -> None:
        if isinstance(proc, subprocess.Popen):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(seconds)
        else:
            proc.join(seconds)

    send(signal.SIGTERM)
    wait(grace_s)
    if leads or alive():
        send(signal.SIGKILL)  # what is left of its group, even when the leader has gone
        wait(grace_s)


def popen(command, **kwargs) -> subprocess.Popen:
    """A child process in a session (so a process group) of its own, started with SIGINT blocked: a
    terminal's Ctrl-C reaches the parent only, and :func:`end_group` ends the child with whatever it started.
    (No ``preexec_fn``: it is unsafe in a process with threads.)"""
    with interrupts_blocked():
        return subprocess.Popen(command, start_new_session=True, **kwargs)


def run(command, timeout_s: float, capture_output: bool = False, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run(command, timeout=timeout_s, ...)`` for a short tool (git, ptxas, nvcc, ncu's queries)
    under the same rules as every child: its own process group, SIGINT blocked, and on its deadline (or a
    Ctrl-C in the parent) its whole group ended before TimeoutExpired (or the interrupt) is raised."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    kwargs.pop("check", None)
    proc = popen(command, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except BaseException:
        end_group(proc, 0.1)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def watch(proc: subprocess.Popen, deadline: Deadline, should_stop=lambda: False,
          what: str = "") -> tuple[int | None, str]:
    """Wait for ``proc`` (started by :func:`popen` with ``stderr=PIPE``) under ``deadline``: its stderr is read
    by a thread, line by line; :data:`STARTED` ends its start-up, :data:`ALIVE` is a beat, and any other line
    goes to the tail kept (the last LOG_TAIL_BYTES: a loud child costs no memory). Returns (exit status, the
    tail), or (None, tail) when ``should_stop()`` turned true; raises :class:`Stalled` when it missed the
    deadline. Either way, and on Ctrl-C, the child's group is ended first."""
    from kernels import signals

    tail = bytearray()
    lock = threading.Lock()
    heard = [0]  # signs of life (the child started, or its work beat) since the waiting loop last looked
    markers = (STARTED.encode(), ALIVE.encode())

    def read():
        pending = b""
        while chunk := proc.stderr.read1(1 << 16):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            pending = pending[-LOG_TAIL_BYTES:]  # one endless line is cut, never held whole
            for line in lines:
                if len(line) <= 16 and line.strip() in markers:
                    with lock:
                        heard[0] += 1
                    continue
                with lock:
                    tail.extend(line + b"\n")
                    del tail[:-LOG_TAIL_BYTES]
        with lock:
            tail.extend(pending)
            del tail[:-LOG_TAIL_BYTES]

    reader = threading.Thread(target=read, name=f"{what or 'child'}-stderr", daemon=True)
    reader.start()
    try:
        with signals.cleaned_up(lambda: end_group(proc, 0.1)):
            while proc.poll() is None:
                with lock:
                    signs, heard[0] = heard[0], 0
                if signs:
                    deadline.heard()
                if should_stop():
                    end_group(proc)
                    return None, _text(tail, lock)
                if deadline.overdue():
                    end_group(proc)
                    raise deadline.stalled(what)
                time.sleep(POLL_S)
    except BaseException:  # Ctrl-C in the parent: the child goes with it
        end_group(proc, 0.1)
        raise
    finally:
        reader.join(5)
        with contextlib.suppress(OSError):
            proc.stderr.close()
    return proc.returncode, _text(tail, lock)


def _text(tail: bytearray, lock) -> str:
    with lock:
        return bytes(tail).decode("utf-8", "replace")
