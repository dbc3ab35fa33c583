"""The rooms hold: compute knows nothing of the app, app state knows nothing of widgets, nothing but the
backend module asks a backend which kind it is by name, no module imports another that imports it back
(counting imports inside functions), and every algorithm package keeps numba out of its declarations.
(The floors and the absence of circles are import-linter contracts in pyproject.toml, which
test_the_import_contracts_hold runs.)"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNELS = sorted((ROOT / "kernels").rglob("*.py"))
APP = sorted((ROOT / "raytracer_app").rglob("*.py"))
# the GUI's models and state: listened to by widgets, never holding one
GUI_STATE = [ROOT / "raytracer_app" / "gui" / f for f in
             ("render/models.py", "render/model_settings.py", "common/settings.py", "shell/timing_log.py",
              "benchmarks/algorithms.py", "shell/backend_settings.py", "common/sim_limits.py",
              "common/file_dialogs.py", "editor/files.py", "benchmarks/reference_results.py",
              "lessons/references.py", "lessons/pictures.py", "shell/display.py", "shell/restart.py",
              "access/listing.py")]
BACKEND_KINDS = {"cuda", "cpu", "sim"}


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", KERNELS, ids=rel)
def test_kernels_import_neither_qt_nor_the_app(path):
    bad = {m for m in imported_modules(path) if m.split(".")[0] in ("PyQt6", "PySide6", "pyqtgraph", "raytracer_app")}
    assert not bad, f"{rel(path)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", [p for p in GUI_STATE if p.exists()], ids=rel)
def test_gui_state_knows_no_widgets(path):
    bad = {m for m in imported_modules(path) if m in ("PyQt6.QtWidgets", "PyQt6.QtGui") or m.startswith("pyqtgraph")}
    assert not bad, f"{rel(path)} imports {sorted(bad)}"


def test_the_widget_free_modules_are_all_there():
    assert [rel(p) for p in GUI_STATE if not p.exists()] == []


def _kind_comparisons(path: Path) -> list[int]:
    """Lines comparing a backend's ``.kind`` (or a ``backend_kind`` name) with 'cuda', 'cpu' or 'sim'."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        kinds = any((isinstance(s, ast.Attribute) and s.attr == "kind" and "backend" in ast.unparse(s.value))
                    or (isinstance(s, ast.Name) and s.id == "backend_kind") for s in sides)
        literal = any(isinstance(s, ast.Constant) and s.value in BACKEND_KINDS for s in sides)
        if kinds and literal:
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", [p for p in KERNELS + APP if p != ROOT / "kernels" / "backend" / "__init__.py"],
                         ids=rel)
def test_only_the_backend_module_compares_backend_kinds_to_names(path):
    assert not _kind_comparisons(path), f"{rel(path)} lines {_kind_comparisons(path)}: ask the backend object instead"


SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))
# the backend module spells the backend names; the variants module owns the variant kinds ('gpu', 'cpu', 'peer')
NAME_OWNERS = {ROOT / "kernels" / "backend" / "__init__.py", ROOT / "kernels" / "harness" / "variants.py"}


def _strings(node) -> set:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _name_comparisons(path: Path) -> list[int]:
    """Lines comparing anything with 'cuda', 'cpu' or 'sim' (alone or in a tuple, list or set), or a backend
    name with 'auto' (which is also a precision mode): a backend choice answers is_gpu, is_auto, ... instead."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        literals = set().union(*map(_strings, sides))
        others = " ".join(ast.unparse(s) for s in sides if not _strings(s))
        if literals & BACKEND_KINDS or ("auto" in literals and "backend" in others):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", [p for p in KERNELS + APP + SCRIPTS if p not in NAME_OWNERS], ids=rel)
def test_only_the_backend_module_compares_backend_names(path):
    assert not _name_comparisons(path), (f"{rel(path)} lines {_name_comparisons(path)}: ask the backend or "
                                         "kernels.backend.choice(name) instead")


def test_the_checks_would_catch_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from PyQt6.QtWidgets import QWidget\nif self.backend.kind == 'sim':\n    pass\n")
    assert "PyQt6.QtWidgets" in imported_modules(bad) and _kind_comparisons(bad) == [2]


def test_the_name_check_would_catch_a_violation(tmp_path):
    named = tmp_path / "named.py"
    named.write_text("if name in ('auto', 'cuda'):\n    pass\nif backend_name == 'auto':\n    pass\n"
                     "if choice.name != 'sim':\n    pass\nif mode != 'auto':\n    pass\n")
    assert sorted(_name_comparisons(named)) == [1, 3, 5]  # a precision mode may still be 'auto'


# --- the floors and no circles: import-linter's contracts in pyproject.toml --------------------------------


def test_the_import_contracts_hold(capsys):
    """`lint-imports` on pyproject.toml's contracts (imports inside functions count): kernels know nothing of
    the app or Qt, every package stays on its floor, and no module imports one that imports it back."""
    from importlinter.cli import lint_imports

    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert code == 0, capsys.readouterr().out


def test_the_contracts_would_catch_a_climb_and_a_circle(tmp_path, monkeypatch, capsys):
    from importlinter.cli import lint_imports

    package = tmp_path / "floors"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from floors import high\n")  # inside a function
    (package / "high.py").write_text("from floors import low\n")
    config = tmp_path / "contracts.toml"
    config.write_text('[tool.importlinter]\nroot_packages = ["floors"]\n\n'
                      '[[tool.importlinter.contracts]]\nname = "floors"\ntype = "layers"\n'
                      'layers = ["floors.high", "floors.low"]\n\n'
                      '[[tool.importlinter.contracts]]\nname = "circles"\ntype = "acyclic_siblings"\n'
                      'ancestors = ["floors"]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert lint_imports(config_filename=str(config), no_cache=True, no_logo=True) == 1
    out = capsys.readouterr().out
    assert "floors.low is not allowed to import floors.high" in out and "Contracts: 0 kept, 2 broken" in out


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in KERNELS + APP}


def import_edges(path: Path) -> set[str]:
    """The project's modules ``path`` imports anywhere in it (``from a import b`` counts a.b when b is a
    module, else a)."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for a in node.names:
                found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base)
    return {m for m in found if m in MODULES and m != here}


# --- the algorithm packages ------------------------------------------------------------------------------------

ALGORITHM_PACKAGES = sorted(p.parent for p in (ROOT / "kernels").glob("*/__init__.py")
                            if "ALGORITHM = Algorithm(" in p.read_text())


def test_every_registered_algorithm_is_a_package():
    from kernels.registry import ALGORITHMS

    assert sorted(p.name for p in ALGORITHM_PACKAGES) == sorted(a.name for a in ALGORITHMS)


@pytest.mark.parametrize("package", ALGORITHM_PACKAGES, ids=lambda p: p.name)
def test_an_algorithm_package_declares_without_numba_and_keeps_its_kernels_apart(package):
    init = package / "__init__.py"
    assert not {m for m in imported_modules(init) if m.split(".")[0] == "numba"}, f"{rel(init)} imports numba"
    gpu_modules = [p for p in package.glob("*.py") if "@cuda.jit" in p.read_text() or "cuda.jit(" in p.read_text()]
    assert gpu_modules, f"{package.name} has no CUDA kernels"
    for path in gpu_modules:
        # the compiler seam's cuda (kernels/backend/compiler.py), never numba's directly: one setting picks the compiler
        assert "from kernels.backend.compiler import cuda" in path.read_text().split("\n\n\n")[0], \
            f"{rel(path)} must begin with it"


def test_targets_come_from_the_registry_only():
    """No module keeps its own list of algorithm names (the CLI, the GUI and the inspector read the registry)."""
    names = {"reduction", "histogram", "hashtable", "spheres", "julia"}
    for path in KERNELS + APP:
        if path == ROOT / "kernels" / "registry.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(_strings(node) & names) >= 3:
                pytest.fail(f"{rel(path)}:{node.lineno} lists algorithm names; read kernels.registry instead")


@pytest.mark.slow
def test_only_child_processes_run_a_users_variant_file():
    """A user's file is executed by kernels/user_variants/child_side.py alone (the user-variant child, the
    inspector's compiler child and the access trace's simulator child call it): nothing in the app's process
    runs one (docs/user-variants.md)."""
    runner = ROOT / "kernels" / "user_variants" / "child_side.py"
    # the user-variant child names child_side as its job; these two import it
    callers = {ROOT / "kernels" / "inspector" / "offline_compile.py", ROOT / "kernels" / "access" / "job.py"}
    for path in KERNELS + APP:
        tree = ast.parse(path.read_text(), str(path))
        calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        if path != runner:
            assert "exec" not in calls, f"{rel(path)} calls exec"
        if path != runner and "kernels.user_variants.child_side" in import_edges(path):
            assert path in callers, f"{rel(path)} reaches the child side of user variant files"
