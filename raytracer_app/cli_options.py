"""Checks of command-line options that more than one command shares."""

from __future__ import annotations

from kernels.errors import InputError


def refuse_launch_options_on_the_host(args, backend, names) -> None:
    """The cpu backend has no thread blocks or GPU memories: an option of ``names`` (attribute names) given
    there would change nothing, so it is an error (one rule for `render` and `bench`)."""
    if backend.runs_cuda_kernels:
        return
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            raise InputError(f"--{name.replace('_', '-')} {value} applies to CUDA kernels; the cpu backend has none "
                             "(use --backend cuda or sim)")
