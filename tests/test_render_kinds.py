"""Render kinds are packages and registry lines (kernels/harness/renderable.py): no module outside a render
package names a kind, every kind's descriptor is whole, and the CLI and the window are made from it."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import pytest

from kernels.errors import InputError
from kernels.registry import RENDER_PACKAGES, RENDERABLES

ROOT = Path(__file__).resolve().parents[1]
# the one exception, with its reason: old result files carry the ray tracer's first target name, and reading
# them (kernels/harness, below the algorithms) maps it to the name it has now
NAMED_BY_A_FILE_FORMAT = {"kernels/harness/results_read.py"}


def _string_literals(path: Path):
    """(line, value) of every plain string literal of a module (comments and docstrings' words are not names)."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for tok in tokens:
        if tok.type == tokenize.STRING and tok.string[:1] in "'\"":
            yield tok.start[0], tok.string[1:-1]


def test_no_module_outside_a_render_package_names_a_render_kind():
    kinds = {r.name for r in RENDERABLES}
    packages = [ROOT / p.replace(".", "/") for p in RENDER_PACKAGES]
    found = []
    for top in ("kernels", "raytracer_app"):
        for path in sorted((ROOT / top).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            if any(path.is_relative_to(p) for p in packages) or where in NAMED_BY_A_FILE_FORMAT:
                continue
            found += [f"{where}:{line}: {value!r}" for line, value in _string_literals(path) if value in kinds]
    assert not found, "render kinds named outside their packages (read them from kernels.registry):\n" + "\n".join(found)


@pytest.mark.parametrize("kind", RENDERABLES, ids=lambda r: r.name)
def test_each_render_kind_declares_what_the_service_and_the_window_read(kind):
    from kernels.backend import Backend
    from kernels.registry import by_name

    assert by_name(kind.name).name == kind.name  # a render kind is a benchmark target too
    params = kind.params().checked()
    module = kind.module()
    assert callable(getattr(kind.renderer(Backend("cpu")), "start_request", None))
    for hook in ("checked", "launch_block", "renderer", "preview", "gpu_kernel_key", "compile_gpu_kernel",
                 "tiny", "row", "variant", "QUICK_TWIN", "DEFAULT_TWIN", "TWIN_FUNCTIONS"):
        assert hasattr(module, hook), f"{kind.kind_module} lacks {hook}"
    assert kind.quick_twin in module.TWIN_FUNCTIONS and kind.default_twin in module.TWIN_FUNCTIONS
    assert kind.checked(params, Backend("cpu"), {}) is params
    names = {c.name for c in kind.controls}
    assert len(names) == len(kind.controls)
    assert kind.launch_block(params, (8, 4)) in ((8, 4), (1, 1))


def test_a_control_parses_text_and_names_its_flag():
    from kernels.harness.renderable import Control

    assert Control("zoom_level", "Zoom", "float", 1.0, 0.5, 10).flag == "--zoom-level"
    assert Control("n", "N", "int", 1, 1, 9).parse("7") == 7
    assert Control("c", "c", "point").parse("-0.5,0.25") == (-0.5, 0.25)
    with pytest.raises(InputError, match="--z 20.0 is out of range; allowed 0.5..10"):
        Control("z", "Z", "float", 1.0, 0.5, 10).parse("20")
    with pytest.raises(InputError, match="--c '1;2' is malformed; use X,Y"):
        Control("c", "c", "point").parse("1;2")
    with pytest.raises(InputError, match="--n 'x' is not a whole number"):
        Control("n", "N", "int", 1, 1, 9).parse("x")
    with pytest.raises(InputError, match="control kind 'slider' is not one of"):
        Control("n", "N", "slider")


def test_every_render_kind_is_a_cli_target_with_its_controls_as_options(capsys):
    from raytracer_app.cli import main

    for kind in RENDERABLES:
        with pytest.raises(SystemExit):
            main(["render", kind.name, "--help"])
        text = capsys.readouterr().out
        for control in kind.controls:
            assert control.flag in text, (kind.name, control.flag)


def test_an_unknown_render_kind_is_one_line():
    from kernels.registry import renderable_named

    with pytest.raises(InputError, match="render kind 'teapot' is not one of " + ", ".join(r.name for r in RENDERABLES)):
        renderable_named("teapot")
