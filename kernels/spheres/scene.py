"""Sphere scenes (seed 001): generated from a count and a seed, or loaded from / saved to JSON.

A scene is a float32 array of shape (N, 7) holding the book's ``struct Sphere`` field by field:
r, g, b (0..1), radius, x, y, z. That is also the layout of the global and the constant memory copies.
"""

from __future__ import annotations

import array
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
# Where the kernels read the spheres (kernels.spheres.MEMORIES is this tuple; it lives here, in a module
# that does not import numba, so the command line can list it before choosing the simulator).
MEMORIES = ("global", "constant", "shared", "binned", "sorted")
MAX_SPHERES = 1_000_000  # global memory, shared tiles and binned tiles: a scene's own limit
BOOK_EXTENT = 1000.0  # the book's scene spans -500..500 on each axis
BOOK_DENSITY_COUNT = 2000  # up to this many spheres the book's radii are kept; above, they shrink
PRESET_DIR = Path(__file__).resolve().parents[2] / "assets" / "scenes"


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


def max_spheres(memory: str, limits=None) -> int:
    """Most spheres a kernel reading them from ``memory`` accepts: constant memory holds what fits in the
    device's constant bank (``limits`` from kernels.backend.devices, or 64 KiB when not given); the others take
    scenes up to MAX_SPHERES. 'host' (the CPU twin) has no memory kind and the scene limit."""
    if memory == "constant":
        return CONSTANT_CAPACITY if limits is None else capacity(limits)
    if memory in MEMORIES or memory == "host":
        return MAX_SPHERES
    raise InputError(f"memory {memory!r} is not one of {', '.join(MEMORIES)}")


def memory_on(backend, memory: str) -> str:
    """The memory a frame's spheres are read from on ``backend``: the chosen one where CUDA kernels run,
    'host' for the CPU twin (which has no GPU memories); the one place that says so."""
    return memory if backend.runs_cuda_kernels else "host"


def memory_cap(backend, memory: str) -> int:
    """Most spheres ``memory`` holds on ``backend``'s device (constant memory's capacity; a scene's limit
    for the others and the CPU twin), whatever the backend can finish in reasonable time."""
    return max_spheres(memory_on(backend, memory), backend.limits)


def sphere_cap(backend, memory: str) -> int:
    """Most spheres a frame on ``backend`` reading them from ``memory`` takes: the memory's own limit on the
    device (:func:`memory_cap`), within the backend's (the simulator runs every thread in Python)."""
    return min(memory_cap(backend, memory), backend.caps.max_spheres)


def cap_reason(backend, memory: str) -> str:
    """Why :func:`sphere_cap` is the limit, in words for a message or a tooltip."""
    cap = sphere_cap(backend, memory)
    if cap < memory_cap(backend, memory):
        return f"at most {cap:,} on the simulator: every GPU thread runs in Python"
    where = f"{memory} memory" if backend.runs_cuda_kernels else "the CPU twin"
    return f"at most {cap:,} spheres for {where}: {limit_reason(cap)}"


def limit_reason(cap: int) -> str:
    """Why ``cap`` is the limit, for messages and tooltips."""
    if cap > CONSTANT_CAPACITY:
        return f"a scene holds at most {MAX_SPHERES:,} spheres"
    return f"64 KiB of constant memory / {BYTES_PER_SPHERE} bytes per sphere"


def check_count(n, cap: int = MAX_SPHERES) -> int:
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= cap:
        raise InputError(f"sphere count {n} is out of range; allowed 1..{cap} ({limit_reason(cap)})")
    return int(n)


def radius_scale(n: int, size: tuple[int, int] | None = None) -> float:
    """Factor on the book's radii that keeps a random scene of ``n`` spheres readable: 1 up to 2000
    spheres (the book's scenes unchanged), then 1/sqrt(n / 2000), so the spheres' total area stays that
    of 2000 and the frame is neither empty nor a wall of overlapping discs. With the image ``size`` known
    the scene is laid out over the image (see generate_scene) and radii follow its smaller side."""
    density = min(1.0, (BOOK_DENSITY_COUNT / n) ** 0.5)
    if size is None:
        return density
    return density * min(size) / BOOK_EXTENT


def generate_scene(n: int, seed: int = 0, cap: int = MAX_SPHERES, size: tuple[int, int] | None = None) -> Scene:
    """The book's random scene, deterministic for a seed: colour rnd(1), centre rnd(1000) - 500, radius
    rnd(100) + 20 (rnd(x) = x * uniform[0, 1)), radii times :func:`radius_scale` (1 up to 2000 spheres).
    Given the image ``size`` (W, H), centres spread over the image instead (x in -W/2..W/2, y in
    -H/2..H/2, z over the larger side), so a small image is as full as the book's 1000x1000 view."""
    n = check_count(n, cap)
    rng = np.random.default_rng(seed)
    s = np.empty((n, SPHERE_FLOATS), np.float32)
    s[:, 0:3] = rng.random((n, 3))
    s[:, 3] = (rng.random(n) * 100.0 + 20.0) * radius_scale(n, size)
    s[:, 4:7] = rng.random((n, 3)) * 1000.0 - 500.0
    if size is not None:
        s[:, 4:7] *= np.array([size[0], size[1], max(size)], np.float64) / BOOK_EXTENT
    return Scene(s, f"random {n} spheres, seed {seed}" + (f", laid out for {size[0]}x{size[1]}" if size else ""))


def scene_from_dict(doc, source: str = "scene", cap: int = MAX_SPHERES) -> Scene:
    if not isinstance(doc, dict) or not isinstance(doc.get("spheres"), list):
        raise InputError(f"{source}: expected an object with a list 'spheres'")
    if len(doc["spheres"]) > cap:  # before checking each one: a huge list is refused at once
        raise InputError(f"{source}: {len(doc['spheres'])} spheres is above the capacity {cap}")
    rows = []
    for i, sph in enumerate(doc["spheres"]):
        rows.append(_sphere_row(sph, f"{source}: sphere {i}"))
    if not rows:
        raise InputError(f"{source}: the scene has no spheres; allowed 1..{cap}")
    if len(rows) > cap:
        raise InputError(f"{source}: {len(rows)} spheres is above the capacity {cap} ({limit_reason(cap)})")
    name = doc.get("name") if isinstance(doc.get("name"), str) else Path(source).stem
    return Scene(np.ascontiguousarray(np.array(rows, np.float32)), name)


def _sphere_row(sph, where: str) -> list:
    """The 7 values (r, g, b, radius, x, y, z) of one sphere object, checked."""
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
    if not np.float32(float(radius)) > 0:  # as the scene stores it: a radius that rounds to 0 would not load back
        why = "must be positive" if not radius > 0 else "is 0 as a float32, as the scene stores it; at least 1.4e-45"
        raise InputError(f"{where}: radius {_short(radius)} {why}")
    if not all(0 <= c <= 1 for c in color):
        raise InputError(f"{where}: color {_short(color)} must have r, g, b in 0..1")
    return [*color, radius, *center]


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


# The largest scene file worth parsing: the most spheres any memory renders, at a generous 512 bytes of
# JSON each (the app writes at most about 250). Bigger files are refused from their size.
MAX_SCENE_FILE_BYTES = MAX_SPHERES * 512 + 65536
# What may remain once whitespace outside strings is dropped: a sphere of seven 17-digit values takes
# about 175 bytes. Bounds the memory a file padded with whitespace costs.
COMPACT_BYTES_PER_SPHERE = 224
# What reading costs per byte of (compacted) file: its bytes, its text, and the spheres packed as float32
# while parsing (a 150 MB scene peaked at 337 MB)
PEAK_PER_BYTE = 3


def load_scene(path, cap: int = MAX_SPHERES, option: str = "--scene") -> Scene:
    """A scene file, bounded while it is parsed, not after: the file's size (512 bytes per sphere), then
    counts of its brackets and commas (a scene of ``cap`` spheres has at most 3 objects or lists and 8
    commas per sphere) before json parses it, then each sphere packed into float32 as the parser closes
    it, so a file of millions of ``{}`` or ``[]`` is refused early and the parsed document stays small."""
    from kernels.io.reader import read_json

    source = str(path)
    packer = _Packer(source, cap)

    def check_raw(raw: bytes, label: str) -> None:
        containers = raw.count(b"{") + raw.count(b"[")
        if containers > 3 * cap + 16 or raw.count(b",") > 8 * cap + 16:
            raise InputError(f"{label} holds more objects, lists or values than a scene of at most {cap} "
                             f"spheres can ({limit_reason(cap)})")

    doc = read_json(path, option, min(MAX_SCENE_FILE_BYTES, cap * 512 + 65536),
                    f"a scene holds at most {cap} spheres", check_raw, packer, packer.number,
                    compact_limit=cap * COMPACT_BYTES_PER_SPHERE + 65536, peak_per_byte=PEAK_PER_BYTE)
    return packer.scene(doc)


_SPHERE_KEYS = frozenset(("center", "radius", "color"))
_SCENE_KEYS = frozenset(("name", "spheres"))
_PACKED = object()  # what a sphere object becomes in the parsed document


class _Packer:
    """json's hooks for a scene file: each sphere object is checked and packed into float32 values as
    the parser closes it; an object with other keys (an object under an unknown key) is refused."""

    def __init__(self, source: str, cap: int):
        self.source, self.cap = source, cap
        self.values = array.array("f")  # float32 as packed: 4 bytes a value, not a Python float's 32
        self.count = 0
        self.numbers = 0

    def number(self, text: str):
        self.numbers += 1
        if self.numbers > 7 * self.cap + 16:
            raise InputError(f"{self.source}: more numbers than {self.cap} spheres hold")
        return float(text) if any(c in text for c in ".eE") else int(text)

    def __call__(self, pairs):
        keys = {k for k, _ in pairs}
        if keys & _SCENE_KEYS:
            return dict(pairs)
        unknown = sorted(keys - _SPHERE_KEYS)
        if unknown:
            raise InputError(f"{self.source}: unknown key {_short(unknown[0])}; a scene holds 'name' and "
                             "'spheres', each sphere 'center', 'radius' and 'color'")
        if self.count >= self.cap:
            raise InputError(f"{self.source}: more than {self.cap} spheres is above the capacity {self.cap} "
                             f"({limit_reason(self.cap)})")
        self.values.extend(_sphere_row(dict(pairs), f"{self.source}: sphere {self.count}"))
        self.count += 1
        return _PACKED

    def scene(self, doc) -> Scene:
        source, cap = self.source, self.cap
        if not isinstance(doc, dict) or not isinstance(doc.get("spheres"), list):
            raise InputError(f"{source}: expected an object with a list 'spheres'")
        spheres = doc["spheres"]
        for i, sph in enumerate(spheres):
            if sph is not _PACKED:
                raise InputError(f"{source}: sphere {i}: expected an object with center, radius and color")
        if len(spheres) != self.count:
            raise InputError(f"{source}: sphere objects outside the list 'spheres'")
        if not spheres:
            raise InputError(f"{source}: the scene has no spheres; allowed 1..{cap}")
        name = doc.get("name") if isinstance(doc.get("name"), str) else Path(source).stem
        rows = np.frombuffer(self.values, np.float32).reshape(self.count, SPHERE_FLOATS).copy()
        return Scene(np.ascontiguousarray(rows), name)


def check_storable(scene: Scene, option: str = "--save-scene") -> None:
    """InputError unless every sphere of ``scene`` is what :func:`load_scene` accepts, checked on its float32
    values as stored: a scene the app writes always loads back."""
    s = scene.spheres
    with np.errstate(over="ignore", invalid="ignore"):
        bad = ~(np.isfinite(s).all(axis=1) & np.isfinite(s * s).all(axis=1) & (s[:, 3] > 0)
                & (s[:, 0:3] >= 0).all(axis=1) & (s[:, 0:3] <= 1).all(axis=1))
    if s.ndim != 2 or s.shape[1] != SPHERE_FLOATS or not 1 <= len(s) <= MAX_SPHERES:
        raise InputError(f"{option}: a scene of shape {s.shape} cannot be saved; 1..{MAX_SPHERES} spheres of 7 values")
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{option}: sphere {i} ({', '.join(f'{v:g}' for v in s[i])}) would not load back: radius "
                         f"above 0, colour in 0..1, values whose squares fit float32")


def save_scene(scene: Scene, path, option: str = "--save-scene", inputs=()):
    """Write the scene as JSON through the one output writer; returns the file written. What it writes
    loads back (:func:`check_storable`; float32 values are written exactly)."""
    from kernels.io.writer import write_output

    check_storable(scene, option)
    text = json.dumps(scene.to_dict(), indent=1, allow_nan=False)
    return write_output(path, text + "\n", option, inputs)


def presets() -> dict[str, Path]:
    """Scene presets shipped in assets/scenes, by name."""
    return {p.stem: p for p in sorted(PRESET_DIR.glob("*.json"))}
