"""Sphere scenes (seed 001): generated from a count and a seed, or loaded from / saved to JSON.

A scene is a float32 array of shape (N, 7) holding the book's ``struct Sphere`` field by field:
r, g, b (0..1), radius, x, y, z. That is also the layout of the global and the constant memory copies.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernels.errors import InputError

SPHERE_FLOATS = 7  # r, g, b, radius, x, y, z
BYTES_PER_SPHERE = SPHERE_FLOATS * 4
CONSTANT_BYTES = 65536  # every CUDA GPU has 64 KiB of constant memory
CONSTANT_CAPACITY = CONSTANT_BYTES // BYTES_PER_SPHERE  # 2340 spheres
PRESET_DIR = Path(__file__).resolve().parent.parent / "assets" / "scenes"


@dataclass
class Scene:
    spheres: np.ndarray  # (N, 7) float32, C-contiguous
    name: str = ""

    @property
    def count(self) -> int:
        return int(self.spheres.shape[0])

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "spheres": [
                {"center": [float(s[4]), float(s[5]), float(s[6])], "radius": float(s[3]),
                 "color": [float(s[0]), float(s[1]), float(s[2])]}
                for s in self.spheres
            ],
        }


def capacity(limits) -> int:
    """Most spheres the constant-memory kernel can hold on a device: its constant memory / 28 bytes."""
    return min(CONSTANT_CAPACITY, limits.total_constant_memory // BYTES_PER_SPHERE)


def check_count(n, cap: int = CONSTANT_CAPACITY) -> int:
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= cap:
        raise InputError(f"sphere count {n} is out of range; allowed 1..{cap} (64 KiB of constant memory / {BYTES_PER_SPHERE} bytes per sphere)")
    return int(n)


def generate_scene(n: int, seed: int = 0, cap: int = CONSTANT_CAPACITY) -> Scene:
    """The book's random scene, deterministic for a seed: colour rnd(1), centre rnd(1000) - 500, radius
    rnd(100) + 20 (rnd(x) = x * uniform[0, 1))."""
    n = check_count(n, cap)
    rng = np.random.default_rng(seed)
    s = np.empty((n, SPHERE_FLOATS), np.float32)
    s[:, 0:3] = rng.random((n, 3))
    s[:, 3] = rng.random(n) * 100.0 + 20.0
    s[:, 4:7] = rng.random((n, 3)) * 1000.0 - 500.0
    return Scene(s, f"random {n} spheres, seed {seed}")


def scene_from_dict(doc, source: str = "scene", cap: int = CONSTANT_CAPACITY) -> Scene:
    if not isinstance(doc, dict) or not isinstance(doc.get("spheres"), list):
        raise InputError(f"{source}: expected an object with a list 'spheres'")
    if len(doc["spheres"]) > cap:  # before checking each one: a huge list is refused at once
        raise InputError(f"{source}: {len(doc['spheres'])} spheres is above the capacity {cap}")
    rows = []
    for i, sph in enumerate(doc["spheres"]):
        where = f"{source}: sphere {i}"
        if not isinstance(sph, dict):
            raise InputError(f"{where}: expected an object with center, radius and color")
        center, radius, color = sph.get("center"), sph.get("radius"), sph.get("color")
        for field, value in (("center", center), ("color", color)):
            if not (isinstance(value, list) and len(value) == 3 and all(_is_number(v) for v in value)):
                raise InputError(f"{where}: '{field}' must be a list of 3 numbers, got {_short(value)}")
        if not _is_number(radius):
            raise InputError(f"{where}: 'radius' must be a number, got {_short(radius)}")
        _check_float32(where, "center", center)
        _check_float32(where, "radius", [radius])
        if not radius > 0:
            raise InputError(f"{where}: radius {_short(radius)} must be positive")
        if not all(0 <= c <= 1 for c in color):
            raise InputError(f"{where}: color {_short(color)} must have r, g, b in 0..1")
        rows.append([*color, radius, *center])
    if not rows:
        raise InputError(f"{source}: the scene has no spheres; allowed 1..{cap}")
    if len(rows) > cap:
        raise InputError(f"{source}: {len(rows)} spheres is above the capacity {cap}")
    name = doc.get("name") if isinstance(doc.get("name"), str) else Path(source).stem
    return Scene(np.ascontiguousarray(np.array(rows, np.float32)), name)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(v) -> bool:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:  # an integer too large for a float: a number, refused as too large below
        return True


def _check_float32(where: str, field: str, values) -> None:
    """Refuse values that overflow float32, or whose square does (the kernels square radii and offsets)."""
    with np.errstate(over="ignore"):
        for v in values:
            try:
                f = np.float32(float(v))
            except OverflowError:
                f = np.float32(np.inf)
            if not (np.isfinite(f) and np.isfinite(f * f)):
                raise InputError(f"{where}: {field} {_short(v)} is too large; its square must fit float32 (|value| <= {_FLOAT32_SQRT_MAX:.3g})")


_FLOAT32_SQRT_MAX = float(np.sqrt(np.finfo(np.float32).max))


# The largest scene file worth parsing: the most spheres any backend renders, at a generous 1 KiB of JSON
# each (the app writes about 200 bytes per sphere). Bigger files are refused from their size.
MAX_SCENE_FILE_BYTES = CONSTANT_CAPACITY * 1024 + 65536


def load_scene(path, cap: int = CONSTANT_CAPACITY, option: str = "--scene") -> Scene:
    from kernels.inputs import read_json

    doc = read_json(path, option, MAX_SCENE_FILE_BYTES,
                    f"a scene holds at most {CONSTANT_CAPACITY} spheres")
    return scene_from_dict(doc, str(path), cap)


def save_scene(scene: Scene, path, option: str = "--save-scene", inputs=()):
    """Write the scene as JSON through the one output writer; returns the file written."""
    from kernels.files import write_output

    text = json.dumps(scene.to_dict(), indent=1, allow_nan=False)  # values are finite float32: always loads back
    return write_output(path, text + "\n", option, inputs)


def presets() -> dict[str, Path]:
    """Scene presets shipped in assets/scenes, by name."""
    return {p.stem: p for p in sorted(PRESET_DIR.glob("*.json"))}
