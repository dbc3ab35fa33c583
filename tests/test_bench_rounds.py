"""Interleaved repeats (bench --rounds): how repeats are split and ordered, how a row's rounds are joined,
and the bad values the CLI and the window refuse. Fake variants with scripted samples: no timing asserts."""

import pytest

from kernels.errors import InputError
from tests.runs import plan
from kernels.harness import bench
from kernels.harness.rows import FAILED, Outcome, PASSED, Row
from kernels.launch import Launch
from kernels.harness.rounds import MAX_ROUNDS, check_rounds, round_order, split_repeats
from kernels.harness.variants import Variant
from kernels.timing import Timing


def test_repeats_are_split_as_evenly_as_possible():
    assert split_repeats(20, 20) == [1] * 20
    assert split_repeats(20, 1) == [20]
    assert split_repeats(7, 3) == [3, 2, 2]
    assert sum(split_repeats(101, 7)) == 101


def test_each_round_is_a_shuffle_the_same_in_every_run():
    orders = [round_order(6, r) for r in range(8)]
    assert all(sorted(o) == list(range(6)) for o in orders)
    assert orders == [round_order(6, r) for r in range(8)]  # a second run takes the same order
    assert len({tuple(o) for o in orders}) > 1  # not one fixed order


@pytest.mark.parametrize("rounds, repeats, tolerance, message", [
    (0, 5, None, "--rounds 0 must be a whole number from 1"),
    (MAX_ROUNDS + 1, 10**6, None, f"from 1 to {MAX_ROUNDS}"),
    (6, 5, None, "--rounds 6 is more than --repeats 5"),
    (2, 5, 0.01, "without --tolerance"),
])
def test_bad_rounds(rounds, repeats, tolerance, message):
    with pytest.raises(InputError, match=message):
        check_rounds(rounds, repeats, tolerance)
    assert check_rounds(1, 1, 0.01) == 1  # one round is the plain run: the stopping rule applies


class _Problem:
    algorithm, op, dtype, n, bytes_read, expected = "fake", "sum", "int32", 1000, 4000, 7

    def __init__(self, bad_call=None):
        self.bad_call = bad_call

    def verify(self, result):
        return (result == 7, "" if result == 7 else "wrong")


def _variants(log, values, bad=None):
    """Two host variants whose every call appends (name, repeats) to ``log`` and times its samples from
    ``values[name]`` in turn; ``bad``: (name, call index) whose result is wrong."""
    def make(name):
        calls = []

        def run(problem, launch, backend, repeats):
            calls.append(repeats)
            log.append((name, repeats))
            it = values[name]
            result = 8 if bad == (name, len(calls) - 1) else 7
            return Outcome(result, Timing(tuple(next(it) for _ in range(repeats)), "wall"))

        return Variant(name, name, "cpu", run=run)

    return [make("a"), make("b")]


def test_rounds_interleave_the_rows_and_join_their_samples(cpu_backend):
    log = []
    values = {"a": iter(float(x) for x in range(1, 100)), "b": iter(float(x) for x in range(101, 200))}
    rows = bench.run(plan(cpu_backend, 6, [Launch()], rounds=3), _variants(log, values), [_Problem()])
    assert [r for _, r in log] == [2] * 6  # three rounds of two repeats for each row
    assert sorted(log[0:2]) == sorted(log[2:4]) == [("a", 2), ("b", 2)]  # every round visits every row
    a, b = rows
    assert (a.variant, b.variant) == ("a", "b")  # reported in the rows' own order
    assert a.timing.samples_ms == (1.0, 2.0, 3.0, 4.0, 5.0, 6.0) and a.repeats == 6
    assert b.timing.samples_ms == (101.0, 102.0, 103.0, 104.0, 105.0, 106.0)
    # the rates follow the joined median (3.5 ms), not the last round's (5.5 ms)
    assert a.gbps == pytest.approx(4000 / 3.5e-3 / 1e9)
    assert a.ok and b.ok


def test_a_round_that_fails_verification_fails_the_row(cpu_backend):
    log = []
    values = {k: iter([1.0] * 50) for k in "ab"}
    rows = bench.run(plan(cpu_backend, 4, [Launch()], rounds=4), _variants(log, values, bad=("b", 2)), [_Problem()])
    assert rows[0].ok and rows[1].verified == FAILED and "wrong" in rows[1].note


def test_progress_counts_every_round(cpu_backend):
    seen = []
    values = {k: iter([1.0] * 50) for k in "ab"}
    bench.run(plan(cpu_backend, 3, [Launch()], rounds=3), _variants([], values), [_Problem(), _Problem()],
              on_progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (12, 12) and len(seen) == 12  # 2 problems x 2 rows x 3 rounds


def test_one_round_is_the_plain_run(cpu_backend):
    log = []
    values = {k: iter([1.0] * 50) for k in "ab"}
    bench.run(plan(cpu_backend, 5, [Launch()]), _variants(log, values), [_Problem()])
    assert log == [("a", 5), ("b", 5)]


@pytest.mark.slow  # over 1.5 s in a timed run (the quick loop leaves it out)
def test_cli_writes_the_joined_samples_and_the_rounds(tmp_path, capsys):
    import json

    from raytracer_app.cli import main

    out = tmp_path / "run.json"
    code = main(["bench", "reduction", "--backend", "cpu", "--n", "4096", "--variants", "numpy,cpu-parallel",
                 "--repeats", "4", "--rounds", "2", "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    data = json.loads(out.read_text())
    assert data["request"]["rounds"] == 2
    assert [(r["variant"], r["repeats"], len(r["samples_ms"])) for r in data["rows"]] == [
        ("numpy", 4, 4), ("cpu-parallel", 4, 4)]


def test_joined_rounds_keep_their_clocks_from_the_first_start_to_the_last_end():
    from kernels.counters.clocks import Clocks, Snapshot

    def part(samples, before, after):
        return Row(variant="a", op="sum", dtype="int32", n=8, backend="cuda", device="GPU", repeats=len(samples),
                         timing=Timing(tuple(samples), "cuda-events"), verified=PASSED,
                         clocks=Clocks(Snapshot(before, 2619, 100.0, 0), Snapshot(after, 2619, 200.0, 0)))

    row = bench.join_rows([part([1.0, 2.0], 1980, 1975), part([3.0], 1965, 1950)])
    assert row.timing.samples_ms == (1.0, 2.0, 3.0) and row.timing.processes == () and row.repeats == 3
    assert (row.clocks.before.sm_mhz, row.clocks.after.sm_mhz) == (1980, 1950)
