"""Errors of the inspector."""

from kernels.errors import InputError


class ToolchainMissing(InputError):
    """The compiler packages (NVVM, ptxas, nvdisasm) are not installed; the message says which extra.
    An InputError: the command cannot do what was asked here, and says in one line how to make it."""


class CompileFailed(RuntimeError):
    """A kernel did not compile for the target; the message is the compiler's last line."""


__all__ = ["InputError", "ToolchainMissing", "CompileFailed"]
