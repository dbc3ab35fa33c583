"""`bench ... --processes P`: the same bench command run in P fresh processes one after another, each with
its share of the repeats, their result files joined into one run (kernels/harness/processes.py says why).

The children are this command line itself, less the options the parent keeps (output files, resources)
and with each child's repeats, so every option means in a child what it means here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from kernels import signals
from kernels.errors import InputError

# options the parent handles (or sets per child); the flags among them take no value
PARENT_OPTIONS = {"--processes", "--json", "--csv", "--repeats", "--rounds", "--backend", "--device", "--resources"}
FLAGS = {"--resources"}


def child_argv(argv: list[str], backend) -> list[str]:
    """``argv`` (``bench TARGET ...``, as parsed) without the parent's options, with the resolved backend."""
    out, i = [], 0
    while i < len(argv):
        word = argv[i]
        name = word.split("=", 1)[0]
        if name in PARENT_OPTIONS:
            i += 1 if (name in FLAGS or "=" in word) else 2
            continue
        out.append(word)
        i += 1
    out += ["--backend", backend.kind]
    if backend.is_gpu:
        out += ["--device", str(backend.device)]
    return out


def run(args, backend, shares: list[int], peak_gbps: float | None, on_row) -> list:
    """Run the children in turn, say each one's end on stderr, and return the joined rows (each also given
    to ``on_row``). A child refusing its input is InputError (exit 2); one that fails otherwise is a
    RuntimeError (exit 1); Ctrl-C stops the running child with the parent."""
    from kernels.harness.processes import merge_processes
    from kernels.harness.results_read import read_result

    argv = child_argv(list(args.argv[1:]), backend)
    runs = []
    folder = tempfile.mkdtemp(prefix="raytracer-processes-")
    try:
        with signals.cleaned_up(lambda: shutil.rmtree(folder, ignore_errors=True)):
            for i, share in enumerate(shares, start=1):
                path = os.path.join(folder, f"process-{i}.json")
                command = [sys.executable, "-m", "raytracer_app", *argv, "--repeats", str(share),
                           "--rounds", str(args.rounds), "--json", path]
                start = time.perf_counter()
                code, tail = _run_child(command)
                why = _failure(code, tail, path)
                if why is not None:
                    text = f"process {i} of {len(shares)} {why}"
                    raise InputError(text) if code == 2 else RuntimeError(text)
                runs.append(read_result(path, f"process {i}'s result file").rows)
                print(f"process {i}/{len(shares)}: {len(runs[-1])} rows, {share} repeats each, "
                      f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = merge_processes(runs, peak_gbps)
    for row in rows:
        on_row(row)
    return rows


LOG_TAIL_BYTES = 64 * 2**10  # what is read of a child's stderr: its last lines, however much it printed


def _run_child(command: list[str]) -> tuple[int, str]:
    """Run one child to its end: (exit status, the last LOG_TAIL_BYTES of its stderr). Its stdout (the
    table the parent prints itself) goes nowhere and of its stderr only the tail is kept, so a child (a
    variant file) printing hundreds of MB costs neither memory nor disk here; Ctrl-C or a forced exit ends
    it with the parent."""
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tail = bytearray()

    def keep_tail():
        while chunk := proc.stderr.read1(1 << 16):
            tail.extend(chunk)
            del tail[:-LOG_TAIL_BYTES]

    reader = threading.Thread(target=keep_tail, daemon=True)
    reader.start()
    try:
        with signals.cleaned_up(proc.kill):
            code = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(5)
        proc.stderr.close()
    return code, bytes(tail).decode("utf-8", "replace")


def _failure(code: int, stderr: str, path: str) -> str | None:
    """Why a child's run cannot be used (None when it can: exit 0, or 1 with its rows written, which is a
    variant failing verification, reported in its row)."""
    if code in (0, 1) and os.path.exists(path):
        return None
    lines = [x for x in stderr.splitlines() if x.strip()]
    last = lines[-1].removeprefix("raytracer-app: ") if lines else "no message"
    return f"exited with {code}: {last}"
