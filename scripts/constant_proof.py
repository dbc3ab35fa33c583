"""Proof that the constant-memory kernel reads a real, runtime-writable __constant__ array: the PTX's
`.visible .const` declaration and its `ld.const` loads, the time to write 2000 new spheres into the symbol
(as cudaMemcpyToSymbol does) against the time to recompile the kernel, and that writing adds no overload.
Needs a real GPU (the cuda backend)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=20, help="symbol writes to time (default 20)")
    args = parser.parse_args(argv)
    from kernels import backend

    if not backend.gpu_available():
        print("constant_proof: needs a real CUDA GPU (none here)", file=sys.stderr)
        return 2
    from numba import cuda

    from kernels.spheres.gpu import CONSTANT_SPHERES, constant_ptx, gpu_kernel
    from kernels.spheres.renderer import SphereRenderer
    from kernels.spheres.layout import pack_spheres
    from kernels.spheres.scene import generate_scene

    SphereRenderer(backend.resolve("cuda")).render(generate_scene(20, seed=1), memory="constant")
    ptx = constant_ptx()
    print("PTX:", [line.strip() for line in ptx.splitlines() if ".visible .const" in line],
          "ld.const count:", ptx.count("ld.const"))
    kernel = gpu_kernel("constant")
    before = len(kernel.overloads)
    times = []
    for seed in range(2, 2 + args.writes):
        packed = pack_spheres(generate_scene(2000, seed=seed).spheres)
        t0 = time.perf_counter()
        CONSTANT_SPHERES.write(packed, kernel)
        times.append((time.perf_counter() - t0) * 1e6)
    print(f"symbol write of 2000 packed spheres ({packed.nbytes} bytes): median {statistics.median(times):.1f} us; "
          f"overloads before/after {before}/{len(kernel.overloads)}")
    signature = next(iter(kernel.overloads))  # the kernel's own signature, whatever it is today
    t0 = time.perf_counter()
    cuda.jit(signature)(kernel.py_func)
    print(f"a recompile of the constant kernel: {time.perf_counter() - t0:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
