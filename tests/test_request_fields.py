"""A request's field declared once (kernels/service/fields.py): the CLI's `bench` options, the benchmark panel's
run form with its save and load, the run's header and the one validator of a request that arrives as data all
read BenchRequest's declarations. The proof is `cooldown`, declared in the request and nowhere else: it reaches
the command line, the panel, the result file and the table's header, a `--processes` child, and the run loop.
Each wrong shape of a request read as JSON is one line naming the field, exit status 2."""

from __future__ import annotations

import json

import pytest

from kernels.backend import Backend
from kernels.errors import InputError
from kernels.service.bench_request import BenchRequest, check_json
from kernels.service.fields import Setting, settings_of

CPU = Backend("cpu")
SMALL = dict(sizes=(2048,), variants=("numpy",), repeats=2, peak=False)


def a_doc(**changes) -> dict:
    return {**BenchRequest("reduction", CPU, **SMALL).to_json(), **changes}


# --- the declarations -------------------------------------------------------------------------------------


def test_every_field_but_the_callers_words_is_declared():
    from dataclasses import fields

    assert {f.name for f in fields(BenchRequest)} - set(settings_of(BenchRequest)) == {"labels"}
    assert all(isinstance(s, Setting) and s.label for s in settings_of(BenchRequest).values())


@pytest.mark.parametrize("kind, value, ok", [
    (int, 3, True), (int, True, False), (int, 3.0, False), (float, 3, True), (float, True, False),
    (float, float("nan"), False), (bool, True, True), (bool, 1, False), (str, "x", True), (str, 1, False)])
def test_a_type_is_checked_as_declared_bool_is_not_a_number(kind, value, ok):
    declared = Setting(kind, "x")
    if ok:
        assert declared.check(value, "x") == value
    else:
        with pytest.raises(InputError, match="^x "):
            declared.check(value, "x")


def test_bounds_and_none_are_checked_as_declared():
    assert Setting(int, "n", minimum=1, maximum=3).check(3, "--n") == 3
    with pytest.raises(InputError, match="--n 4 must be a whole number from 1 to 3"):
        Setting(int, "n", minimum=1, maximum=3).check(4, "--n")
    with pytest.raises(InputError, match="--s 0 must be a positive number"):
        Setting(float, "s", above=0).check(0, "--s")
    assert Setting(int, "n", optional=True).check(None, "--n") is None
    with pytest.raises(InputError, match="--n is missing"):
        Setting(int, "n").check(None, "--n")


# --- the proof: cooldown, declared once, reaches every place ----------------------------------------------


def test_the_option_is_made_from_the_declaration(capsys):
    from raytracer_app.cli import build_parser
    from raytracer_app.cli.bench import bench_request

    args = build_parser().parse_args(["bench", "reduction", "--backend", "cpu", "--cooldown", "0.25",
                                      "--variants", "numpy", "--n", "2048"])
    assert args.cooldown == 0.25 and bench_request(args, CPU).cooldown == 0.25
    args = build_parser().parse_args(["bench", "histogram", "--backend", "cpu"])
    assert args.cooldown == 0.0  # the field's default
    with pytest.raises(InputError, match="--cooldown 700 must be a number from 0 to 600"):
        bench_request(build_parser().parse_args(["bench", "reduction", "--cooldown", "700"]), CPU)
    with pytest.raises(InputError, match="--cooldown 'soon' is not a number"):
        build_parser().parse_args(["bench", "reduction", "--cooldown", "soon"])


def test_options_follow_where_a_field_applies():
    from raytracer_app.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["bench", "reduction", "--retune"]).retune is True
    with pytest.raises(InputError, match="--retune does not apply"):
        parser.parse_args(["bench", "histogram", "--retune"])
    with pytest.raises(InputError, match="--variant-timeout does not apply"):
        parser.parse_args(["bench", "hashtable", "--variant-timeout", "3"])


def test_the_run_loop_rests_between_measurements(monkeypatch):
    from kernels.harness import bench
    from kernels.service.bench import run_bench

    rests = []
    monkeypatch.setattr(bench, "rest", lambda seconds, should_stop=None: rests.append(seconds))
    run = run_bench(BenchRequest("reduction", CPU, sizes=(2048, 4096), variants=("numpy", "cpu-parallel"),
                                 repeats=2, peak=False, cooldown=0.5))
    assert len(run.rows) == 4 and rests == [0.5] * 3  # before every measurement but the first
    rests.clear()
    run_bench(BenchRequest("reduction", CPU, **SMALL))
    assert rests == []


def test_a_rest_ends_at_stop():
    from kernels.harness.bench import rest

    calls = []
    rest(30.0, lambda: calls.append(1) or len(calls) > 2)  # would take 30 s; Stop is seen within a slice
    assert len(calls) == 3


def test_the_result_file_and_the_tables_header_carry_it(tmp_path, capsys):
    from raytracer_app.cli import main

    out = tmp_path / "r.json"
    code = main(["bench", "reduction", "--backend", "cpu", "--n", "2048", "--variants", "numpy", "--repeats", "2",
                 "--cooldown", "0.01", "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "run: repeats 2, rounds 1, warm-up 1, processes 1, cooldown 0.01 s" in text.splitlines()
    doc = json.loads(out.read_text())
    assert doc["request"]["cooldown"] == 0.01
    assert BenchRequest.from_json(doc["request"]).cooldown == 0.01


def test_a_processes_child_reads_it(tmp_path, monkeypatch):
    """The child's own entry (`python -m kernels.service.bench REQUEST RESULT`), called here: the request as the
    parent writes it, and the result file it writes back."""
    from kernels.harness import bench
    from kernels.service.bench import main

    rests = []
    monkeypatch.setattr(bench, "rest", lambda seconds, should_stop=None: rests.append(seconds))
    request = BenchRequest("reduction", CPU, sizes=(2048,), variants=("numpy", "cpu-parallel"), repeats=2,
                           peak=False, cooldown=0.75)
    path, result = tmp_path / "request.json", tmp_path / "result.json"
    path.write_text(json.dumps(request.with_changes(processes=1).to_json()))
    assert main([str(path), str(result)]) == 0
    assert rests == [0.75] and json.loads(result.read_text())["request"]["cooldown"] == 0.75


def test_the_panel_makes_saves_and_loads_it(qtbot, tmp_path):
    from PyQt6.QtCore import QObject, QSettings, pyqtSignal

    from kernels.registry import by_name
    from raytracer_app.gui.benchmarks.panel import BenchPanel
    from raytracer_app.gui.shell.timing_log import TimingLog

    class Model(QObject):  # what a panel reads of the window's model
        changed = pyqtSignal(str)

        def __init__(self):
            super().__init__()
            self.backend, self.limits, self.device_label = CPU, CPU.limits, "CPU"

    panel = BenchPanel(by_name("reduction"), Model(), TimingLog())
    qtbot.addWidget(panel)
    try:
        cooldown = panel.run_controls["cooldown"]
        assert panel.cooldown is cooldown and cooldown.toolTip() == settings_of(BenchRequest)["cooldown"].help
        cooldown.setValue(1.5)
        assert panel.request().cooldown == 1.5
        settings = QSettings(str(tmp_path / "panel.ini"), QSettings.Format.IniFormat)
        panel.save(settings)
        cooldown.setValue(0.0)
        panel.load(settings)
        assert cooldown.value() == 1.5
        settings.setValue("bench/reduction/cooldown", "-3")  # out of bounds in the file: the default stays
        panel.load(settings)
        assert cooldown.value() == 1.5
        cooldown.setValue(2.0)
        panel.repeats.setValue(3)
        panel.rounds.setValue(4)
        with pytest.raises(InputError, match="Rounds 4 is more than Repeats 3"):  # the panel's own words
            panel.request()
    finally:
        panel.shutdown()


# --- one validator for a request that arrives as data -----------------------------------------------------


@pytest.mark.parametrize("changes, words", [
    (dict(backend="cpu"), "a bench request: backend must be a JSON object"),
    (dict(backend={"kind": "cpu", "device": "0"}), "a bench request: backend: device \"0\" must be a whole number"),
    (dict(backend={"kind": "cpu", "gpu": 0}), "a bench request: backend has unknown field gpu"),
    (dict(repeats=True), "a bench request: repeats true must be a whole number"),
    (dict(rounds=2.0), "a bench request: rounds 2.0 must be a whole number"),
    (dict(cold="yes"), "a bench request: cold \"yes\" must be true or false"),
    (dict(cooldown=-1), "a bench request: cooldown -1 must be a number from 0 to 600"),
    (dict(warmup=0), "a bench request: warmup 0 must be a whole number from 1 to 1000"),
    (dict(processes=1000), "a bench request: processes 1000 must be a whole number from 1 to 100"),
    (dict(tolerance=2), "a bench request: tolerance 2 must be a fraction below 1"),
    (dict(sizes=[2048, "4096"]), "a bench request: sizes \"4096\" must be a whole number"),
    (dict(sizes=[0]), "a bench request: sizes 0 must be a whole number of at least 1"),
    (dict(variants="numpy"), "a bench request: variants \"numpy\" must be a list of texts"),
    (dict(options=["op", "sum"]), "a bench request: options must be an object"),
    (dict(options={"op": {"name": "sum"}}), "a bench request: options: op must be a value or a list of values"),
    (dict(launches={"block": 64}), "a bench request: launches must be a list of objects"),
    (dict(launches=[{"blocks": 64}]), "a bench request: launches[0] has unknown field blocks"),
    (dict(launches=[{"block": True}]), "a bench request: launches[0]: block true must be a whole number"),
    (dict(launches=[{"block": [8, 8, 8, 8]}]), "a bench request: launches[0]: block must be a whole number or a "
                                               "list of 1 to 3"),
    (dict(surprise=1), "a bench request has unknown field surprise"),
])
def test_a_request_of_the_wrong_shape_is_one_line_naming_the_field(changes, words):
    with pytest.raises(InputError) as info:
        BenchRequest.from_json(a_doc(**changes))
    assert str(info.value).startswith(words) and "\n" not in str(info.value)


def test_a_good_request_passes_the_validator_unchanged():
    doc = a_doc(cooldown=0.5, launches=[{"block": [16, 16], "grid": None, "grid_sm": 2, "items_per_thread": None}])
    assert check_json(json.loads(json.dumps(doc)))["cooldown"] == 0.5
    with pytest.raises(InputError, match="a bench request must be a JSON object"):
        check_json(["reduction"])


@pytest.mark.parametrize("changes, field", [(dict(repeats=True), "repeats"), (dict(backend="cpu"), "backend"),
                                            (dict(launches=[{"blok": 1}]), "blok")])
def test_a_processes_child_refuses_a_wrong_request_with_exit_2(tmp_path, capsys, changes, field):
    from kernels.service.bench import main

    path = tmp_path / "request.json"
    path.write_text(json.dumps(a_doc(**changes)))
    assert main([str(path), str(tmp_path / "result.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("raytracer-app: error: a bench request") and field in err
    assert not (tmp_path / "result.json").exists()


def test_a_result_files_request_header_is_validated(tmp_path, capsys):
    from kernels.harness.results import make_result, to_json
    from raytracer_app.cli import main

    good = make_result(BenchRequest("reduction", CPU, **SMALL), [], None, ["raytracer-app"])
    doc = json.loads(to_json(good))
    doc["request"]["repeats"] = True
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    fine = tmp_path / "good.json"
    fine.write_text(to_json(good))
    assert main(["compare", str(fine), str(path)]) == 2
    err = capsys.readouterr().err
    assert "NEW" in err and "bad.json" in err and "repeats true must be a whole number" in err


@pytest.mark.slow  # starts two interpreters
def test_processes_children_run_it_end_to_end(tmp_path, capsys):
    from raytracer_app.cli import main

    out = tmp_path / "r.json"
    code = main(["bench", "reduction", "--backend", "cpu", "--n", "2048", "--variants", "numpy", "--repeats", "2",
                 "--processes", "2", "--cooldown", "0.01", "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["request"]["cooldown"] == 0.01 and doc["rows"][0]["sample_processes"] == [1, 1]
