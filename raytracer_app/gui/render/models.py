"""What the user asked to see: the RenderModel. Its setters validate and clamp, then emit ``changed(group)``;
widgets listen to it (napari-style) and the main window renders; workers receive immutable snapshots of it
(requests.py). No widgets here; which settings key holds which value is in settings.py."""

from __future__ import annotations

from dataclasses import replace

from PyQt6.QtCore import QObject, pyqtSignal

from kernels import backend as backends
from kernels.errors import InputError
from kernels.harness.frames import check_size
from kernels.julia import JuliaParams
from kernels.launch import DEFAULT_BLOCK_2D
from kernels.registry import RENDERABLES
from kernels.spheres.params import SphereParams
from kernels.spheres.scene import Scene, cap_reason, capacity, generate_scene, sphere_cap
from kernels.service.requests import RenderRequest, settle_block

TABS = tuple(r.name for r in RENDERABLES)  # a tab per render kind of the registry
KINDS = {r.name: r for r in RENDERABLES}
PRECISION_MODES = ("auto", "float32", "float64")  # auto: float64 once the zoom passes float32's resolution
DEFAULT_SIZES = {r.name: r.default_size for r in RENDERABLES}


def kind_with(params_type) -> str:
    """The render kind whose params are ``params_type``: the window's extras for a kind (the sphere scene's
    files and count curve, the Julia presets and precision modes) are keyed by its params, never its name."""
    return next(r.name for r in RENDERABLES if r.params is params_type)


SPHERES, JULIA = kind_with(SphereParams), kind_with(JuliaParams)
HAND_BUILT = (SPHERES, JULIA)  # kinds whose controls the window builds by hand; every other kind's are generated

# Julia presets: the book's view first (c, iterations, colormap, size or None to keep the size)
JULIA_PRESETS = {
    "book (c = -0.8 + 0.156i, 1000x1000)": (complex(-0.8, 0.156), 200, "classic", (1000, 1000)),
    "Douady rabbit (c = -0.123 + 0.745i)": (complex(-0.123, 0.745), 300, "smooth", None),
    "dendrite (c = i)": (complex(0.0, 1.0), 300, "smooth", None),
    "San Marco (c = -0.75)": (complex(-0.75, 0.0), 400, "smooth", None),
    "Siegel disk (c = -0.391 - 0.587i)": (complex(-0.391, -0.587), 400, "smooth", None),
    "dragon (c = 0.285 + 0.01i)": (complex(0.285, 0.01), 400, "smooth", None),
}


class RenderModel(QObject):
    """What the user asked to see. Setters validate, then emit ``changed(group)`` (group: 'backend',
    'tab', 'size', 'block', a render kind's name, or 'settings' after restore); widgets listen to it and the
    main window renders. Values flow one way, widget -> model -> listeners: with a ``store`` the model
    also keeps its values per backend kind itself (restore, set_backend), so no listener writes them back."""

    changed = pyqtSignal(str)
    message = pyqtSignal(str)  # something the user should read (a refused value, a backend note)
    backendChanging = pyqtSignal(str)  # the new kind, before anything changes (save the old one's settings)

    def __init__(self, backend: backends.Backend, store=None):
        super().__init__()
        self.store = store  # keeps these values per backend kind (backend_settings.ModelStore), or None
        self.backend = backend
        self.backend_name = backend.kind  # what the user chose: one of backend.BACKEND_NAMES
        self.limits = backend.limits
        self.tab = TABS[0]
        self.sizes = dict(DEFAULT_SIZES)
        self.block = DEFAULT_BLOCK_2D
        self.params = {r.name: r.params() for r in RENDERABLES}  # each kind's params object
        self.seed = 0
        self.scene_is_random = True
        self.scene_path = ""  # the file the scene was loaded from ('' when generated)
        self.load_note = ""  # why the saved scene file could not be reloaded, for the status line
        self.precision_mode = "auto"
        self._precision_said = ""  # the precision whose limit the view was last said to pass ('' within it)
        self._seq = 0

    # ------------------------------------------------------------------ the hand-built kinds' values
    def _set(self, kind: str, **changes) -> None:
        self.params[kind] = replace(self.params[kind], **changes)

    scene = property(lambda self: self.params[SPHERES].scene, lambda self, v: self._set(SPHERES, scene=v))
    memory = property(lambda self: self.params[SPHERES].memory, lambda self, v: self._set(SPHERES, memory=v))
    pattern = property(lambda self: self.params[SPHERES].pattern, lambda self, v: self._set(SPHERES, pattern=v))
    julia = property(lambda self: self.params[JULIA], lambda self, v: self.params.__setitem__(JULIA, v))
    launch = property(lambda self: self.params[JULIA].launch, lambda self, v: self._set(JULIA, launch=v))

    # ------------------------------------------------------------------ derived values
    @property
    def capacity(self) -> int:
        return capacity(self.limits)

    @property
    def max_spheres(self) -> int:
        """The sphere count's upper bound for the memory in use (see max_spheres_for)."""
        return self.max_spheres_for(self.memory)

    def max_spheres_for(self, memory: str) -> int:
        """Most spheres a kernel reading them from ``memory`` takes here (the same rule a RenderRequest
        checks: kernels.spheres.scene.sphere_cap)."""
        return sphere_cap(self.backend, memory)

    def limit_reason_for(self, memory: str) -> str:
        """Why max_spheres_for(memory) is the limit, in words for a tooltip or a label."""
        return cap_reason(self.backend, memory)

    def random_scene(self, n: int) -> Scene:
        """A random scene laid out over the sphere tab's image (radii in proportion to it)."""
        return generate_scene(n, self.seed, self.max_spheres, size=self.effective_size(SPHERES))

    def julia_preset(self) -> str:
        """The Julia preset the current parameters match, or '' once a value differs (custom)."""
        j = self.julia
        for name, (c, iterations, colormap, size) in JULIA_PRESETS.items():
            if (j.c, j.iterations, j.colormap) == (c, iterations, colormap) and (size is None or self.sizes[JULIA] == size):
                return name
        return ""

    def scene_preset(self) -> str:
        """The shipped scene preset in use, or '' (a random scene or another file)."""
        from pathlib import Path

        from kernels.spheres.scene import presets

        if self.scene_is_random or not self.scene_path:
            return ""
        here = Path(self.scene_path).resolve()
        return next((name for name, path in presets().items() if path.resolve() == here), "")

    @property
    def device_label(self) -> str:
        return f"{self.backend.kind}: {self.backend.device_name}"

    def max_block(self) -> tuple[int, int]:
        """(max BX, max BY) each side may be set to: the device's limit for that side, up to max threads per
        block. Not the other side's share: typing 64 into BY beside BX 32 sets BY 64 and shrinks BX to 16
        (set_block), where a range of 1..32 made the box refuse the second digit and keep 6."""
        mt, dims = self.limits.max_threads_per_block, self.limits.max_block_dim
        return min(dims[0], mt), min(dims[1], mt)

    def effective_size(self, tab: str | None = None) -> tuple[int, int]:
        w, h = self.sizes[tab or self.tab]
        side = self.backend.caps.max_image_side
        return min(w, side), min(h, side)

    def block_fixed(self, tab: str | None = None) -> bool:
        """Whether the shown kind's launch rule fixes the block (the book's one thread per block), so the block
        controls do not apply."""
        tab = tab or self.tab
        return KINDS[tab].launch_block(self.params[tab], (2, 3)) != (2, 3)

    def request(self, repeats: int = 1, timed: bool = True) -> RenderRequest:
        self._seq += 1
        return RenderRequest(self.tab, self.backend, self.effective_size(), self.block, self.params[self.tab],
                             repeats=repeats, seq=self._seq, timed=timed)

    # ------------------------------------------------------------------ setters
    def set_backend(self, name: str, device: int | None = None) -> bool:
        """Switch backend; on failure says why (``message``) and keeps the current one."""
        try:
            b = backends.resolve(name, device)
        except InputError as exc:
            self.message.emit(str(exc))
            return False
        self.backend_name = name
        if b == self.backend:
            return True
        self.backendChanging.emit(b.kind)
        swap = self.store is not None and b.kind != self.backend.kind  # each kind keeps its own values
        if swap:
            self.store.save(self.backend.kind, self)
        self.backend, self.limits = b, b.limits
        self.block = settle_block(self.block, b)
        if self.scene.count > self.max_spheres:
            self.set_sphere_count(self.max_spheres, emit=False)
        elif self.scene_is_random:  # the image size may differ on the new backend (the simulator's cap)
            self.scene = self.random_scene(self.scene.count)
        if swap:
            self.store.load(b.kind, self)
        self.changed.emit("backend")
        return True

    def restore(self) -> None:
        """This backend's saved values from the store (none without one), then ``changed('settings')``."""
        if self.store is not None:
            self.store.load(self.backend.kind, self)
        self.changed.emit("settings")

    def set_tab(self, tab: str) -> None:
        if tab in TABS and tab != self.tab:
            self.tab = tab
            self.changed.emit("tab")

    def set_size(self, size: tuple[int, int], tab: str | None = None) -> bool:
        try:
            size = check_size(*size)
        except InputError as exc:
            self.message.emit(str(exc))
            return False
        tab = tab or self.tab
        if self.sizes[tab] != size:
            self.sizes[tab] = size
            if tab == SPHERES and self.scene_is_random:  # laid out again for the new image
                self.scene = self.random_scene(self.scene.count)
            if tab == JULIA:
                self._auto_precision()
            self.changed.emit("size")
        return True

    def set_block(self, bx: int | None = None, by: int | None = None) -> None:
        """Set one or both block dimensions, clamped so BX * BY stays within the device's limit: the side set
        keeps its value (within the device's limit for that side) and the other shrinks to make room, as the
        user typing 64 into Block height beside a width of 32 expects 64, not the width's leftover."""
        keep = 1 if bx is None else 0  # the side the user set
        nbx, nby = settle_block((self.block[0] if bx is None else bx, self.block[1] if by is None else by),
                                self.backend, keep)
        if (nbx, nby) != self.block:
            self.block = (nbx, nby)
            self.changed.emit("block")

    def set_sphere_count(self, n: int, emit: bool = True) -> None:
        """A random scene of ``n`` spheres with the current seed (a loaded scene is replaced)."""
        n = max(1, min(int(n), self.max_spheres))
        if self.scene_is_random and n == self.scene.count:
            return
        self.scene, self.scene_is_random, self.scene_path = self.random_scene(n), True, ""
        if emit:
            self.changed.emit(SPHERES)

    def new_random_scene(self, seed: int | None = None) -> None:
        self.seed = int(seed) if seed is not None else (self.seed + 1) % 2**31
        self.scene, self.scene_is_random = self.random_scene(min(self.scene.count, self.max_spheres)), True
        self.scene_path = ""
        self.changed.emit(SPHERES)

    def set_scene(self, scene: Scene, path: str = "") -> None:
        """Show ``scene``; ``path`` is the file it came from (remembered across restarts)."""
        self.scene, self.scene_is_random, self.scene_path = scene, False, str(path or "")
        self.changed.emit(SPHERES)

    def set_memory(self, memory: str) -> None:
        """Switch memory; a scene larger than the new memory holds is clamped (random) or refused (loaded)."""
        if memory == self.memory:
            return
        cap = self.max_spheres_for(memory)
        if self.scene.count > cap:
            if not self.scene_is_random:
                self.message.emit(f"{memory} memory holds {cap:,} spheres and the loaded scene has "
                                  f"{self.scene.count:,}: kept {self.memory} memory ({self.limit_reason_for(memory)})")
                self.changed.emit(SPHERES)  # the widgets show the memory still in use
                return
            self.message.emit(f"{self.scene.count:,} spheres is more than {memory} memory holds: "
                              f"clamped to {cap:,} ({self.limit_reason_for(memory)})")
            self.memory = memory  # first, so the clamped scene is made for it
            self.scene = self.random_scene(cap)
        self.memory = memory
        self.changed.emit(SPHERES)

    def set_pattern(self, pattern: str) -> None:
        if pattern != self.pattern:
            self.pattern = pattern
            self.changed.emit(SPHERES)

    def set_julia(self, **changes) -> bool:
        """Replace JuliaParams fields (c, center, zoom, iterations, colormap); bad values are refused (False)."""
        params = replace(self.julia, **changes)
        try:
            params.checked()
        except InputError as exc:
            self.message.emit(str(exc))
            return False
        if params != self.julia:
            self.julia = params
            self._auto_precision()
            self.changed.emit(JULIA)
        return True

    def set_precision_mode(self, mode: str) -> None:
        """float32, float64, or auto (float64 once the zoom passes float32's resolution)."""
        if mode not in PRECISION_MODES:
            self.message.emit(f"precision {mode!r} is not one of {', '.join(PRECISION_MODES)}")
            return
        self.precision_mode = mode
        if mode != "auto":
            self.julia = replace(self.julia, precision=mode)
        self._auto_precision()
        self.changed.emit(JULIA)

    def _auto_precision(self) -> None:
        """In auto mode, the precision the view needs (precision_for); says so when it switches, and when
        the precision drawing the view no longer resolves it (float32 chosen by hand, or float64 past a
        zoom of about 1e13)."""
        w, h = self.effective_size(JULIA)
        if self.precision_mode == "auto":
            wanted = self.julia.precision_for(w, h)
            if wanted != self.julia.precision:
                self.julia = replace(self.julia, precision=wanted)
                self.message.emit(f"zoom {self.julia.zoom:.3g}: switched to float64, float32 no longer resolves "
                                  "neighbouring pixels" if wanted == "float64" else
                                  f"zoom {self.julia.zoom:.3g}: back to float32, which resolves this view")
        note = self.precision_note()
        short = self.julia.precision if note else ""  # said once when the view passes its precision's limit
        if short and short != self._precision_said:
            self.message.emit(note)
        self._precision_said = short

    def precision_note(self) -> str:
        """Why the Julia view is drawn coarser than its pixels ('' while its precision resolves them)."""
        from kernels.julia.params import FLOAT32_MIN_ULPS_PER_PIXEL

        w, h = self.effective_size(JULIA)
        j = self.julia
        if j.ulps_per_pixel(w, h, j.precision) >= FLOAT32_MIN_ULPS_PER_PIXEL:
            return ""
        if j.precision == "float64":
            return (f"zoom {j.zoom:.3g}: past float64's resolution (about 1e13): neighbouring pixels round to "
                    "the same point, so the detail breaks up into blocks")
        return (f"zoom {j.zoom:.3g}: past float32's resolution (about 1e4): the detail breaks up into blocks; "
                "Precision float64 or auto resolves it")

    def set_launch(self, launch: str) -> None:
        if launch != self.launch:
            self.launch = launch
            self.changed.emit(JULIA)

    # ------------------------------------------------------------------ any kind's params
    def set_params(self, kind: str, **changes) -> bool:
        """Replace fields of ``kind``'s params (a generated control, a drag or a wheel turn); a value the kind
        refuses is said (``message``) and nothing changes. The Julia set's go through set_julia."""
        if kind == JULIA:  # its precision follows the zoom in auto mode
            return self.set_julia(**changes)
        try:
            params = replace(self.params[kind], **changes).checked()
        except InputError as exc:
            self.message.emit(str(exc))
            return False
        if params != self.params[kind]:
            self.params[kind] = params
            self.changed.emit(kind)
        return True

    def pan(self, kind: str, dx: float, dy: float) -> None:
        """Drag ``kind``'s view by (dx, dy) image pixels: the picture follows the pointer."""
        w, h = self.effective_size(kind)
        self.set_params(kind, center=self.params[kind].panned(dx, dy, width=w, height=h).center)

    def zoom(self, kind: str, factor: float, px: float, py: float) -> None:
        """Zoom ``kind``'s view by ``factor`` about image pixel (px, py)."""
        w, h = self.effective_size(kind)
        z = self.params[kind].zoomed(factor, px, py, width=w, height=h)
        self.set_params(kind, zoom=z.zoom, center=z.center)

    def reset_view(self, kind: str) -> None:
        """``kind``'s view back to its default centre and zoom (a kind that pans and zooms)."""
        default = KINDS[kind].params()
        self.set_params(kind, center=default.center, zoom=default.zoom)

    def pan_julia(self, dx: float, dy: float) -> None:
        self.pan(JULIA, dx, dy)

    def zoom_julia(self, factor: float, px: float, py: float) -> None:
        self.zoom(JULIA, factor, px, py)

    def reset_julia_view(self) -> None:
        self.reset_view(JULIA)

    def apply_julia_preset(self, name: str) -> None:
        c, iterations, colormap, size = JULIA_PRESETS[name]
        if size:
            self.set_size(size, JULIA)
        self.set_julia(c=c, iterations=iterations, colormap=colormap, center=(0.0, 0.0), zoom=1.0)
