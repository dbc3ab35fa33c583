"""The Julia set as a render kind: the paths :class:`kernels.harness.renderable.Renderable` calls (see its
docstring), for the CLI's `render julia`, the window's tab and the service. Imports no numba."""

from __future__ import annotations

import math

from kernels.julia.params import HOST_TWINS, JuliaParams, launch_block as _launch_block

QUICK_TWIN, DEFAULT_TWIN = "scalar", HOST_TWINS[0]
TWIN_FUNCTIONS = {"simd": ("kernels.julia.simd", ("render_julia_simd",)),
                  "scalar": ("kernels.julia.cpu", ("render_julia_cpu",))}
PREVIEW_WORK = 1.5e7  # sampled pixels x iterations the preview may cost (about 0.1 s of numpy)
MAX_PREVIEW_STEP = 16  # coarser than 16x16-pixel blocks is no picture: no preview then


def make_params(values: dict, backend, words: dict) -> JuliaParams:
    given = {k: v for k, v in values.items() if v is not None and k in JuliaParams.__dataclass_fields__}
    if "c" in given:
        given["c"] = complex(*given["c"])
    return JuliaParams(**given).checked("--")


def checked(params: JuliaParams, backend, words: dict) -> JuliaParams:
    return params.checked()


def launch_block(params: JuliaParams, block) -> tuple[int, int]:
    return _launch_block(params.launch, block)


def renderer(backend):
    from kernels.julia.renderer import JuliaRenderer

    return JuliaRenderer(backend)


def preview(params: JuliaParams, size):
    from kernels.julia import reference

    width, height = size
    step = max(1, math.ceil(math.sqrt(width * height * params.iterations / PREVIEW_WORK)))
    if step > MAX_PREVIEW_STEP:
        return None
    meta = {"kind": "julia", "c": f"{params.c.real!r},{params.c.imag!r}", "zoom": params.zoom,
            "iterations": params.iterations, "precision": params.precision, "preview_step": step}
    return reference.render(params, (width, height), step), meta


def gpu_kernel_key(params: JuliaParams):
    return params.precision


def compile_gpu_kernel(key) -> None:
    from kernels.julia.gpu import gpu_kernel

    gpu_kernel(key)


def tiny(params: JuliaParams) -> JuliaParams:
    return params


def row(meta: dict, size) -> tuple[str, int, str]:
    """(op, n, what) of a frame's row: 'julia' and the pixel count."""
    return ("julia", size[0] * size[1],
            f"c={meta.get('c')}, zoom {meta.get('zoom')}, {meta.get('iterations')} iterations")


HOST_VARIANTS = {"simd": "julia-cpu-simd", "scalar": "julia-cpu"}


def variant(meta: dict) -> str:
    """A frame's variant: its launch on a GPU, its twin on the host."""
    return HOST_VARIANTS[meta["twin"]] if "twin" in meta else f"julia-{meta.get('launch', '')}"


def notes(params: JuliaParams, size, out: str, values: dict) -> list[str]:
    lines = []
    if params.precision == "float32" and not params.float32_resolves(*size):
        lines.append(f"note: float32 cannot resolve this view ({params.ulps_per_pixel(*size):.2g} float32 steps "
                     "per pixel): expect blocks; use --precision float64")
    lines.append(f"view: {params.view_text()}")
    lines.append(f"again: {params.command_line(*size, out)}")
    return lines
