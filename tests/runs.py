"""Running the harness's engine in tests on problems a test builds itself: ``plan`` stands for the request a
run reads (kernels.harness.bench.run takes a BenchRequest or any object with these fields); tests of the
request itself build real BenchRequests."""

from types import SimpleNamespace

from kernels.launch import Launch
from kernels.timing import Policy


def plan(backend, repeats: int, launches=(Launch(),), rounds: int = 1, unit=None, cold: bool = False,
         policy: Policy | None = None):
    return SimpleNamespace(backend=backend, launches=tuple(launches), repeats=repeats, rounds=rounds, unit=unit,
                           cold=cold, policy=policy or Policy())
