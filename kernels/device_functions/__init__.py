"""CUDA helpers that several algorithms' kernels share: a runtime-writable ``__constant__`` array and 16-byte
vector loads."""
