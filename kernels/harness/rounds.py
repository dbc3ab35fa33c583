"""Interleaved repeats (``bench --rounds R``): a row's repeats spread over R rounds through the rows of one
problem, each round in its own shuffled order, as Google Benchmark's random interleaving does.

Why: on a GPU the median of a kernel of a few microseconds moves by 1-2% from one moment to the next (the
GPU's state, not the input's placement; docs/results.md). Repeats taken back to back all see one such
moment, so a run's samples cannot show how much the next run will differ. Spread over rounds, a row's
samples see many moments: its median averages over them and its spread shows them, which is what
``compare`` needs to judge a difference between runs."""

from __future__ import annotations

import random

from kernels.errors import InputError

MAX_ROUNDS = 1000


def check_rounds(rounds: int, repeats: int, tolerance=None, names=("--rounds", "--repeats")) -> int:
    """``rounds`` when it is valid with these repeats and this stopping rule (InputError naming the clash
    with ``names``: the CLI's options, or the window's fields)."""
    if not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= MAX_ROUNDS:
        raise InputError(f"{names[0]} {rounds!r} must be a whole number from 1 to {MAX_ROUNDS}")
    if rounds > repeats:
        raise InputError(f"{names[0]} {rounds} is more than {names[1]} {repeats}: every round takes at least one "
                         f"repeat")
    if rounds > 1 and tolerance is not None:
        raise InputError("--rounds takes a fixed number of repeats; give it without --tolerance")
    return rounds


def split_repeats(repeats: int, rounds: int) -> list[int]:
    """How many of ``repeats`` each round takes: as even as possible, the earlier rounds one more."""
    base, extra = divmod(repeats, rounds)
    return [base + (1 if i < extra else 0) for i in range(rounds)]


def round_order(count: int, round_index: int) -> list[int]:
    """The order of ``count`` rows in one round: shuffled, the same for the same round in every run."""
    order = list(range(count))
    random.Random(round_index).shuffle(order)
    return order

