"""The rooms hold: compute knows nothing of the app, app state knows nothing of widgets, nothing but the
backend module asks a backend which kind it is by name, no module imports another that imports it back
(counting imports inside functions), and every algorithm package keeps numba out of its declarations.
(The floors and the absence of circles are import-linter contracts in pyproject.toml, which
test_the_import_contracts_hold runs.)"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNELS = sorted((ROOT / "kernels").rglob("*.py"))
APP = sorted((ROOT / "raytracer_app").rglob("*.py"))
# the GUI's models and state: listened to by widgets, never holding one
GUI_STATE = [ROOT / "raytracer_app" / "gui" / f for f in
             ("render/models.py", "render/model_settings.py", "common/settings.py", "shell/timing_log.py",
              "benchmarks/algorithms.py", "shell/backend_settings.py", "common/sim_limits.py",
              "common/file_dialogs.py", "editor/files.py", "common/reference_results.py",
              "lessons/references.py", "lessons/pictures.py", "shell/display.py", "shell/restart.py",
              "common/access_listing.py")]
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


def test_the_contracts_would_catch_a_package_given_no_floor(tmp_path, monkeypatch):
    """The layers are exhaustive: a new package under a container (a new algorithm) must be placed."""
    from importlinter.cli import lint_imports

    package = tmp_path / "house"
    for name in ("high", "low", "new"):
        (package / name).mkdir(parents=True)
        (package / name / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    config = tmp_path / "contracts.toml"
    config.write_text('[tool.importlinter]\nroot_packages = ["house"]\n\n'
                      '[[tool.importlinter.contracts]]\nname = "floors"\ntype = "layers"\ncontainers = ["house"]\n'
                      'exhaustive = true\nlayers = ["high", "low"]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert lint_imports(config_filename=str(config), no_cache=True, no_logo=True) == 1


# --- the linter: ruff with pyproject.toml's rules -----------------------------------------------------------


def test_ruff_finds_nothing():
    """pyflakes, pycodestyle's errors and bugbear over the project; every `# noqa` names a selected rule that
    it suppresses (RUF100)."""
    import subprocess

    from ruff.__main__ import find_ruff_bin

    done = subprocess.run([find_ruff_bin(), "check", "--no-cache", "--quiet", "."], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


NOQA = re.compile(r"#\s*noqa:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


def test_every_noqa_names_a_rule_ruff_knows():
    """RUF100 flags a known rule that is not selected or suppresses nothing, PGH004 a blanket `# noqa`; a code
    ruff does not know at all (a typo, another linter's) it passes over, so it is checked here."""
    import json
    import subprocess

    from ruff.__main__ import find_ruff_bin

    known = {r["code"] for r in json.loads(subprocess.run([find_ruff_bin(), "rule", "--all", "--output-format",
                                                           "json"], capture_output=True, text=True).stdout)}
    unknown = {}
    for path in KERNELS + APP + SCRIPTS + sorted((ROOT / "tests").glob("*.py")):
        for code in (c.strip() for m in NOQA.finditer(path.read_text()) for c in m.group(1).split(",")):
            if code not in known:
                unknown.setdefault(rel(path), []).append(code)
    assert len(known) > 500 and not unknown, unknown


def test_ruff_would_catch_a_loop_variable_in_a_closure(tmp_path):
    import subprocess

    from ruff.__main__ import find_ruff_bin

    bad = tmp_path / "bad.py"
    bad.write_text("fs = []\nfor i in range(3):\n    fs.append(lambda: i)\n")
    done = subprocess.run([find_ruff_bin(), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"),
                           str(bad)], capture_output=True, text=True)
    assert done.returncode == 1 and "B023" in done.stdout


# --- kernels compile lazily ---------------------------------------------------------------------------------


def _is_cuda_jit(func) -> bool:
    return ast.unparse(func) in ("cuda.jit", "numba.cuda.jit")


def _eager_kernels(path: Path) -> list[int]:
    """Lines where importing the module would compile a kernel: a `cuda.jit` given a signature (a text, a
    types call, a list of them, or a name that is no function of the module) outside any function body."""
    tree = ast.parse(path.read_text(), str(path))
    functions = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    lines = []

    def signature(arg) -> bool:
        return not (isinstance(arg, ast.Name) and arg.id in functions) and not isinstance(arg, ast.Lambda)

    def visit(node) -> None:
        if isinstance(node, ast.Call) and _is_cuda_jit(node.func) and node.args and signature(node.args[0]):
            lines.append(node.lineno)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:  # run at import; the body runs when called
                visit(d)
            return
        if isinstance(node, ast.Lambda):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return sorted(lines)


@pytest.mark.parametrize("path", KERNELS, ids=rel)
def test_kernels_compile_lazily(path):
    """No kernel is compiled when its module is imported: `cuda.jit` without a signature (numba compiles at
    the first launch, for its argument types), or with one only inside a function run when the kernel is
    needed. An eager `@cuda.jit("void(...)")` at import would need a GPU (or NVVM) to import the module, and
    `inspect` without a GPU, the CPU backend and the window's start would break (docs/architecture.md)."""
    assert not _eager_kernels(path), f"{rel(path)} lines {_eager_kernels(path)} compile a kernel at import"


def test_the_lazy_kernel_check_would_catch_an_eager_signature(tmp_path):
    bad = tmp_path / "eager.py"
    bad.write_text("from numba import cuda\n\n"
                   "@cuda.jit('void(int32[::1])')\ndef k(a):\n    pass\n\n"  # line 3: eager
                   "@cuda.jit\ndef lazy(a):\n    pass\n\n"
                   "@cuda.jit(device=True)\ndef helper(a):\n    return a\n\n"
                   "copy = cuda.jit(lazy)\n"
                   "eager = cuda.jit(SIG)(lazy)\n"  # line 16: a signature by name
                   "def made_when_needed():\n    return cuda.jit('void()')(lazy)\n")
    assert _eager_kernels(bad) == [3, 16]
