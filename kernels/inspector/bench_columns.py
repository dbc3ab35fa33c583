"""What `bench --resources` adds to each GPU row: the compiled kernel's registers per thread, shared memory
per block and theoretical occupancy at the launch the row used, from the inspector (a real compile for the
device's architecture, or sm_90 without a GPU; cached on disk like every inspector compile)."""

from __future__ import annotations

from kernels.inspector.declarations import all_declarations


def device_arch(backend) -> str:
    """The row's architecture: the GPU's own compute capability, else the inspector's default."""
    from kernels.inspector.occupancy import DEFAULT_ARCH

    if not backend.is_gpu:
        return DEFAULT_ARCH
    from kernels.backend.compiler import cuda  # the compiler's own: its kernels take its arrays

    with cuda.gpus[backend.device]:
        major, minor = cuda.get_current_device().compute_capability
    return f"sm_{major}{minor}"


def _block_of(row) -> tuple[int, ...] | None:
    text = str(row.block)
    if not text:
        return None
    return tuple(int(v) for v in text.lower().split("x"))


def add_resources(rows, target: str, backend) -> str:
    """Fill registers / shared_bytes / occupancy_pct of every timed row whose variant has a kernel in the
    inspector's declarations; returns what was used ('sm_90') or why nothing could be added."""
    from kernels.inspector.report import inspect_many
    from kernels.inspector.toolchain import EXTRA_HINT, missing

    gone = missing()
    if gone:
        return f"not added: compiling kernels needs {', '.join(gone)} ({EXTRA_HINT})"
    arch = device_arch(backend)
    wanted = [r for r in rows if (target, r.variant) in all_declarations() and r.timing is not None]
    for block in {_block_of(r) for r in wanted}:
        same = [r for r in wanted if _block_of(r) == block]
        reports = inspect_many(sorted({(target, r.variant) for r in same}), arch, block)
        for r in same:
            report = reports[(target, r.variant)]
            if isinstance(report, Exception):
                continue
            r.registers = report.resources.registers
            r.shared_bytes = report.shared_per_block
            r.occupancy_pct = round(report.occupancy.percent, 1)
    return arch
