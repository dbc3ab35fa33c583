"""Backend choices answer what they are (is_auto, is_gpu, is_simulator, is_host, may_use_gpu), so that only
kernels/backend.py spells the names (tests/test_architecture.py checks the rest of the code)."""

import pytest

from kernels import backend as backends
from kernels.errors import InputError

# name -> (is_auto, is_gpu, is_simulator, is_host, may_use_gpu)
EXPECTED = {
    "auto": (True, False, False, False, True),
    "cuda": (False, True, False, False, True),
    "cpu": (False, False, False, True, False),
    "sim": (False, False, True, False, False),
}


@pytest.mark.parametrize("name", backends.BACKEND_NAMES)
def test_a_choice_answers_what_it_is(name):
    c = backends.choice(name)
    assert c.name == name and c in backends.CHOICES
    assert (c.is_auto, c.is_gpu, c.is_simulator, c.is_host, c.may_use_gpu) == EXPECTED[name]


def test_every_choice_is_one_thing():
    assert set(backends.BACKEND_NAMES) == set(EXPECTED)
    for c in backends.CHOICES:
        assert sum((c.is_auto, c.is_gpu, c.is_simulator, c.is_host)) == 1


@pytest.mark.parametrize("kind", ["cuda", "cpu", "sim"])
def test_a_resolved_backends_kind_is_the_choice_of_the_same_kind(kind):
    b, c = backends.Backend(kind), backends.choice(kind)
    assert (b.is_gpu, b.is_simulator, b.is_host) == (c.is_gpu, c.is_simulator, c.is_host)


@pytest.mark.parametrize("name", ["", "CUDA", "nvidia", "cuda:0", None, 3])
def test_an_unknown_name_is_an_input_error(name):
    with pytest.raises(InputError, match="is not one of auto, cuda, cpu, sim"):
        backends.choice(name)


def test_a_variant_runs_on_the_host_when_it_is_host_code():
    from kernels.registry import ALGORITHMS
    from kernels.harness.variants import KINDS, Variant

    assert [Variant("v", "", kind).runs_on_host for kind in KINDS] == [False, True, False]  # gpu, cpu, peer
    host = [v for algorithm in ALGORITHMS for v in algorithm.variants if v.runs_on_host]
    assert host and all(v.launch is None and v.skip_reason(backends.HOST) is None for v in host)  # no launch; runs on cpu
