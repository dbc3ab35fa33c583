"""The Julia set as a render kind: the paths :class:`kernels.harness.renderable.Renderable` calls (see its
docstring), for the CLI's `render julia`, the window's tab and the service. Imports no numba."""

from __future__ import annotations

from kernels.harness import escape_kind
from kernels.harness.escape_kind import PREVIEW_WORK, checked, tiny  # noqa: F401 - hooks
from kernels.julia.params import HOST_TWINS, JuliaParams, launch_block as _launch_block

QUICK_TWIN, DEFAULT_TWIN = "scalar", HOST_TWINS[0]
TWIN_FUNCTIONS = {"simd": ("kernels.julia.simd", ("render_julia_simd",)),
                  "scalar": ("kernels.julia.cpu", ("render_julia_cpu",))}


def make_params(values: dict, backend, words: dict) -> JuliaParams:
    given = {k: v for k, v in values.items() if v is not None and k in JuliaParams.__dataclass_fields__}
    if "c" in given:
        given["c"] = complex(*given["c"])
    return JuliaParams(**given).checked("--")


def launch_block(params: JuliaParams, block) -> tuple[int, int]:
    return _launch_block(params.launch, block)


def renderer(backend):
    from kernels.julia.renderer import JuliaRenderer

    return JuliaRenderer(backend)


def preview(params: JuliaParams, size):
    from kernels.julia import reference

    return escape_kind.preview(reference.render, params, size, "julia", {"c": f"{params.c.real!r},{params.c.imag!r}"},
                               PREVIEW_WORK)


def gpu_kernel_key(params: JuliaParams) -> str:
    """The precision for the kernel the book's and the 2-D launches share (the shipped images are keyed so),
    'PRECISION-grouped' for the grouped launch's own kernel, which no image ships."""
    return params.precision if params.launch != "grouped" else f"{params.precision}-grouped"


def compile_gpu_kernel(key: str) -> None:
    from kernels.julia.gpu import gpu_kernel

    precision, _, launch = key.partition("-")
    gpu_kernel(precision, launch or "2d")


def row(meta: dict, size) -> tuple[str, int, str]:
    """(op, n, what) of a frame's row: 'julia' and the pixel count."""
    return escape_kind.row("julia", meta, size, f"c={meta.get('c')}")


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
