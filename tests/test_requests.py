"""The one door: a BenchRequest checks every bound when it is made, names a refused field in its caller's words,
round-trips through JSON and runs through the service; a RenderRequest decides a frame's size, block, memory and
sphere count in one place. Results are checked against numpy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kernels.backend import Backend
from kernels.errors import InputError
from kernels.launch import Launch
from kernels.service.bench import run_bench
from kernels.service.bench_request import BenchRequest

CPU = Backend("cpu")


def test_a_request_settles_what_was_left_loose():
    r = BenchRequest("reduction", CPU)
    assert r.repeats == CPU.caps.default_repeats and r.sizes == (r.spec.size.default["cpu"],)
    assert dict(r.options) == {"op": "sum", "dtype": "int32"} and r.variants == ("all",)
    r = BenchRequest("reduction", CPU, sizes=(5000,), options={"op": "dot", "dtype": "float32"}, variants="numpy, best")
    assert r.option_values == {"op": "dot", "dtype": "float32"} and r.variants == ("numpy", "best")
    assert [v.name for v in r.selected(r.spec.variants)] == ["best", "numpy"]  # in the descriptor's order


@pytest.mark.parametrize("fields, words", [
    (dict(sizes=(0,)), "--sizes 0 is out of range"),
    (dict(repeats=0), "--repeats 0 is out of range"),
    (dict(rounds=3, repeats=2), "--rounds 3 is more than --repeats 2"),
    (dict(processes=3, repeats=2), "--processes 3 is more than --repeats 2"),
    (dict(tolerance=1.5), "--tolerance 1.5 must be a fraction below 1"),
    (dict(max_repeats=20), "--max-repeats applies with --tolerance"),
    (dict(cold=True), "--cold flushes a GPU's L2 cache"),
    (dict(options={"op": "max"}), "--op max is not one of"),
    (dict(options={"colour": "red"}), "colour: not an option of reduction"),
    (dict(variants="best,,numpy"), "has an empty name"),
    (dict(variants="fastest"), "unknown variant 'fastest'"),
    (dict(launches=(Launch(block=64),)), "--block 64 applies to CUDA kernels"),
    (dict(seed=-1), "--seed -1 must be a whole number of at least 0"),
    (dict(sizes=(5000,), input="x.npy"), "--input sets the problem size"),
])
def test_bad_fields_are_one_line_naming_the_option(fields, words):
    with pytest.raises(InputError, match=None) as info:
        BenchRequest("reduction", CPU, **fields)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_panel_gets_the_refusal_in_its_own_words():
    labels = {"sizes": "N elements", "repeats": "Repeats", "rounds": "Rounds"}
    with pytest.raises(InputError, match="Rounds 4 is more than Repeats 3"):
        BenchRequest("reduction", CPU, repeats=3, rounds=4, labels=labels)
    with pytest.raises(InputError, match="N elements 0 is out of range"):
        BenchRequest("reduction", CPU, sizes=(0,), labels=labels)


def test_a_run_too_large_for_memory_is_refused_before_anything_is_allocated(monkeypatch):
    from kernels.backend import devices

    monkeypatch.setattr(devices, "available_host_bytes", lambda: 1 << 20)
    with pytest.raises(InputError, match="--sizes 100000000 needs about .* of host memory"):
        BenchRequest("reduction", CPU, sizes=(10**8,))


def test_json_round_trip_keeps_every_field():
    r = BenchRequest("histogram", CPU, sizes=(4096, 8192), options={"pattern": "low-entropy"}, variants=("cpu-numpy",),
                     repeats=4, rounds=2, seed=3, peak=False)
    doc = json.loads(json.dumps(r.to_json()))
    back = BenchRequest.from_json(doc)
    assert back == r and back.to_json() == doc
    with pytest.raises(InputError, match="unknown field surprise"):
        BenchRequest.from_json({**doc, "surprise": 1})
    with pytest.raises(InputError, match="not auto"):
        BenchRequest.from_json({**doc, "backend": {"kind": "auto"}})


def test_a_swept_option_makes_one_problem_per_value(monkeypatch):
    from dataclasses import replace

    from kernels.harness.descriptor import Option
    from kernels.registry import by_name

    spec = by_name("reduction")
    swept = replace(spec, options=tuple(replace(o, sweep=True) if o.name == "dtype" else o for o in spec.options))
    monkeypatch.setattr(BenchRequest, "spec", property(lambda self: swept))
    r = BenchRequest("reduction", CPU, sizes=(1000, 2000), options={"dtype": "int32,float32"}, variants="numpy")
    assert r.option_values["dtype"] == ("int32", "float32") and r.problem_count == 4
    problems = list(r.problems())
    assert [(p.n, p.dtype) for p in problems] == [(1000, "int32"), (1000, "float32"), (2000, "int32"),
                                                  (2000, "float32")]
    with pytest.raises(InputError, match="has an empty value"):
        BenchRequest("reduction", CPU, options={"dtype": "int32,"})
    assert isinstance(swept.options[1], Option)


def test_run_bench_streams_rows_checked_against_numpy():
    from kernels.reduction.problem import make_problem

    events = []
    run = run_bench(BenchRequest("reduction", CPU, sizes=(3000, 5000), variants="numpy,cpu-parallel", repeats=2,
                                 peak=False), lambda kind, value: events.append((kind, value)))
    rows = [v for k, v in events if k == "row"]
    assert rows == run.rows and [(r.variant, r.n) for r in rows] == [("numpy", 3000), ("cpu-parallel", 3000),
                                                                     ("numpy", 5000), ("cpu-parallel", 5000)]
    for r in rows:
        assert r.ok and int(r.result) == int(np.sum(make_problem("sum", "int32", r.n).a, dtype=np.int64))
    assert ("progress", (4, 4)) in events and not run.stopped


def test_stop_keeps_the_rows_that_finished():
    seen = []

    def progress(kind, value):
        if kind == "row":
            seen.append(value)

    run = run_bench(BenchRequest("reduction", CPU, sizes=(2000, 4000), variants="numpy,cpu-parallel", repeats=1,
                                 peak=False), progress, stop=lambda: len(seen) >= 3)
    assert run.stopped and len(run.rows) == 3 and run.rows == seen and all(r.ok for r in run.rows)


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_a_simulator_run_goes_to_the_child_and_stop_keeps_its_finished_rows():
    """Given the window's simulator child, a simulator run goes there (so that Stop can end it at once), its rows
    streaming back one by one; a Stop ends the child and keeps those that came."""
    from kernels.backend.child import SimulatorProcess

    child = SimulatorProcess()
    seen = []
    try:
        request = BenchRequest("reduction", Backend("sim"), sizes=(256,), variants="numpy,block-serial,tree-mask",
                               repeats=1, peak=False)
        run = run_bench(request, lambda kind, value: kind == "row" and seen.append(value),
                        stop=lambda: len(seen) >= 2, simulator=child)
    finally:
        child.end()
    assert run.stopped and [r.variant for r in run.rows] == [r.variant for r in seen][:len(run.rows)]
    assert len(run.rows) >= 2 and all(r.ok for r in run.rows)


# --- renders ---------------------------------------------------------------------------------------------------


def test_a_render_request_decides_the_block_and_the_memory_once():
    from kernels.julia import JuliaParams
    from kernels.spheres.params import SphereParams
    from kernels.spheres.scene import generate_scene
    from kernels.service.requests import RenderRequest

    sim = Backend("sim")
    book = RenderRequest("julia", sim, (32, 32), (16, 16), JuliaParams(launch="book"))
    assert book.block == (1, 1)  # the book's one thread per block, decided here by the kind's launch rule
    frame = RenderRequest("spheres", CPU, (32, 32), params=SphereParams(generate_scene(5), "constant"))
    assert frame.params.memory == "constant" and frame.params.memory_used(CPU) == "host"  # the twin reads host
    assert RenderRequest("julia", CPU, (8, 8)).params == JuliaParams()  # no params: the kind's defaults
    spheres = lambda n: SphereParams(generate_scene(n))  # noqa: E731
    with pytest.raises(InputError, match=r"--size 200x200 is too large for this backend: at most 128x128"):
        RenderRequest("spheres", sim, (200, 200), params=spheres(5))
    with pytest.raises(InputError, match=r"--spheres 65: at most 64 on the simulator"):
        RenderRequest("spheres", sim, (32, 32), params=spheres(65))
    with pytest.raises(InputError, match="--block block 64x64 has 4096 threads"):
        RenderRequest("spheres", sim, (32, 32), (64, 64), spheres(5))
    with pytest.raises(InputError, match="Block block 64x64"):
        RenderRequest("spheres", sim, (32, 32), (64, 64), spheres(5), labels={"block": "Block"})
    with pytest.raises(InputError, match="render kind 'teapot' is not one of spheres, julia"):
        RenderRequest("teapot", sim, (32, 32))
    with pytest.raises(InputError, match="a julia frame needs JuliaParams, not SphereParams"):
        RenderRequest("julia", sim, (32, 32), params=spheres(5))


def test_the_window_settles_a_block_in_one_place_keeping_the_side_the_user_set():
    from kernels.service.requests import settle_block

    sim = Backend("sim")  # at most 1024 threads per block
    assert settle_block((64, 32), sim, keep=0) == (64, 16)  # BX set: BY shrinks to make room
    assert settle_block((32, 64), sim, keep=1) == (16, 64)  # BY set: BX shrinks
    assert settle_block((0, 16), sim) == (1, 16)


def test_warmup_is_one_field_from_the_cli_and_the_panel_to_the_timers(tmp_path, capsys, qtbot):
    from kernels import timing
    from raytracer_app.cli import main

    r = BenchRequest("reduction", CPU, warmup=4)
    assert r.policy.warmup == 4 and BenchRequest.from_json(r.to_json()).warmup == 4
    with timing.measurement(r.policy):
        assert timing.warmups() == 4
    out = tmp_path / "run.json"
    assert main(["bench", "reduction", "--backend", "cpu", "--n", "2000", "--variants", "numpy", "--repeats", "2",
                 "--warmup", "3", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["request"]["warmup"] == 3
    capsys.readouterr()
    assert main(["bench", "reduction", "--backend", "cpu", "--warmup", "0"]) == 2
    assert "--warmup 0 must be at least 1" in capsys.readouterr().err
    with pytest.raises(InputError, match="Warm-up 0 must be a whole number from 1"):
        BenchRequest("reduction", CPU, warmup=0, labels={"warmup": "Warm-up"})
