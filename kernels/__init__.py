"""The compute core of the GPU kernel lab: every kernel, its CPU twin, backends, timing and device info.

Importing this package imports neither Qt nor numba: the backend (real CUDA, the CUDA simulator or the CPU)
must be chosen before numba is imported, see :mod:`kernels.backend`.
"""

from kernels.errors import InputError

__all__ = ["InputError"]
