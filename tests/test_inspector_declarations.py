"""The inspector's look-up of what a GPU variant compiles says what is missing: an algorithm whose GPU variants
declare no inspector entry (as a new algorithm's first draft), a variant that is host code, a name it lacks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kernels.errors import InputError
from kernels.inspector import declarations
from kernels.registry import ALGORITHMS, by_name


@pytest.fixture
def scan(monkeypatch):
    """A registry with 'scan': the reduction's variants under another name, none with an inspector entry."""
    reduction = by_name("reduction")
    draft = replace(reduction, name="scan", variants=tuple(replace(v, inspect=None) for v in reduction.variants))
    monkeypatch.setattr(declarations, "ALGORITHMS", (*ALGORITHMS, draft))
    return draft


def test_gpu_variants_without_an_entry_are_named_with_what_they_need(scan):
    gpu = [v.name for v in scan.variants if v.kind == "gpu"]
    with pytest.raises(InputError) as info:
        declarations.variants("scan")
    text = str(info.value)
    assert text.startswith(f"scan's GPU variants ({', '.join(gpu)}) declare no inspector entry")
    assert "inspect=KernelDecl(...)" in text and "unknown target" not in text and "\n" not in text
    assert "scan" not in declarations.targets()


def test_a_variant_without_an_entry_host_code_and_a_missing_name_are_told_apart(monkeypatch):
    reduction = by_name("reduction")
    bare = replace(reduction, variants=tuple(replace(v, inspect=None) if v.name == "best" else v
                                             for v in reduction.variants))
    monkeypatch.setattr(declarations, "ALGORITHMS", tuple(bare if a is reduction else a for a in ALGORITHMS))
    with pytest.raises(InputError, match="reduction's GPU variant 'best' declares no inspector entry"):
        declarations.declaration("reduction", "best")
    with pytest.raises(InputError, match="reduction's variant 'numpy' is not a GPU kernel"):
        declarations.declaration("reduction", "numpy")
    with pytest.raises(InputError, match="reduction has no GPU variant 'fastest' to inspect; known: "):
        declarations.declaration("reduction", "fastest")
    with pytest.raises(InputError, match="unknown target 'nothing'; inspectable targets: reduction"):
        declarations.variants("nothing")
