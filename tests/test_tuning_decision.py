"""best's tuning chooses the same way twice (issue 52): the sweep's leaders are timed again alternated and
:func:`kernels.launch.tuning.decide` picks among them, by a fixed preference where the margin is within the
noise. Synthetic timings only (no timing of real code); the hash table's rule for linear probing too."""

import json

import pytest

from kernels.launch import tuning


def test_a_clear_leader_is_chosen_with_its_margin_and_noise():
    times = {"A": [1.00, 1.01, 0.99, 1.00], "B": [1.20, 1.21, 1.19, 1.20], "C": [1.5, 1.5]}
    chosen, median, margin, noise, by_preference = tuning.decide(times, ["C", "B", "A"])
    assert (chosen, median, by_preference) == ("A", 1.0, False)
    assert margin == pytest.approx(0.2) and noise == pytest.approx(0.02, abs=1e-9)


def test_a_margin_within_the_noise_falls_to_the_preference_whichever_the_noise_put_ahead():
    # two runs of one machine: the same two layouts 1% apart, with 3% noise, ordered differently each time
    first = {"bucket 4": [1.00, 1.03, 1.01, 1.02], "bucket 8": [1.02, 1.00, 1.03, 1.01]}
    second = {"bucket 4": [1.02, 1.00, 1.03, 1.015], "bucket 8": [1.00, 1.03, 1.005, 1.01]}
    preference = ["bucket 4", "bucket 8"]
    picks = [tuning.decide(t, preference) for t in (first, second)]
    assert [p[0] for p in picks] == ["bucket 4", "bucket 4"] and all(p[4] for p in picks)
    assert all(p[2] <= p[3] for p in picks)  # margin within the noise
    # the preference decides, not the order of the dict
    assert tuning.decide(dict(reversed(list(first.items()))), preference)[0] == "bucket 4"


def test_only_candidates_within_the_noise_tie():
    times = {"A": [1.00, 1.02], "B": [1.01, 1.00], "C": [1.30, 1.31]}
    assert tuning.decide(times, ["C", "B", "A"])[0] == "B"  # C is preferred but clearly slower


def test_missing_timings_are_left_out():
    assert tuning.decide({"A": [], "B": []}, ["A", "B"]) is None
    chosen, median, margin, noise, by_preference = tuning.decide({"A": [], "B": [2.0, 2.0]}, ["A", "B"])
    assert (chosen, median, margin, noise, by_preference) == ("B", 2.0, 0.0, 0.0, False)


def test_confirm_alternates_the_candidates():
    order = []
    times = tuning.confirm(["A", "B", "C"], lambda c: order.append(c) or (None if c == "C" else 1.0), rounds=3)
    assert order == ["A", "B", "C"] * 3
    assert times == {"A": [1.0] * 3, "B": [1.0] * 3, "C": []}


def test_a_confirmed_sweep_times_the_leaders_again_and_notes_the_margin():
    calls = []
    base = {(4, 128): 1.00, (4, 256): 0.99, (8, 128): 1.01, (8, 256): 2.0}

    def measure(items, block):
        calls.append((items, block))
        return base[(items, block)]

    choice = tuning.sweep(measure, items=(4, 8), blocks=(128, 256), confirm_top=3)
    assert len(calls) == 4 + 3 * tuning.CONFIRM_ROUNDS
    assert set(calls[4:]) == {(4, 128), (4, 256), (8, 128)}  # the three leaders, not the slowest
    # steady timings: no noise, so the fastest wins by its margin
    assert (choice.items, choice.block, choice.by_preference) == (4, 256, False)
    assert choice.margin == pytest.approx(1.00 / 0.99 - 1)
    assert "ahead by 1.0%, noise 0.0%" in choice.note("tuned now")


def test_a_noisy_confirmed_sweep_chooses_alike_twice():
    # the leaders 0.5% apart with timings that wobble by 4%: whichever the first pass ranks first, the
    # choice is the preferred one (the sweep's order: fewer items, then the smaller block)
    def noisy(seed):
        state = [seed]

        def measure(items, block):
            state[0] = (state[0] * 1103515245 + 12345) % 2**31
            wobble = 1 + 0.04 * (state[0] / 2**31 - 0.5)
            return {(4, 256): 1.005, (8, 128): 1.0, (8, 256): 1.002}.get((items, block), 3.0) * wobble

        return measure

    picks = {(c.items, c.block) for c in (tuning.sweep(noisy(s), items=(4, 8), blocks=(128, 256), confirm_top=3)
                                          for s in range(6))}
    assert picks == {(4, 256)}


def test_a_confirmed_choice_round_trips_through_the_cache(tmp_path):
    choice = tuning.Choice(items=8, block=256, median_ms=1.0, configurations=16, margin=0.01, noise=0.02,
                           by_preference=True)
    path = tmp_path / tuning.CACHE_FILE
    tuning.store("k", choice, path)
    assert tuning.validate(json.loads(path.read_text())["k"], (4, 32)) == choice
    with pytest.raises(ValueError):
        tuning.validate({**json.loads(path.read_text())["k"], "noise": -1}, (4, 32))


def test_best_takes_linear_probing_only_beyond_the_noise():
    from kernels.hashtable.open_gpu import prefers_linear

    buckets = tuning.Choice(items=4, block=128, median_ms=1.00, configurations=16, margin=0.01, noise=0.02)
    assert not prefers_linear(buckets, tuning.Choice(4, 256, 0.99, 4, noise=0.01))  # 1% ahead: within the noise
    assert prefers_linear(buckets, tuning.Choice(4, 256, 0.95, 4, noise=0.01))
    assert not prefers_linear(tuning.Choice(4, 128, 1.0, 16), tuning.Choice(4, 256, 1.0, 4))  # a tie keeps buckets
