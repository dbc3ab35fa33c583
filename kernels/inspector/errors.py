"""Errors of the inspector."""

from kernels.errors import InputError


class ToolchainMissing(RuntimeError):
    """The compiler packages (NVVM, ptxas, nvdisasm) are not installed; the message says which extra."""


class CompileFailed(RuntimeError):
    """A kernel did not compile for the target; the message is the compiler's last line."""


__all__ = ["InputError", "ToolchainMissing", "CompileFailed"]
