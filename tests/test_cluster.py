"""A Dask cluster runs the one door's requests (docs/cluster.md): a LocalCluster of two worker processes on the
cpu and sim backends gives the rows a local run gives, in the same order, each saying its worker; rows arrive
while the run goes on; Stop keeps the finished rows; a killed worker loses none; a job's JSON carries a
variant file's text. One cluster serves the module (its start is the cost)."""

from __future__ import annotations

import os
import signal

import pytest

from kernels.backend import Backend
from kernels.cluster import jobs
from kernels.errors import InputError
from kernels.service.bench import run_bench
from kernels.service.bench_request import BenchRequest

distributed = pytest.importorskip("distributed", reason="the cluster extra is not installed")

CPU = Backend("cpu")


def test_a_job_round_trips_through_json_with_its_variant_files_text(tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text("TARGET = 'reduction'\nNAME = 'mine'\n")
    other = tmp_path / "sub"
    other.mkdir()
    (other / "mine.py").write_text("TARGET = 'reduction'\nNAME = 'theirs'\n")
    request = BenchRequest("reduction", CPU, sizes=(4096, 8192), variants="numpy,mine,theirs",
                           variant_files=(str(mine), str(other / "mine.py")), repeats=3)
    job = jobs.bench_job(request)
    import json

    back = jobs.from_json(json.loads(json.dumps(jobs.to_json(job))))
    assert back == job
    assert dict(back.files) == {"mine.py": "TARGET = 'reduction'\nNAME = 'mine'\n",
                                "mine-2.py": "TARGET = 'reduction'\nNAME = 'theirs'\n"}
    assert back.request["variant_files"] == ["mine.py", "mine-2.py"]
    (tmp_path / "worker").mkdir()
    written = jobs.write_files(back, tmp_path / "worker")  # the worker's side: the texts as files again
    assert [open(p).read() for p in written.paths] == [mine.read_text(), (other / "mine.py").read_text()]
    rebuilt = BenchRequest.from_json({**back.request, "variant_files": written.paths}, CPU)
    assert rebuilt.sizes == (4096, 8192) and rebuilt.repeats == 3 and rebuilt.variants == ("numpy", "mine", "theirs")
    with pytest.raises(InputError, match="kind"):
        jobs.from_json({**jobs.to_json(job), "kind": "shell"})


def test_a_sweep_splits_by_variant_and_merges_in_a_local_runs_order():
    """A piece is one variant with all its sizes (its kernels compile on one worker); each row's key sorts it
    into a local run's order (size, launch, variant); rounds keep a problem's rows together: by size."""
    from kernels.cluster import pieces
    from kernels.registry import by_name

    spec = by_name("reduction")
    request = BenchRequest("reduction", CPU, sizes=(100, 200, 300), variants="cpu-parallel,numpy",
                           launches=()).to_json()
    parts = pieces.split(request, spec, workers=2)
    assert [p.changes for p in parts] == [{"variants": ["numpy"], "sizes": [100, 200, 300]},  # descriptor order
                                          {"variants": ["cpu-parallel"], "sizes": [100, 200, 300]}]
    keyed = {pieces.row_key(p, seq): (n, p.variant)
             for p in reversed(parts) for seq, n in enumerate(p.changes["sizes"])}
    assert pieces.merged(keyed) == [(n, v) for n in (100, 200, 300) for v in ("numpy", "cpu-parallel")]
    rounds = BenchRequest("reduction", CPU, sizes=(100, 200), variants="numpy,cpu-parallel", repeats=4,
                          rounds=2).to_json()
    assert [p.changes for p in pieces.split(rounds, spec, workers=2)] == [{"sizes": [100]}, {"sizes": [200]}]


def test_a_gpu_sweep_is_cut_only_where_whole_variants_would_leave_gpus_idle_and_goes_out_longest_first():
    from kernels.backend.devices import DeviceLimits
    from kernels.cluster import pieces, remote
    from kernels.registry import by_name

    spec = by_name("reduction")
    gpu = remote.RemoteGpu("cuda", 0, "", "NVIDIA H200", DeviceLimits(name="NVIDIA H200", sm_count=132), 100 << 30)
    names = [v.name for v in spec.variants if v.kind == "gpu"]  # 14 kernels
    sizes = tuple(1 << k for k in range(20, 30, 2))
    kernels_only = BenchRequest("reduction", gpu, sizes=sizes, variants=",".join(names)).to_json()
    whole = pieces.split(kernels_only, spec, workers=2)  # 14 whole variants over 2 GPUs: 7 each
    assert [p.variant for p in whole] == names and all(p.size_indices == (0, 1, 2, 3, 4) for p in whole)
    request = BenchRequest("reduction", gpu, sizes=sizes, variants=",".join(names + ["numpy"])).to_json()
    cut = pieces.split(request, spec, workers=4)  # 15 over 4 GPUs: 4, 4, 4, 3 whole; the largest rows alone
    assert [(p.variant, p.changes["sizes"]) for p in cut if p.variant == "best"] == [("best", list(sizes[:4])),
                                                                                   ("best", [sizes[4]])]
    assert [p.changes["sizes"] for p in cut if p.variant == "numpy"] == [list(sizes)]  # host code stays whole
    order = pieces.longest_first(cut)
    assert order[0].variant == "numpy" and {p.changes["sizes"][-1] for p in order[1:15]} == {sizes[4]}
    whole = pieces.split(request, spec, workers=1)
    assert len(whole) == 15 and pieces.spread([p.cost for p in cut], 4) < pieces.spread([p.cost for p in whole], 4)
    left = [p for p in order if p.changes["sizes"] == list(sizes[:4])]
    assert pieces.take(left, {"best"}).variant == "best" and left[0].variant == names[0]  # its own kernels first
    big = pieces.longest_first(cut)
    assert pieces.take(big, {"best"}).variant == "numpy"  # not for a piece far shorter than the longest
    keys = [pieces.row_key(p, seq) for p in cut if p.variant in ("best", "numpy") for seq in range(len(p.size_indices))]
    assert sorted(keys) == [(i, 0, v) for i in range(5) for v in (names.index("best"), len(names))]
    numpy = next(p for p in cut if p.variant == "numpy")  # its worker died after two rows: the other three again
    again = pieces.rest(numpy, {pieces.row_key(numpy, seq): "row" for seq in range(2)}, 99)
    assert (again.index, again.changes["sizes"], again.size_indices) == (99, list(sizes[2:]), (2, 3, 4))
    assert [pieces.row_key(again, seq) for seq in range(3)] == [(i, 0, len(names)) for i in (2, 3, 4)]
    assert pieces.rest(numpy, {pieces.row_key(numpy, seq): "row" for seq in range(5)}, 99) is None


def test_a_workers_pieces_of_one_sweep_share_its_problems_as_a_local_runs_variants_do():
    """Two one-variant pieces run one after another on a worker build each problem once (a local run builds
    it once for every variant), and give the rows a run without the cache gives; the budget bounds it."""
    from kernels.cluster.problem_cache import ProblemCache, problem_bytes

    cache = ProblemCache("sweep", 1 << 30)
    sizes = (4096, 8192)
    rows = []
    for _ in range(2):  # a piece of one variant, then another's (the same here: numpy compiles nothing)
        rows += run_bench(BenchRequest("reduction", CPU, sizes=sizes, variants="numpy", repeats=1),
                          problem_cache=cache).rows
    assert (cache.misses, cache.hits, len(cache)) == (2, 2, 2)
    plain = run_bench(BenchRequest("reduction", CPU, sizes=sizes, variants="numpy", repeats=1)).rows
    assert [(r.n, r.result, r.verified) for r in rows] == [(r.n, r.result, r.verified) for r in plain] * 2
    assert all(r.verified == "yes" for r in rows)
    kept = next(iter(BenchRequest("reduction", CPU, sizes=(8192,), repeats=1).problems(cache)))
    assert problem_bytes(kept) >= 8192 * 4 and cache.hits == 3
    small = ProblemCache("sweep", 40_000)  # one 8192-element int32 input fits, not two
    for n in (8192, 8192 + 1, 8192):
        next(iter(BenchRequest("reduction", CPU, sizes=(n,), repeats=1).problems(small)))
    assert (small.misses, small.hits, len(small)) == (3, 0, 1)


# --- on a LocalCluster of two worker processes --------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    import dask
    from distributed import Client, LocalCluster

    # a worker process may start children (the simulator's, a variant file's): not a daemon
    with dask.config.set({"distributed.worker.daemon": False, "distributed.scheduler.allowed-failures": 3}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        c = Client(cluster)
        yield c
        c.close()
        cluster.close()


def _key(r):
    return r.variant, r.n, r.block, r.verified


@pytest.mark.slow
@pytest.mark.parametrize("backend, fields", [
    ("cpu", dict(sizes=(4096, 8192, 16384), variants="numpy")),
    ("sim", dict(sizes=(256, 1024), variants="numpy,sequential", launches=())),
])
def test_a_cluster_gives_a_local_runs_verified_rows_in_its_order(client, backend, fields):
    from kernels.cluster import remote

    request = BenchRequest("reduction", Backend(backend), repeats=1, **fields)
    here = run_bench(request)
    arrived, running_at_first_row = [], []

    def progress(kind, value):
        if kind == "row":
            if not arrived:  # rows come while other pieces still run or wait
                running_at_first_row.append(sum(len(k) for k in client.processing().values()))
            arrived.append(value)

    there = remote.run_bench(client, jobs.bench_job(request), progress)
    assert not there.stopped and there.messages == []
    assert [_key(r) for r in there.rows] == [_key(r) for r in here.rows]
    assert all(r.verified == "yes" for r in there.rows)
    assert [r.result for r in there.rows] == [r.result for r in here.rows]
    assert {r.worker for r in there.rows} <= {"0", "1"} and all(r.worker for r in there.rows)
    assert sorted(map(_key, arrived)) == sorted(map(_key, there.rows))
    if backend == "sim":  # a piece of sequential runs on while numpy's first rows come (cpu rows: microseconds)
        assert running_at_first_row[0] > 0
        ran = {v: {r.worker for r in there.rows if r.variant == v} for v in ("numpy", "sequential")}
        assert all(len(w) == 1 for w in ran.values())  # a variant's rows (its kernels' compile) on one worker


@pytest.mark.slow
def test_stop_ends_a_remote_sweep_and_keeps_its_finished_rows(client):
    from kernels.cluster import remote

    request = BenchRequest("reduction", Backend("sim"), sizes=(128, 256, 512, 1024), variants="sequential",
                           repeats=2)
    seen = []
    there = remote.run_bench(client, jobs.bench_job(request), lambda kind, value: seen.append(value)
                             if kind == "row" else None, stop=lambda: bool(seen))
    assert there.stopped
    assert 1 <= len(there.rows) < 4  # stopped before the sweep's last size
    assert all(r.verified == "yes" for r in there.rows)


def test_a_piece_that_starts_after_stop_runs_none_of_its_setup(client, monkeypatch):
    """Stop asked: every queued piece returns at once, empty and stopped, before its request is even built
    (one piece a row: their set-up alone kept a stopped sweep on one H200 going for 10 s)."""
    from distributed import Event

    from kernels.cluster.worker_side import run_job

    request = BenchRequest("reduction", Backend("cpu"), sizes=(1 << 16,), variants="numpy", repeats=2)
    Event("test-stop-asked", client=client).set()
    try:
        doc = jobs.to_json(jobs.bench_job(request))
        out = client.submit(run_job, doc, "test-stop-topic", "test-stop-asked", pure=False).result(timeout=30)
    finally:
        Event("test-stop-asked", client=client).clear()
    assert out["rows"] == [] and out["stopped"] is True and out["piece"] == jobs.from_json(doc).piece


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_no_finished_row(client):
    from kernels.cluster import remote

    pids = client.run(os.getpid)  # worker address -> its process
    names = {w.name: w.address for w in remote.workers(client)}
    request = BenchRequest("reduction", Backend("sim"), sizes=(256, 512, 1024), variants="numpy,sequential",
                           repeats=2)
    killed = []

    def progress(kind, value):
        if kind == "row" and not killed and value.variant == "sequential":  # its worker dies mid-piece
            killed.append(value.worker)
            os.kill(pids[names[value.worker]], signal.SIGKILL)

    there = remote.run_bench(client, jobs.bench_job(request), progress)
    assert killed
    assert [(r.variant, r.n) for r in there.rows] == [(v, n) for n in (256, 512, 1024)
                                                      for v in ("sequential", "numpy")] or there.stopped
    assert all(r.verified == "yes" for r in there.rows) and len(there.rows) >= 1
    client.wait_for_workers(2, timeout=60)  # the nanny starts the killed worker again


def test_a_bad_or_unreachable_address_is_one_line():
    from kernels.cluster import remote

    for bad in ("nonsense", "host:99999", "tcp://:1"):
        with pytest.raises(InputError, match="not a cluster address"):
            remote.parse_address(bad)
    with pytest.raises(InputError, match="--certs DIR"):
        remote.parse_address("tls://127.0.0.1:8786")
    assert remote.parse_address("127.0.0.1:8786") == "tcp://127.0.0.1:8786"


@pytest.mark.slow
def test_a_tls_cluster_refuses_a_client_without_certificates(tmp_path, monkeypatch):
    from distributed import LocalCluster

    from kernels.cluster import remote, security

    security.make_certificates(tmp_path / "certs")
    monkeypatch.setattr(remote, "CONNECT_TIMEOUT_S", 3)
    with LocalCluster(n_workers=0, processes=False, protocol="tls://", host="127.0.0.1", dashboard_address=None,
                      security=security.server_security(tmp_path / "certs")) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://")
        with pytest.raises(remote.ClusterError, match="cannot reach the cluster"):
            remote.connect(address.replace("tls://", "tcp://"))
        c = remote.connect(address, tmp_path / "certs")
        try:
            assert c.scheduler_info()["address"] == address
        finally:
            c.close()


@pytest.mark.slow
def test_render_with_cluster_draws_on_a_worker_and_writes_the_png(client, tmp_path, capsys):
    from raytracer_app.cli import main
    from raytracer_app.png import read_png_text

    out = tmp_path / "j.png"
    code = main(["render", "julia", "--backend", "cpu", "--size", "48x32", "--iterations", "50", "--out", str(out),
                 "--cluster", client.scheduler.address])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert out.exists() and read_png_text(out)  # the frame's timing and view, as a local render's PNG has
    assert "drawn on 0 of" in printed or "drawn on 1 of" in printed


@pytest.mark.slow
def test_a_frame_drawn_on_a_worker_is_the_frame_drawn_here(client):
    from kernels.cluster import remote
    from kernels.julia.params import JuliaParams
    from kernels.service.render import render_frame
    from kernels.service.requests import RenderRequest

    request = RenderRequest("julia", CPU, (48, 32), params=JuliaParams(iterations=50))
    back = jobs.render_request(jobs.render_job(request).request, CPU)
    assert back == request
    there = remote.render(client, request)
    here = render_frame({}, request)
    assert there.frame.image.shape == (32, 48, 4) and (there.frame.image == here.image).all()
    assert there.worker in ("0", "1") and there.round_trip_ms >= there.worker_ms > 0
    assert there.frame.kernel.repeats == 1 and there.frame.backend == "cpu"


@pytest.mark.slow
def test_bench_with_cluster_prints_rows_with_their_worker_and_writes_a_result_file(client, tmp_path, capsys):
    from kernels.harness.results_read import read_result
    from raytracer_app.cli import main

    out = tmp_path / "r.json"
    code = main(["bench", "reduction", "--backend", "cpu", "--sizes", "4096,8192", "--variants", "numpy",
                 "--repeats", "1", "--cluster", client.scheduler.address, "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    result = read_result(out, "--json")
    assert [(r.variant, r.n, r.verified) for r in result.rows] == [("numpy", 4096, "yes"), ("numpy", 8192, "yes")]
    assert all(r.worker in ("0", "1") for r in result.rows)
    assert result.device["cluster"] == client.scheduler.address and result.request["sizes"] == [4096, 8192]
    assert "worker" in printed.splitlines()[1]


def test_bench_with_cluster_brings_back_each_workers_ceilings_with_its_rows(client, tmp_path, capsys):
    """A row's % of its ceiling is against its worker's figure: the figures come back, each naming its worker,
    printed and written as a local run's are (a sized ceiling: one figure per table size)."""
    from kernels.harness.results_read import read_result
    from raytracer_app.cli import main

    out = tmp_path / "r.json"
    code = main(["bench", "hashtable", "--backend", "cpu", "--sizes", "1000,2000", "--variants", "cpu",
                 "--repeats", "1", "--cluster", client.scheduler.address, "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    result = read_result(out, "--json")
    figures = result.device["ceilings"]
    assert len({f["table_bytes"] for f in figures}) == 2 == len(figures)  # one table per size
    for r in result.rows:  # each row judged against the figure its own worker measured for its size
        (f,) = [f for f in figures if f["rate"] == r.ceiling_rate]
        assert f["ceiling"] == r.ceiling == "cas" and f["by"] == f"worker {r.worker}"
    lines = [x for x in printed.splitlines() if x.startswith("ceiling cas: ")]
    assert len(lines) == 2 and all("; measured by worker " in x for x in lines)


def test_cluster_commands_refuse_bad_input_in_one_line(tmp_path, capsys, monkeypatch):
    from raytracer_app.cli import main

    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["bench", "reduction", "--cluster", "no-port-here"]) == 2
    assert "is not a cluster address" in capsys.readouterr().err
    assert main(["cluster", "start", "--listen", "0.0.0.0:8786"]) == 2
    assert "--certs DIR" in capsys.readouterr().err
    assert main(["cluster", "stop"]) == 2
    assert "no cluster was started here" in capsys.readouterr().err
    assert main(["cluster", "certs", str(tmp_path / "certs")]) == 0
    assert sorted(p.name for p in (tmp_path / "certs").iterdir()) == sorted(
        f"{who}{part}.pem" for who in ("ca", "server", "client") for part in ("", "-key"))
    assert oct((tmp_path / "certs" / "client-key.pem").stat().st_mode & 0o777) == "0o600"
    assert main(["cluster", "certs", str(tmp_path / "certs")]) == 2  # never overwrites keys
    assert "already holds certificates" in capsys.readouterr().err


@pytest.mark.slow
def test_cluster_start_status_stop_on_a_host_without_a_gpu(tmp_path, capsys, monkeypatch):
    import socket

    from kernels.cluster import local
    from raytracer_app.cli import main

    if not local.gpu_plan("all") == []:
        pytest.skip("this host has a GPU: start would take its GPUs")
    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path / "cache"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["cluster", "start", "--listen", f"127.0.0.1:{port}"]) == 0, capsys.readouterr().err
    try:
        state = local.read_state()
        host = socket.gethostname().split(".")[0]
        assert [p["name"] for p in state["processes"]] == ["scheduler", f"{host}-cpu0", f"{host}-cpu1"]
        assert main(["cluster", "start", "--listen", f"127.0.0.1:{port}"]) == 2  # one at a time
        capsys.readouterr()
        assert main(["cluster", "status"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].endswith("2 worker(s)") and all("cpu and sim" in line for line in lines[1:])
    finally:
        assert main(["cluster", "stop"]) == 0
    assert not any(local._alive(p) for p in state["processes"]) and local.read_state() is None


@pytest.mark.slow
def test_the_windows_run_on_control_sends_a_benchmark_to_the_cluster(client, qtbot, tmp_path, cpu_backend):
    pytest.importorskip("pytestqt")
    from PyQt6.QtCore import QSettings

    from raytracer_app.gui.common.run_on import CLUSTER, HERE
    from raytracer_app.gui.shell.main_window import MainWindow

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    w = MainWindow(cpu_backend)
    w.show()
    try:
        control = w.run_on
        assert control.isVisible() and control.state.text() == "this machine"
        control.address.setText("not an address")
        control.choice.setCurrentText(CLUSTER)  # connecting happens off the GUI thread; the state says why not
        qtbot.waitUntil(lambda: control.state.text().startswith("not connected: --cluster"), timeout=20_000)
        control.address.setText(client.scheduler.address)
        control.address.returnPressed.emit()
        qtbot.waitUntil(lambda: "2 worker(s)" in control.state.text(), timeout=20_000)
        assert control.model.remote
        panel = w.panels["Reduction"]
        panel.set_variants(["numpy"])
        panel.show_peak.setChecked(False)
        panel.n.setValue(4096)
        panel.repeats.setValue(1)
        assert panel.run()
        qtbot.waitUntil(lambda: not panel.busy() and len(panel.rows) == 1, timeout=30_000)
        row = panel.rows[0][0]
        assert row.verified == "yes" and row.worker in ("0", "1")  # the row ran there
        w.request_render(force=True)  # the Render view's frames are drawn there too, the transfer counted

        def drawn_there():
            frame = w.last.get("spheres", (None, None))[0]
            return frame is not None and frame.meta.get("drawn on") in ("0", "1")

        qtbot.waitUntil(drawn_there, timeout=60_000)
        assert "drawn on" in w.status["backend"].text()
        control.choice.setCurrentText(HERE)
        assert control.state.text() == "this machine" and not control.model.remote
    finally:
        panel = w.panels["Reduction"]
        panel.stop()
        w.close()
        qtbot.waitUntil(lambda: w.render_thread.isFinished(), timeout=30_000)


@pytest.mark.slow
def test_a_worker_that_does_not_stop_is_restarted_and_the_run_reported_stopped(client, monkeypatch):
    from kernels.cluster import remote

    monkeypatch.setattr(remote, "RESTART_AFTER_S", 0.3)  # 10 s in use; a row here runs for seconds
    request = BenchRequest("reduction", Backend("sim"), sizes=(1 << 16,), variants="sequential", repeats=5)
    import time

    started = time.monotonic()  # Stop once the row runs: it is checked only between rows
    there = remote.run_bench(client, jobs.bench_job(request), stop=lambda: time.monotonic() - started > 0.5)
    assert there.stopped and there.rows == []
    assert len(there.messages) == 1 and there.messages[0].endswith("and were restarted")
    client.wait_for_workers(2, timeout=60)


class _FakeClient:
    """What targets() asks of a client: the scheduler's workers with their resources."""

    def __init__(self, resources):
        self.resources = resources

    def scheduler_info(self, **_):
        return {"workers": {f"tcp://h:{i}": {"name": f"h-gpu{i}", "resources": r}
                            for i, r in enumerate(self.resources)}}


def test_on_picks_the_workers_of_one_gpu_model_or_each_model():
    from kernels.cluster import remote

    cuda = Backend("cuda")
    gpus = _FakeClient([{"GPU": 1, "H100": 1}, {"GPU": 1, "H200": 1}, {"GPU": 1, "H200": 1}])
    assert remote.targets(gpus, None, cuda) == {"H200": {"H200": 1}}  # the model with the most GPUs
    assert remote.targets(gpus, "any-gpu", cuda) == {"H200": {"H200": 1}}
    assert remote.targets(gpus, "each", cuda) == {"H100": {"H100": 1}, "H200": {"H200": 1}}
    assert remote.targets(gpus, "H100", cuda) == {"H100": {"H100": 1}}
    assert remote.targets(gpus, None, CPU) == {"cpu": None}  # cpu and sim runs take any worker
    with pytest.raises(InputError, match="--on A100: no worker of the cluster has that GPU"):
        remote.targets(gpus, "A100", cuda)
    with pytest.raises(InputError, match="no GPU worker"):
        remote.targets(_FakeClient([{}, {}]), "each", cuda)


@pytest.mark.gpu
@pytest.mark.slow
def test_a_gpu_hosts_cluster_splits_a_sweep_over_its_gpus_and_each_model_gets_a_file(tmp_path, capsys,
                                                                                    monkeypatch):
    import socket

    from kernels.cluster import local
    from kernels.harness.results_read import read_result
    from raytracer_app.cli import main

    monkeypatch.setenv("RAYTRACER_CACHE_DIR", str(tmp_path / "cache"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    assert main(["cluster", "start", "--listen", address]) == 0, capsys.readouterr().err
    try:
        state = local.read_state()
        host = socket.gethostname().split(".")[0]
        names = {f"{host}-gpu{g['index']}" for g in state["gpus"]}
        assert names and {p["name"] for p in state["processes"][1:]} == names  # a worker per GPU
        out = tmp_path / "r.json"
        sizes = (1 << 20, 1 << 22)
        assert main(["bench", "reduction", "--backend", "cuda", "--sizes", ",".join(map(str, sizes)), "--variants",
                     "sequential,best", "--repeats", "3", "--cluster", address, "--json", str(out)]) == 0
        result = read_result(out, "--json")
        assert [(r.variant, r.n) for r in result.rows] == [(v, n) for n in sizes for v in ("sequential", "best")]
        assert all(r.verified == "yes" and r.worker in names for r in result.rows)
        assert main(["bench", "reduction", "--backend", "cuda", "--n", str(1 << 20), "--variants", "best",
                     "--repeats", "2", "--cluster", address, "--on", "each", "--json", str(out)]) == 0
        for model in {g["model"] for g in state["gpus"]}:
            each = read_result(tmp_path / f"r-{model}.json", "--json")
            assert each.rows[0].verified == "yes" and model in each.device["name"].replace(" ", "")
    finally:
        assert main(["cluster", "stop"]) == 0


def test_a_request_for_a_clusters_gpu_is_checked_here_against_what_its_worker_reported():
    from kernels.backend.devices import DeviceLimits
    from kernels.cluster import remote

    gpu = remote.RemoteGpu("cuda", 0, "", "NVIDIA H200", DeviceLimits(name="NVIDIA H200", sm_count=132),
                           64 << 20)  # 64 MiB free on the worker's GPU
    request = BenchRequest("reduction", gpu, sizes=(1 << 20,), variants="best", repeats=20)
    assert request.repeats == 20 and request.to_json()["backend"] == {"kind": "cuda", "device": 0}
    with pytest.raises(InputError, match="is free on NVIDIA H200"):  # this host has no such GPU; the worker's
        BenchRequest("reduction", gpu, sizes=(1 << 28,), variants="best")
    with pytest.raises(RuntimeError, match="runs nothing in this process"):
        gpu.activate()


def test_a_lessons_steps_go_to_its_place_and_no_simulator_starts_here(monkeypatch):
    from kernels.backend import child
    from kernels.harness.rows import Row
    from kernels.lessons import run as lesson_run
    from kernels.lessons.reduction_ladder import REDUCTION

    class Place:  # what kernels.cluster.remote.LessonPlace is to run_lesson
        def __init__(self):
            self.requests = []

        def run(self, request, stop):
            self.requests.append(request)
            (variant,) = request.variants
            return [Row(variant, "sum", "int32", request.sizes[0], "sim", "CUDA simulator", verified="yes")]

        def copy_peak(self, backend):
            raise AssertionError("a lesson verified in the simulator measures no copy peak")

    monkeypatch.setattr(child, "SimulatorProcess", lambda *a, **k: pytest.fail("a simulator started here"))
    monkeypatch.setattr(lesson_run.evidence, "collect", lambda target, wanted, arch, cache=None: ({}, ""))
    place = Place()
    out = lesson_run.run_lesson(REDUCTION, CPU, arch="sm_90", place=place)
    assert [r.variants[0] for r in place.requests] == [s.variant for s in REDUCTION.steps]
    assert all(r.backend.is_simulator for r in place.requests) and not out.measured
    assert [r.verified for r in out.results] == ["yes"] * len(REDUCTION.steps)


@pytest.mark.slow
def test_measured_access_and_lines_on_a_cluster_need_its_gpu(client, capsys):
    from raytracer_app.cli import main

    address = client.scheduler.address
    assert main(["access", "reduction", "sequential", "--cluster", address]) == 2
    assert "it applies with --measured" in capsys.readouterr().err
    assert main(["inspect", "reduction", "best", "--cluster", address]) == 2
    assert "it applies with --lines --measured" in capsys.readouterr().err
    assert main(["access", "reduction", "sequential", "--measured", "--cluster", address]) == 2
    assert "on a GPU, and this run has none" in capsys.readouterr().err  # its workers run cpu and sim
    assert main(["inspect", "reduction", "best", "--lines", "--measured", "--cluster", address]) == 2
    assert "the cluster's workers have none" in capsys.readouterr().err


def test_a_rows_clocks_read_back_print_as_a_timed_rows_do():
    """A GPU worker's row reaches the client through the result reader: its NVML clocks come back as the
    record a timed row holds (a dict there made the table's line fail on a GPU host)."""
    from kernels.counters.clocks import Clocks, Snapshot
    from kernels.harness.results import row_dict
    from kernels.harness.results_read import row_from_dict
    from kernels.harness.rows import Row
    from kernels.harness.table import table_line
    from kernels.timing import Timing

    throttled = Snapshot(1980, 3201, 130.0, 0x4)  # power cap
    row = Row("best", "sum", "int32", 1024, "cuda", "NVIDIA H200", timing=Timing((0.01, 0.02), "cuda-events"),
              verified="yes", clocks=Clocks(Snapshot(1980, 3201, 120.0, 0), throttled))
    back = row_from_dict(row_dict(row))
    assert back.clocks == row.clocks
    assert "[THROTTLED: power cap]" in table_line(back)


@pytest.mark.parametrize("maker", ["openssl", "cryptography"])
def test_certificates_made_either_way_pass_a_mutual_tls_handshake_of_pythons_ssl(tmp_path, maker):
    """Dask's TLS is the stdlib's ssl: the server and client certificates, by the cryptography package or by
    the openssl command (a laptop without the package), each verified against the CA, both ways."""
    import shutil
    import socket
    import ssl
    import threading

    if maker == "openssl" and shutil.which("openssl") is None:
        pytest.skip("no openssl command here")
    if maker == "cryptography":
        pytest.importorskip("cryptography")
    from kernels.cluster import security

    security.make_certificates(tmp_path, maker=maker)
    assert oct((tmp_path / "server-key.pem").stat().st_mode & 0o777) == "0o600"
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tmp_path / "server.pem", tmp_path / "server-key.pem")
    server.load_verify_locations(tmp_path / "ca.pem")
    server.verify_mode = ssl.CERT_REQUIRED
    client = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))  # checks the name: localhost
    client.load_cert_chain(tmp_path / "client.pem", tmp_path / "client-key.pem")
    seen = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        def serve():
            conn, _ = listener.accept()
            with server.wrap_socket(conn, server_side=True) as tls:
                seen.append(tls.getpeercert()["subject"])
                tls.sendall(b"ok")

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        with socket.create_connection(listener.getsockname(), timeout=10) as raw:
            with client.wrap_socket(raw, server_hostname="localhost") as tls:
                assert tls.recv(2) == b"ok"
        thread.join(10)
    assert seen == [((("commonName", "raytracer-app cluster client"),),)]


def test_cluster_certs_without_cryptography_or_openssl_says_what_to_install_in_one_line(tmp_path, capsys,
                                                                                     monkeypatch):
    from kernels.cluster import security
    from raytracer_app.cli import main

    monkeypatch.setattr(security, "_has_cryptography", lambda: False)
    monkeypatch.setattr(security.shutil, "which", lambda name: None)
    assert main(["cluster", "certs", str(tmp_path / "certs")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install -e '.[cluster-certs]'" in err[0]
    assert not (tmp_path / "certs").exists()
