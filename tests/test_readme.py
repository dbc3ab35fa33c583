"""The documentation stays true: the README's variants table lists exactly each algorithm's variants (read
from the descriptors), every command and option of the CLI is documented in docs/cli.md, and the examples
the README and docs/ show run and print what they show."""

import argparse
import doctest
import re
import shlex
import textwrap
from pathlib import Path

import pytest

from kernels.registry import ALGORITHMS
from raytracer_app.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
CLI_DOC = (ROOT / "docs" / "cli.md").read_text()


def variants_table() -> dict[str, set[str]]:
    rows = {}
    table = README[README.index("| target | variants |"):]
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        target, names = line.strip("|").split("|", 1)
        rows[target.strip()] = set(re.findall(r"`([a-z0-9][a-z0-9-]*)`", names))
    return rows


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=lambda a: a.name)
def test_variants_table_lists_exactly_the_registry(algorithm):
    assert variants_table()[algorithm.name] == {v.name for v in algorithm.variants}


def _commands(parser, path=()):
    """(command path, parser) for every command and subcommand."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def test_every_command_and_option_is_in_the_cli_doc():
    missing = []
    for path, parser in _commands(build_parser()):
        if path and f"`raytracer-app {path[0]}" not in CLI_DOC:
            missing.append(" ".join(path))
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help" and f"`{flag}" not in CLI_DOC:
                    missing.append(f"{' '.join(path)} {flag}")
    assert not missing, f"not documented in docs/cli.md: {sorted(set(missing))}"


# The examples the documentation shows run here, so what they print cannot go stale (issue 20).

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.S | re.M)
_DECIMAL = re.compile(r"\d+\.\d+")


def fenced(kind: str, paths=DOCS) -> list[tuple[str, str]]:
    """(where, text) of every fenced block of ``kind`` in ``paths``, dedented."""
    return [(f"{path.name}:{path.read_text()[:m.start()].count(chr(10)) + 1}", textwrap.dedent(m.group(3)))
            for path in paths for m in _FENCE.finditer(path.read_text()) if m.group(2) == kind]


class _Checker(doctest.OutputChecker):
    """Whole numbers and text must match; a decimal number shown (a timing) matches any number."""

    def check_output(self, want, got, optionflags):
        if super().check_output(want, got, optionflags):
            return True
        parts = _DECIMAL.split(" ".join(want.split()))
        pattern = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?".join(map(re.escape, parts))
        return re.fullmatch(pattern, " ".join(got.split())) is not None


# an example that compiles with the inspector takes seconds: the quick loop (-m "not slow") leaves it out
@pytest.mark.parametrize("where,text", [
    pytest.param(*block, id=block[0], marks=[pytest.mark.slow] * ("kernels.inspector" in block[1]))
    for block in fenced("pycon")])
def test_python_examples_print_what_the_docs_show(where, text):
    if "kernels.inspector" in text:
        from kernels.inspector import toolchain

        if toolchain.missing():
            pytest.skip(f"the compiler packages are not installed ({toolchain.EXTRA_HINT})")
    test = doctest.DocTestParser().get_doctest(text, {}, where, where, 0)
    out = []
    runner = doctest.DocTestRunner(checker=_Checker(), optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=out.append)
    assert runner.failures == 0 and test.examples, "".join(out)


def test_the_float_checker_still_compares_whole_numbers():
    checker = _Checker()
    assert checker.check_output("(25, 64)\n", "(25, 64)\n", 0)
    assert not checker.check_output("(40, 64)\n", "(25, 64)\n", 0)
    assert checker.check_output("median 3.341 ms (n=10)\n", "median 12.5 ms (n=10)\n", 0)
    assert not checker.check_output("median 3.341 ms (n=10)\n", "median 12.5 ms (n=9)\n", 0)


def _cli_blocks() -> list[list[str]]:
    """The README's shell blocks as their `raytracer-app ...` lines, in order (a block's lines may build
    on each other: `variant new` writes the file the next line benches). docs/measurements.md's are
    GPU-sized runs: not here."""
    blocks = [[line.split("#")[0].strip() for line in text.splitlines() if line.startswith("raytracer-app ")]
              for _, text in fenced("sh", [ROOT / "README.md"])]
    return [b for b in blocks if b]


def _cli_examples() -> list[str]:
    return [line for block in _cli_blocks() for line in block]


def test_the_readme_shows_cli_examples():
    assert "raytracer-app inspect reduction best" in _cli_examples()


def _slow_if_it_compiles(block: list[str]):
    """A block that inspects (a real compile) or runs a variant file (its child process) is slow."""
    slow = any(line.split()[1] == "inspect" or "--variant-file" in line for line in block)
    return pytest.param(block, marks=pytest.mark.slow) if slow else block


@pytest.mark.parametrize("block", [_slow_if_it_compiles(b) for b in _cli_blocks()], ids=lambda b: b[0])
def test_cli_examples_in_the_docs_run(block, tmp_path, monkeypatch, capsys):
    """Each `raytracer-app ...` line of the README's shell blocks runs (on whatever this machine
    has: the CPU backend without a GPU) and exits 0, a block's lines in order in one temporary folder.
    They run through the function the `raytracer-app` script calls, in this process: what a new
    interpreter adds (the start, the backend chosen before numba loads) tests/test_startup.py and
    tests/test_cli_render.py test."""
    from raytracer_app.cli import main

    monkeypatch.chdir(tmp_path)
    for line in block:
        argv = shlex.split(line)[1:]
        if argv[0] == "lesson":  # about a minute on the CPU: tests/test_lessons.py runs this very command
            pytest.skip("the lesson CLI on the CPU runs in tests/test_lessons.py (its slow CLI test)")
        if argv[0] == "inspect":
            from kernels.inspector import toolchain

            if toolchain.missing():
                pytest.skip(f"the compiler packages are not installed ({toolchain.EXTRA_HINT})")
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 0, (line, err)
        assert out.strip(), line
