"""`raytracer-app cluster start | status | stop` on this host: a Dask scheduler and one worker process per GPU
(``CUDA_VISIBLE_DEVICES=i`` in its environment before CUDA starts, one thread, resources ``GPU=1`` and the
GPU's model, named ``HOST-gpuI``), or, with no GPU, worker processes for the cpu and sim backends. They run
detached; what ``start`` began is written to a state file in the app's cache folder, so ``stop`` ends those
processes (by their ids) and no other."""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from kernels.cluster import GPU_RESOURCE
from kernels.errors import InputError, whole_items

DEFAULT_PORT = 8786
HOST_WORKERS = 2  # without a GPU: worker processes for the cpu and sim backends
START_TIMEOUT_S = 120  # the workers' start (each imports the app) before `start` gives up
STOP_GRACE_S = 10.0


def state_path() -> Path:
    from kernels.io.cache import cache_root

    return cache_root() / "cluster" / "state.json"


def read_state() -> dict | None:
    from kernels.io.reader import read_json

    path = state_path()
    if not path.is_file():
        return None
    try:
        state = read_json(path, "the cluster's state file", 1 << 20, "it lists a few processes")
    except InputError:  # garbled: as if no cluster had been started (its processes are then left alone)
        return None
    return state if isinstance(state, dict) and isinstance(state.get("processes"), list) else None


def listen_address(text: str, certs) -> tuple[str, str, int]:
    """(protocol, host, port) of ``--listen``: loopback by default; any other address needs --certs (TLS with
    mutual authentication)."""
    host, _, port = str(text).rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--listen {text!r} is not ADDR:PORT, e.g. 127.0.0.1:{DEFAULT_PORT}")
    if not _loopback(host) and not certs:
        raise InputError(f"--listen {text}: a scheduler beyond loopback admits clients by certificate only; give "
                         "--certs DIR (made by `raytracer-app cluster certs DIR`), see docs/cluster.md")
    return ("tls" if certs else "tcp"), host, int(port)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def gpu_plan(gpus: str) -> list[tuple[int, str]]:
    """[(index, model)] of the GPUs ``--gpus`` names ('all' or 0,1); [] for 'all' on a host without one."""
    from kernels.backend import devices
    from kernels.harness.results import short_device

    count = devices.gpu_count()
    if gpus == "all":
        chosen = list(range(count))
    else:
        chosen = whole_items(gpus, "--gpus", 0)
        missing = [i for i in chosen if i >= count]
        if missing:
            raise InputError(f"--gpus {gpus}: this host has {count} GPU(s) (0..{count - 1})" if count else
                             f"--gpus {gpus}: this host has no CUDA GPU; give --gpus all for cpu and sim workers")
    return [(i, _resource_name(short_device(devices.gpu_name(i)))) for i in chosen]


def _resource_name(model: str) -> str:
    return "".join(c for c in model if c.isalnum() or c in "-_") or "GPU0"


def start(gpus: str = "all", listen: str = f"127.0.0.1:{DEFAULT_PORT}", certs=None, say=print) -> dict:
    """Start the scheduler and the workers, wait until every worker has joined, write the state file."""
    old = read_state()
    if old and any(_alive(p) for p in old["processes"]):
        raise InputError(f"a cluster started here is running at {old['address']}; `raytracer-app cluster stop` "
                         "ends it first")
    protocol, host, port = listen_address(listen, certs)
    plan = gpu_plan(gpus)
    folder = state_path().parent
    from kernels.io.cache import make_private_dir

    make_private_dir(folder)
    tls = []
    if certs:
        from kernels.cluster.security import dask_cli_flags

        tls = dask_cli_flags(certs)
    shown_host = f"[{host}]" if ":" in host else host
    address = f"{protocol}://{shown_host}:{port}"
    processes = [_spawn("scheduler", [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", host,
                                      "--port", str(port), "--protocol", protocol, "--no-dashboard", *tls],
                        {}, folder)]
    name = socket.gethostname().split(".")[0]
    common = ["--nthreads", "1", "--nworkers", "1", "--no-dashboard", "--death-timeout", "60", *tls]
    worker_env = {"DASK_DISTRIBUTED__WORKER__DAEMON": "False"}  # its simulator and variant-file children
    if plan:
        for i, model in plan:
            processes.append(_spawn(f"{name}-gpu{i}", [sys.executable, "-m", "distributed.cli.dask_worker",
                                                       address, "--name", f"{name}-gpu{i}", "--resources",
                                                       f"{GPU_RESOURCE}=1,{model}=1", *common],
                                    {**worker_env, "CUDA_VISIBLE_DEVICES": str(i)}, folder))
    else:
        for i in range(HOST_WORKERS):
            processes.append(_spawn(f"{name}-cpu{i}", [sys.executable, "-m", "distributed.cli.dask_worker",
                                                       address, "--name", f"{name}-cpu{i}", *common],
                                    {**worker_env, "CUDA_VISIBLE_DEVICES": "", "NUMBA_ENABLE_CUDASIM": "1"},
                                    folder))
    state = {"address": address, "certs": str(certs) if certs else None, "processes": processes,
             "gpus": [{"index": i, "model": m} for i, m in plan], "started": time.time()}
    _write_state(state)
    try:
        _wait_for_workers(address, certs, len(processes) - 1)
    except Exception:
        stop(say=lambda line: None)
        raise
    return state


def _spawn(name: str, command: list, env: dict, folder: Path) -> dict:
    log = folder / f"{name}.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **env}, start_new_session=True)
    return {"name": name, "pid": proc.pid, "log": str(log), "command": command[2]}


def _write_state(state: dict) -> None:
    from kernels.io.writer import write_output

    write_output(state_path(), json.dumps(state, indent=1) + "\n", "the cluster's state file")


def _wait_for_workers(address, certs, count: int) -> None:
    from kernels.cluster import remote

    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            client = remote.connect(address, certs, "--listen")
            break
        except remote.ClusterError:
            if time.monotonic() > deadline:
                raise
    try:
        client.wait_for_workers(count, timeout=max(1.0, deadline - time.monotonic()))
    except TimeoutError:
        raise remote.ClusterError(f"the workers did not all join within {START_TIMEOUT_S} s (their logs: "
                                  f"{state_path().parent})") from None
    finally:
        client.close()


def _alive(process: dict) -> bool:
    """The process ``start`` began is still running (its id not reused by another program)."""
    import psutil  # a dependency of distributed

    pid = process.get("pid")
    if not isinstance(pid, int):
        return False
    try:
        p = psutil.Process(pid)
        return p.status() != psutil.STATUS_ZOMBIE and process.get("command", "") in " ".join(p.cmdline())
    except (psutil.Error, OSError):
        return False


def stop(say=print) -> int:
    """End the processes ``start`` began (workers first), each by its id; returns how many were running."""
    state = read_state()
    if state is None:
        raise InputError("no cluster was started here (`raytracer-app cluster start` starts one)")
    running = [p for p in reversed(state["processes"]) if _alive(p)]
    for p in running:
        _signal(p, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while any(_alive(p) for p in running) and time.monotonic() < deadline:
        time.sleep(0.1)
    for p in running:
        if _alive(p):
            _signal(p, signal.SIGKILL)
            say(f"{p['name']} did not end within {STOP_GRACE_S:.0f} s: killed")
    state_path().unlink(missing_ok=True)
    return len(running)


def _signal(process: dict, sig) -> None:
    try:
        os.killpg(process["pid"], sig)  # its own session: the worker's nanny and the worker process under it
    except OSError:
        try:
            os.kill(process["pid"], sig)
        except OSError:
            pass


def status_lines(client) -> list[str]:
    """One line per worker: its name, address, GPU and model, clocks, and what it runs now."""
    from kernels.cluster import remote

    found = remote.workers(client)
    busy = {w: len(keys) for w, keys in client.processing().items()}
    reports = client.run(worker_report)
    lines = [f"scheduler {client.scheduler.address}: {len(found)} worker(s)"]
    for w in found:
        r = reports.get(w.address) or {}
        gpu = f"{r.get('name', '?')} ({w.model})" if w.model else f"cpu and sim ({r.get('name', '?')})"
        clocks = (f", {r['clock_mhz']} MHz SM, {r['memory_clock_mhz']} MHz memory"
                  if r.get("clock_mhz") and r.get("memory_clock_mhz") else "")
        driver = f", driver {r['driver']}" if r.get("driver") else ""
        driver += f", power limit {r['power_limit_w']:.0f} W" if r.get("power_limit_w") else ""
        runs = f"running {busy.get(w.address, 0)} task(s)" if busy.get(w.address) else "idle"
        lines.append(f"  {w.name:<20} {w.address:<24} {gpu}{clocks}{driver}; {runs}")
    return lines


def worker_report() -> dict:
    """What a worker says of its device (run on each worker by `cluster status`)."""
    from kernels.backend import Backend, gpu_available

    from kernels.harness import results

    if gpu_available() and os.environ.get("CUDA_VISIBLE_DEVICES", "").strip():
        from kernels.counters.clocks import board

        info = {**results.device_info(Backend("cuda", 0), None), **board(0)}
        if "driver" not in info:
            try:
                from kernels.backend import driver

                version = int(driver.call("cuDriverGetVersion"))
                info["driver"] = f"CUDA {version // 1000}.{version % 1000 // 10}"
            except Exception:  # noqa: BLE001 - a driver without the call: left out
                pass
        return info
    return {"name": Backend("cpu").device_name}
