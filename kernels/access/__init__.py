"""What each warp does to memory, line by line, without a GPU: a traced run of a GPU variant in numba's CUDA
simulator, its warp requests rebuilt as the hardware issues them, tallied per line and per kernel under
Nsight Compute's metric names (docs/architecture.md, "The access trace").

The app's side imports no numba:

- :func:`plan` checks what to trace and returns a :class:`TraceJob`; :func:`trace` runs it in the simulator's
  child process and returns an :class:`AccessResult` (Stop ends the child within a second);
- an :class:`AccessResult` holds a :class:`KernelAccess` per kernel, each with its :class:`LineAccess` lines:
  their counts (``metrics``, ``ratios()``), notes on what the trace cannot see, and some of their warp
  requests (:class:`Request`: lanes, addresses, ``sectors()``, ``bank_slots()``, ``wavefronts()``);
- :mod:`.files` writes it as JSON, :mod:`.report` as text, :mod:`.measured` sets Nsight Compute's figures
  beside it.

The child's side: :mod:`.job` (the run), :mod:`.recorder` (the accesses and the requests) and
:mod:`.sim_hooks` (the only module that names numba-cuda's private simulator names)."""

from kernels.access.model import AccessResult, KernelAccess, LineAccess, Ratio, Request
from kernels.access.planning import plan
from kernels.access.tracejob import TraceJob
from kernels.access.runner import trace

__all__ = ["AccessResult", "KernelAccess", "LineAccess", "Ratio", "Request", "TraceJob", "plan", "trace"]
