"""The spheres as a render kind: the paths :class:`kernels.harness.renderable.Renderable` calls (see its
docstring), for the CLI's `render spheres`, the window's tab and the service. Imports no numba."""

from __future__ import annotations

from kernels.errors import InputError
from kernels.spheres.layout import HOST_TWINS
from kernels.spheres.params import DEFAULT_COUNT, SphereParams
from kernels.spheres.scene import cap_reason, generate_scene, load_scene, memory_cap, save_scene, sphere_cap

QUICK_TWIN, DEFAULT_TWIN = "rows-serial", HOST_TWINS[0]
TWIN_FUNCTIONS = {"tiles": ("kernels.spheres.tiles", ("bin_spheres", "shade_tiles_cpu")),
                  "rows": ("kernels.spheres.cpu", ("render_spheres_cpu",)),
                  "rows-serial": ("kernels.spheres.cpu", ("render_spheres_cpu_serial",))}
PREVIEW_MAX_SPHERES = 5000  # the numpy reference's preview: milliseconds up to here


def make_params(values: dict, backend, words: dict) -> SphereParams:
    """A scene from a file (``scene``) or a random one (``spheres``, ``seed``), its memory and pattern."""
    if values.get("scene") and values.get("spheres") is not None:
        raise InputError("give either --scene FILE or --spheres N, not both")
    memory = values.get("memory") or "global"
    cap = memory_cap(backend, memory)  # refused before a large file is read or a scene generated
    if values.get("scene"):
        scene = load_scene(values["scene"], cap)
    else:
        count = values.get("spheres")
        scene = generate_scene(DEFAULT_COUNT if count is None else count, values.get("seed") or 0, cap)
    return SphereParams(scene, memory, values.get("pattern") or "uniform").checked("--")


def checked(params: SphereParams, backend, words: dict) -> SphereParams:
    params.checked()
    cap = sphere_cap(backend, params.memory)
    if not 1 <= params.scene.count <= cap:
        raise InputError(f"{words.get('spheres', '--spheres')} {params.scene.count:,}: {cap_reason(backend, params.memory)}")
    return params


def launch_block(params: SphereParams, block) -> tuple[int, int]:
    return tuple(block)


def renderer(backend):
    from kernels.spheres.renderer import SphereRenderer

    return SphereRenderer(backend)


def preview(params: SphereParams, size):
    from kernels.spheres import reference

    if params.scene.count > PREVIEW_MAX_SPHERES:
        return None
    meta = {"kind": "spheres", "scene": params.scene.name, "spheres": params.scene.count, "memory": params.memory,
            "pattern": params.pattern}
    return reference.render(params.scene.spheres, *size), meta


def gpu_kernel_key(params: SphereParams):
    return params.memory


def compile_gpu_kernel(key) -> None:
    from kernels.spheres.gpu import gpu_kernel

    gpu_kernel(key)


def tiny(params: SphereParams) -> SphereParams:
    return SphereParams(generate_scene(1, 0), params.memory, params.pattern)


def row(meta: dict, size) -> tuple[str, int, str]:
    """(op, n, what) of a frame's row: the access pattern and the sphere count."""
    return meta.get("pattern", "uniform"), int(meta.get("spheres", 0)), f"{meta.get('spheres')} spheres"


HOST_VARIANTS = {"tiles": "spheres-cpu-tiles", "rows": "spheres-cpu", "rows-serial": "spheres-cpu-serial"}


def variant(meta: dict) -> str:
    """A frame's variant: its memory on a GPU, its twin on the host."""
    return HOST_VARIANTS[meta["twin"]] if "twin" in meta else f"spheres-{meta.get('memory', '')}"


def outputs(params: SphereParams, size, out: str, values: dict) -> list:
    """--save-scene: the scene as JSON, written beside the image (each written even when the other fails)."""
    if not values.get("save_scene"):
        return []
    from kernels.errors import printable

    def write_scene():
        written = save_scene(params.scene, values["save_scene"], "--save-scene",
                                    [("--out", out), ("--scene", values.get("scene"))])
        print(f"saved scene to {printable(values['save_scene'])}{written.kept()}")

    return [("--save-scene", values["save_scene"], write_scene)]


def png_text(params: SphereParams) -> dict:
    """A saved image carries its scene, so the spheres can be read back from it."""
    import json

    return {"raytracer:scene_json": json.dumps(params.scene.to_dict(), separators=(",", ":"))}


def params_to_json(params: SphereParams) -> dict:
    """The scene as its spheres' numbers (float32 -> JSON floats keep every value), its memory and pattern."""
    return {"scene": {"name": params.scene.name, "spheres": params.scene.spheres.tolist()},
            "memory": params.memory, "pattern": params.pattern}


def params_from_json(doc) -> SphereParams:
    import numpy as np

    from kernels.spheres.scene import Scene

    spheres = np.ascontiguousarray(np.asarray(doc["scene"]["spheres"], dtype=np.float32).reshape(-1, 7))
    return SphereParams(Scene(spheres, str(doc["scene"].get("name", ""))), str(doc["memory"]), str(doc["pattern"]))
