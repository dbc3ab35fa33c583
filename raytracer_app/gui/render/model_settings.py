"""Which settings key holds which value of the render model (save_model, load_model), through the one
typed reader of common/settings.py. No widgets here."""

from __future__ import annotations

from dataclasses import replace

from PyQt6.QtCore import QSettings

from kernels.errors import InputError
from raytracer_app.gui.common.settings import Keys, read


def save_model(s: QSettings, model) -> None:
    """Write a RenderModel's values (what load_model reads back)."""
    s.setValue(Keys.TAB, model.tab)
    for tab, (w, h) in model.sizes.items():
        s.setValue(Keys.SIZE.format(tab), f"{w}x{h}")
    s.setValue(Keys.BLOCK_X, model.block[0])
    s.setValue(Keys.BLOCK_Y, model.block[1])
    s.setValue(Keys.COUNT, model.scene.count)
    s.setValue(Keys.SEED, model.seed)
    s.setValue(Keys.MEMORY, model.memory)
    s.setValue(Keys.PATTERN, model.pattern)
    s.setValue(Keys.C_RE, model.julia.c.real)
    s.setValue(Keys.C_IM, model.julia.c.imag)
    s.setValue(Keys.ITERATIONS, model.julia.iterations)
    s.setValue(Keys.COLORMAP, model.julia.colormap)
    s.setValue(Keys.LAUNCH, model.launch)
    s.setValue(Keys.PRECISION, model.precision_mode)
    s.setValue(Keys.SCENE_FILE, "" if model.scene_is_random else model.scene_path)
    from raytracer_app.gui.render.models import HAND_BUILT, KINDS

    for kind, renderable in KINDS.items():  # a generated kind's controls, each as the text its control parses
        if kind not in HAND_BUILT:
            for c in renderable.controls:
                if c.window:
                    value = getattr(model.params[kind], c.name)
                    s.setValue(Keys.PARAM.format(kind, c.name), ",".join(map(repr, value)) if c.kind == "point"
                               else repr(value) if c.kind in ("int", "float") else str(value))


def load_model(s: QSettings, model) -> None:
    """Restore a RenderModel's saved values; anything unreadable keeps its default. Emits nothing: the
    model's own callers say what changed (see RenderModel.load)."""
    from kernels.harness.frames import parse_size
    from kernels.julia import COLORMAPS, LAUNCHES, JuliaParams
    from kernels.service.requests import settle_block
    from kernels.spheres.scene import MEMORIES
    from kernels.spheres.layout import PATTERNS
    from raytracer_app.gui.render.models import HAND_BUILT, KINDS, PRECISION_MODES, TABS

    tab = read(s, Keys.TAB, model.tab)
    model.tab = tab if tab in TABS else model.tab
    for t in TABS:
        try:
            model.sizes[t] = parse_size(read(s, Keys.SIZE.format(t), "{}x{}".format(*model.sizes[t])))
        except InputError:
            pass
    model.block = settle_block((read(s, Keys.BLOCK_X, 16, int), read(s, Keys.BLOCK_Y, 16, int)), model.backend)
    model.seed = read(s, Keys.SEED, 0, int, 0, 2**31 - 1)
    memory = read(s, Keys.MEMORY, "global")
    model.memory = memory if memory in MEMORIES else "global"
    count = read(s, Keys.COUNT, 20, int, 1, model.max_spheres)
    model.scene, model.scene_is_random, model.scene_path = model.random_scene(count), True, ""
    model.load_note = ""
    path = read(s, Keys.SCENE_FILE, "", str)
    if path:  # the scene file in use last time; if it is gone, say so and keep the random scene
        from kernels.spheres.scene import load_scene

        try:
            model.scene, model.scene_is_random, model.scene_path = load_scene(path, model.max_spheres), False, path
        except InputError as exc:
            model.load_note = f"the last scene could not be reloaded: {exc}; showing a random scene"
    memory, pattern = read(s, Keys.MEMORY, "global"), read(s, Keys.PATTERN, "uniform")
    model.memory = memory if memory in MEMORIES else "global"
    model.pattern = pattern if pattern in PATTERNS else "uniform"
    colormap, launch = read(s, Keys.COLORMAP, "classic"), read(s, Keys.LAUNCH, "2d")
    params = JuliaParams(c=complex(read(s, Keys.C_RE, -0.8, float), read(s, Keys.C_IM, 0.156, float)),
                         iterations=read(s, Keys.ITERATIONS, 200, int),
                         colormap=colormap if colormap in COLORMAPS else "classic")
    try:
        model.julia = params.checked()
    except (InputError, ValueError, TypeError, OverflowError):
        pass
    model.launch = launch if launch in LAUNCHES else "2d"
    mode = read(s, Keys.PRECISION, "auto")
    model.precision_mode = mode if mode in PRECISION_MODES else "auto"
    if mode in ("float32", "float64"):
        model.julia = replace(model.julia, precision=mode)
    for kind, renderable in KINDS.items():  # a generated kind's controls: a value it refuses keeps the default
        if kind in HAND_BUILT:
            continue
        params = model.params[kind]
        for c in renderable.controls:
            text = read(s, Keys.PARAM.format(kind, c.name), "", str) if c.window else ""
            try:
                params = replace(params, **{c.name: c.parse(text)}).checked() if text else params
            except (InputError, ValueError, TypeError, OverflowError):
                pass
        model.params[kind] = params
