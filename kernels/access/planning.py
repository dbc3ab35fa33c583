"""The checks made before a traced run starts, in the app's process: the target and variant (a GPU variant
the simulator runs, or a user's variant file), the size, the launch resolved as a GPU would run it, and the
memory the trace needs; the result is a :class:`~.tracejob.TraceJob`. Imports no numba."""

from __future__ import annotations

from kernels.access import recorder
from kernels.access.tracejob import DEFAULT_BLOCKS, MODEL_LIMITS, TraceJob, gpu_variant
from kernels.backend import Backend
from kernels.backend.devices import DeviceLimits
from kernels.errors import InputError
from kernels.launch import Launch

THREAD_BYTES = 64 * 1024  # a simulated thread: an OS thread's used stack and its Python frames
DETAIL_BYTES = 8 * 2**20  # the requests kept for a view, every line together
MEMORY_CAP = 2 * 2**30
SIM = Backend("sim")  # whose option and size defaults a trace takes
GPU = Backend("cuda")  # whose size limits bound it (the trace samples blocks, so GPU sizes are fine)

__all__ = ["DEFAULT_BLOCKS", "MODEL_LIMITS", "TraceJob", "gpu_variant", "plan"]


def plan(target: str, variant: str | None = None, *, n: int | None = None, options: dict | None = None,
         seed: int = 0, block=None, blocks: int = DEFAULT_BLOCKS, variant_file: str | None = None,
         limits: DeviceLimits = MODEL_LIMITS, memory_cap: int | None = None,
         variant_timeout: float | None = None) -> TraceJob:
    """The job for tracing ``variant`` of ``target`` (or the variant file), checked: InputError (one line) for
    an unknown target or variant, a CPU twin or library peer, a kernel the simulator cannot run, a size out
    of range, or a trace that would need more memory than allowed."""
    from kernels.registry import by_name

    spec = by_name(target)
    if blocks < 1:
        raise InputError(f"--blocks {blocks} must be at least 1")
    source = None
    if variant_file is not None:
        if spec.user is None:
            raise InputError(f"{target} takes no variant files (docs/user-variants.md names the targets that do)")
        from kernels.user_variants import loader

        source = loader.read(variant_file).source
    else:
        gpu_variant(spec, variant)
    if spec.size is not None:
        n = spec.size.default_for(SIM) if n is None else spec.size.check(n, GPU)
    elif n is not None:
        raise InputError(f"--n does not apply to {target}: its size is the image's (--size)")
    options = spec.options_for(options or {}, SIM)
    launch = Launch(block=block)
    if variant_file is None:
        resolved = gpu_variant(spec, variant).resolve(launch, limits, n)
        launch = Launch(block=resolved.block, grid=resolved.grid, items_per_thread=resolved.items)
    from kernels.user_variants.loader import DEFAULT_WATCHDOG_S

    job = TraceJob(target, variant, n, options, seed, launch, limits, blocks,
                   (variant_file, source) if variant_file is not None else None,
                   variant_timeout=DEFAULT_WATCHDOG_S if variant_timeout is None else variant_timeout)
    check_memory(job, spec, memory_cap)
    return job


def estimate_bytes(job: TraceJob, spec) -> int:
    """What the trace may hold at once: the problem (device arrays live in host memory in the simulator,
    beside the host's copies), one block's threads, one block's accesses between two barriers (at most
    ``segment_records``, enforced as it runs) and the requests kept for a view."""
    problem = 0
    if spec.memory is not None and job.n is not None:
        host, device = spec.memory(job.n, job.options)
        problem = host + 2 * device
    size = job.options.get("size")
    if isinstance(size, tuple) and len(size) == 2:
        problem += size[0] * size[1] * 4 * 4  # the image on the "device", its copy back and the reference
    block = job.launch.block if job.launch.block is not None else 1024
    threads = block[0] * block[1] if isinstance(block, tuple) else block
    return problem + threads * THREAD_BYTES + job.segment_records * recorder.RECORD_BYTES + DETAIL_BYTES


def check_memory(job: TraceJob, spec, cap: int | None = None) -> None:
    from kernels.backend.devices import available_host_bytes

    need = estimate_bytes(job, spec)
    if cap is None:
        free = available_host_bytes()
        cap = min(MEMORY_CAP, int(0.6 * free)) if free else MEMORY_CAP
    if need > cap:
        raise InputError(f"tracing {job.label} at this size needs about {need / 2**20:,.0f} MiB; the trace may use "
                         f"{cap / 2**20:,.0f} MiB here: give a smaller --n")
