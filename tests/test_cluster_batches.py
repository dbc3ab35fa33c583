"""Batches split over a cluster's GPU workers (docs/cluster.md): `bench --counters --cluster`'s counters batch by
variant, merged in a local run's order, each record naming its worker, Stop reaching every worker; a lesson's
steps at once, taken in the lesson's order. An in-process cluster of two workers declaring a GPU (GPU=1,
H200=1) stands in for a GPU host: its GPU's facts, Nsight Compute's run (kernels.counters.measure.measure, the
ncu call) and the copy peak are stand-ins; timed rows run on the cpu backend there."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("distributed", reason="the cluster extra is not installed")

from kernels.errors import InputError

CALLS: list = []  # each stand-in ncu run: (variants, sizes, launches' blocks, the worker's name)
SIZES = (1 << 12, 1 << 14)


def fake_measure(request, backend, clock_control="none", should_stop=None, **_):
    from distributed import get_worker

    from kernels.counters.metrics import KernelCounters, Measured

    CALLS.append((list(request["variants"]), list(request["sizes"]),
                  [launch.get("block") for launch in request["launches"]], str(get_worker().name)))
    time.sleep(0.02)  # both workers busy at once
    n = request["sizes"][0]
    return {v: Measured((KernelCounters(v, {"dram_pct": float(n % 97), "duration_ns": 1000.0}, {}),), clock_control)
            for v in request["variants"]}


def measure_until_stopped(request, backend, clock_control="none", should_stop=None, **_):
    from distributed import get_worker

    give_up = time.monotonic() + 20
    while not should_stop() and time.monotonic() < give_up:  # ncu's child runs until Stop ends it
        time.sleep(0.01)
    CALLS.append(("stopped", list(request["variants"]), str(get_worker().name), should_stop()))
    return {}


def gpu_facts() -> dict:
    import dataclasses

    from kernels.backend.devices import DeviceLimits

    return {"name": "NVIDIA H200", "limits": dataclasses.asdict(DeviceLimits(name="NVIDIA H200", sm_count=132)),
            "free": 100 << 30, "arch": "sm_90"}


@pytest.fixture(scope="module")
def gpus():
    """Two in-process workers, each declaring one H200."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      resources={"GPU": 1, "H200": 1}, dashboard_address=":0") as cluster:
        with Client(cluster) as client:
            yield client


@pytest.fixture
def stubbed(monkeypatch):
    from kernels.cluster import worker_side
    from kernels.counters import measure

    monkeypatch.setattr(measure, "measure", fake_measure)
    monkeypatch.setattr(worker_side, "gpu_facts", gpu_facts)
    CALLS.clear()


def _request(client, variants, sizes=SIZES, blocks=None):
    from kernels.cluster import remote
    from kernels.launch import Launch
    from kernels.service.bench_request import BenchRequest

    gpu = remote.remote_gpu(client, {"H200": 1})
    launches = tuple(Launch(b) for b in blocks) if blocks else ()
    return BenchRequest("reduction", gpu, sizes=sizes, variants=",".join(variants), repeats=1,
                        **({"launches": launches} if launches else {}))


def test_a_counters_batch_is_split_by_variant_and_merged_in_a_local_runs_order(gpus, stubbed):
    from kernels.cluster import jobs, remote

    names = ["interleaved-strided", "sequential", "two-kernel", "best"]
    request = _request(gpus, names, blocks=(128, 256))
    arrived = []
    measured, by, out = remote.run_counters(gpus, jobs.counters_job(request, names), lambda kind, value: arrived.append(
        value) if kind == "counters" else None, resources={"H200": 1})
    assert not out.stopped and out.messages == []
    # one ncu run per variant, size and launch; a variant's runs all on one worker, both workers used
    assert sorted((c[0][0], c[1][0], c[2][0]) for c in CALLS) == sorted(
        (v, n, b) for v in names for n in SIZES for b in (128, 256))
    ran = {v: {c[3] for c in CALLS if c[0] == [v]} for v in names}
    assert all(len(w) == 1 for w in ran.values()) and set().union(*ran.values()) == set(out.workers)
    assert len(out.workers) == 2
    # the merge: keyed (size index, launch index) as a local run's measure_all, each record naming its worker
    assert sorted(measured) == [(si, li) for si in range(2) for li in range(2)]
    from kernels.registry import by_name

    local_order = [v.name for v in by_name("reduction").variants if v.name in names]
    for (si, li), got in measured.items():
        assert list(got) == local_order  # the descriptor's order within a size and launch, as a local run's
        assert all(m.kernels[0].values["dram_pct"] == float(SIZES[si] % 97) for m in got.values())
        assert all(by[(si, li, v)] in ran[v] for v in names)
    assert len(arrived) == len(out.rows) == 16 and out.keys == sorted(out.keys)


def test_stop_reaches_every_worker_of_a_counters_batch(gpus, stubbed, monkeypatch):
    from kernels.counters import measure
    from kernels.cluster import jobs, remote

    monkeypatch.setattr(measure, "measure", measure_until_stopped)
    names = ["sequential", "best"]
    request = _request(gpus, names, sizes=(1 << 12,))
    started = time.monotonic()
    _, _, out = remote.run_counters(gpus, jobs.counters_job(request, names), stop=lambda: time.monotonic() - started
                                    > 0.4, resources={"H200": 1})
    assert out.stopped and out.rows == []
    deadline = time.monotonic() + 10
    while len(CALLS) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sorted((c[1][0], c[3]) for c in CALLS) == [("best", True), ("sequential", True)]
    assert len({c[2] for c in CALLS}) == 2  # each worker's ncu heard the Stop


def test_bench_counters_with_cluster_prints_each_variants_counters_and_worker(gpus, stubbed, monkeypatch, capsys,
                                                                              tmp_path):
    """The CLI end to end: the batch first, then the timed rows (run on the cpu backend here: the workers have
    no GPU), each row's counters attached as a local run's are and written to the result file."""
    from kernels.harness.results_read import read_result
    from raytracer_app.cli import main

    _on_the_cpu(monkeypatch)
    out = tmp_path / "r.json"
    code = main(["bench", "reduction", "--backend", "cuda", "--sizes", "4096", "--variants", "sequential,best",
                 "--repeats", "1", "--counters", "--cluster", gpus.scheduler.address, "--json", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "counters: 2 variants measured by ncu (--clock-control none) on 2 worker(s)" in printed.out
    assert sorted(line.split(": ")[1] for line in printed.out.splitlines()
                  if line.startswith("counters read on worker ")) == ["best", "sequential"]
    rows = read_result(out, "--json").rows
    assert [r.variant for r in rows] == ["sequential", "best"]
    assert all(r.counters["kernels"][0]["values"]["dram_pct"] == float(4096 % 97) for r in rows)


def test_bench_counters_on_a_cluster_without_a_gpu_worker_is_one_line(capsys):
    from distributed import LocalCluster

    from kernels.cluster import remote
    from raytracer_app.cli import main

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address=":0") as cluster:
        assert main(["bench", "reduction", "--counters", "--cluster", cluster.scheduler_address]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "has no GPU worker" in err[0]
        assert main(["lesson", "reduction", "--counters", "--cluster", cluster.scheduler_address]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "has no GPU worker" in err[0]
    with pytest.raises(InputError):
        remote.parse_address("no-port")


def _on_the_cpu(monkeypatch):
    """The workers' timed runs on the cpu backend (they have no GPU), without the copy peak."""
    from dataclasses import replace

    from kernels.cluster import worker_side

    real = worker_side._bench
    monkeypatch.setattr(worker_side, "_bench", lambda job, *a: real(
        replace(job, request={**job.request, "backend": {"kind": "cpu", "device": 0}, "peak": False}), *a))


def test_a_lessons_steps_are_taken_in_its_order_whatever_order_they_come_in(monkeypatch):
    from kernels.backend import Backend
    from kernels.harness.rows import Row
    from kernels.lessons import run as lesson_run
    from kernels.lessons.reduction_ladder import REDUCTION

    class Place:  # a cluster's LessonPlace: every step at once, rows back in any order
        def run_steps(self, requests, stop, arrived):
            self.requests = requests
            for k in reversed(range(len(requests) - 1)):  # the last step never comes (stopped)
                (variant,) = requests[k].variants
                arrived(k, Row(variant, "sum", "int32", requests[k].sizes[0], "sim", "CUDA simulator",
                               verified="yes"))

    monkeypatch.setattr(lesson_run.evidence, "collect", lambda target, wanted, arch, cache=None: ({}, ""))
    seen = []
    place = Place()
    out = lesson_run.run_lesson(REDUCTION, Backend("cpu"), arch="sm_90", place=place, on_step=seen.append)
    steps = [s.variant for s in REDUCTION.steps]
    assert [r.variants[0] for r in place.requests] == steps
    assert [r.step.variant for r in out.results] == [r.step.variant for r in seen] == steps[:-1]
    assert [r.index for r in out.results] == list(range(len(steps) - 1))


def step_row(job, worker, topic, stop) -> dict:
    """A worker's stand-in for a step's timed row (a lesson's launches need a CUDA backend)."""
    from kernels.harness.results import row_dict
    from kernels.harness.rows import Row

    time.sleep(0.02)  # both workers busy at once
    r = job.request
    row = Row(r["variants"][0], "sum", "int32", r["sizes"][0], "cuda", "NVIDIA H200", verified="yes",
              worker=str(worker.name))
    return {"piece": job.piece, "rows": [row_dict(row)], "stopped": False, "peak": None, "ceilings": [],
            "bad_files": [], "device": {}, "worker": str(worker.name)}


def test_a_lessons_steps_are_split_over_the_gpu_workers(gpus, stubbed, monkeypatch):
    from kernels.cluster import remote, worker_side
    from kernels.lessons import run as lesson_run
    from kernels.lessons.reduction_ladder import REDUCTION

    monkeypatch.setattr(worker_side, "_bench", step_row)
    monkeypatch.setattr(worker_side, "copy_peak", lambda kind: {"gbps": 4000.0, "how": "a stand-in copy"})
    monkeypatch.setattr(lesson_run.evidence, "collect", lambda target, wanted, arch, cache=None: ({}, ""))
    place = remote.LessonPlace(gpus, {"H200": 1})
    out = lesson_run.run_lesson(REDUCTION, remote.remote_gpu(gpus, {"H200": 1}), sizes=[4096, 8192], repeats=1,
                                arch="sm_90", place=place)
    assert [(r.n, r.step.variant) for r in out.results] == [(n, s.variant) for n in (4096, 8192)
                                                            for s in REDUCTION.steps]
    assert sorted(place.workers) == ["0", "1"]  # both GPUs ran steps
    assert {r.row.worker for r in out.results} == {"0", "1"}


def test_a_lessons_counters_are_read_on_the_gpu_workers_each_ncu_run_a_piece(gpus, stubbed, monkeypatch):
    from kernels.cluster import remote, worker_side
    from kernels.lessons import run as lesson_run
    from kernels.lessons.reduction_ladder import REDUCTION

    monkeypatch.setattr(worker_side, "_bench", step_row)
    monkeypatch.setattr(worker_side, "copy_peak", lambda kind: {"gbps": 4000.0, "how": "a stand-in copy"})
    monkeypatch.setattr(lesson_run.evidence, "collect", lambda target, wanted, arch, cache=None: ({}, ""))
    said = []
    out = lesson_run.run_lesson(REDUCTION, remote.remote_gpu(gpus, {"H200": 1}), sizes=[4096], repeats=1,
                                arch="sm_90", place=remote.LessonPlace(gpus, {"H200": 1}), counters=True,
                                on_counters=said.append)
    steps = [s.variant for s in REDUCTION.steps]
    ran = [c for c in CALLS if c[1] == [4096]]
    assert sorted(v for c in ran for v in c[0]) == sorted(set(steps))  # each variant measured once
    assert {c[3] for c in ran} == {"0", "1"}  # the ncu runs split over both GPUs
    assert all(r.counters is not None and r.counters.kernels[0].name in steps for r in out.results)
    assert [r.counters.kernels[0].name for r in out.results] == steps and len(said) == len(ran)
