"""Settings kept per backend kind: what suits a CPU (2000 spheres, N = 100,000,000) must not carry over to
the CUDA simulator. Each kind saves under its own group; a kind seen for the first time starts from the
keys older versions shared (cpu, cuda) or from the simulator's own small defaults (sim)."""

from __future__ import annotations

from contextlib import contextmanager

from kernels.backend import choice
from raytracer_app.gui.settings import load_model, save_model

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


def load(settings, kind: str, model, panels) -> None:
    """Read ``kind``'s values into the model and the benchmark panels, then apply the simulator's caps."""
    from raytracer_app.gui.sim_limits import SIM_DEFAULT_SIDE, SIM_DEFAULT_SPHERES

    first_time = not has_group(settings, kind)
    with reading(settings, kind) as s:
        load_model(s, model)
        for panel in panels:
            panel.load(s)
    if choice(kind).is_simulator and first_time:
        model.sizes = {tab: (SIM_DEFAULT_SIDE, SIM_DEFAULT_SIDE) for tab in model.sizes}
        if model.scene_is_random:
            model.set_sphere_count(SIM_DEFAULT_SPHERES, emit=False)
    for panel in panels:
        panel.apply_backend_caps(reset=first_time)


def save(settings, kind: str, model, panels) -> None:
    with writing(settings, kind) as s:
        save_model(s, model)
        for panel in panels:
            panel.save(s)
