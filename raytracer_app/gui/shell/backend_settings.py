"""Settings kept per backend kind: what suits a CPU (2000 spheres, N = 100,000,000) must not carry over to
the CUDA simulator. Each kind saves under its own group; a kind seen for the first time starts from the
keys older versions shared (cpu, cuda) or from the simulator's own small defaults (sim)."""

from __future__ import annotations

from contextlib import contextmanager

from kernels.backend import choice
from raytracer_app.gui.render.model_settings import load_model, save_model

GROUP = "per_backend/{}"


class _Defaults:
    """A settings object with nothing in it: every read gives the caller's default."""

    def value(self, key, default=None, *args, **kwargs):
        return default


def has_group(settings, kind: str) -> bool:
    settings.beginGroup(GROUP.format(kind))
    try:
        return bool(settings.allKeys())
    finally:
        settings.endGroup()


@contextmanager
def reading(settings, kind: str):
    """The settings to read a backend kind's values from."""
    if has_group(settings, kind):
        settings.beginGroup(GROUP.format(kind))
        try:
            yield settings
        finally:
            settings.endGroup()
    else:
        yield _Defaults() if choice(kind).is_simulator else settings


@contextmanager
def writing(settings, kind: str):
    settings.beginGroup(GROUP.format(kind))
    try:
        yield settings
    finally:
        settings.endGroup()


class ModelStore:
    """A RenderModel's values kept per backend kind in ``settings``. The model reads and writes through it
    itself (RenderModel.restore, set_backend), before it says what changed."""

    def __init__(self, settings):
        self.settings = settings

    def save(self, kind: str, model) -> None:
        with writing(self.settings, kind) as s:
            save_model(s, model)

    def load(self, kind: str, model) -> None:
        """``kind``'s values into the model; the simulator seen for the first time starts small."""
        from raytracer_app.gui.common.sim_limits import SIM_DEFAULT_SIDE, SIM_DEFAULT_SPHERES

        first_time = not has_group(self.settings, kind)
        with reading(self.settings, kind) as s:
            load_model(s, model)
        if choice(kind).is_simulator and first_time:
            model.sizes = {tab: (SIM_DEFAULT_SIDE, SIM_DEFAULT_SIDE) for tab in model.sizes}
            if model.scene_is_random:
                model.set_sphere_count(SIM_DEFAULT_SPHERES, emit=False)


def load_panels(settings, kind: str, panels) -> None:
    """Read ``kind``'s values into the benchmark panels, then apply the simulator's caps (its own
    defaults the first time)."""
    first_time = not has_group(settings, kind)
    with reading(settings, kind) as s:
        for panel in panels:
            panel.load(s)
    for panel in panels:
        panel.apply_backend_caps(reset=first_time)


def save_panels(settings, kind: str, panels) -> None:
    with writing(settings, kind) as s:
        for panel in panels:
            panel.save(s)


def save(settings, kind: str, model, panels) -> None:
    """The model's and the panels' values under ``kind`` (closing the window)."""
    with writing(settings, kind) as s:
        save_model(s, model)
        for panel in panels:
            panel.save(s)
