"""The documentation stays true: the README's variants table lists exactly each algorithm's variants (read
from the descriptors), and every command and option of the CLI is documented in docs/cli.md."""

import argparse
import re
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
