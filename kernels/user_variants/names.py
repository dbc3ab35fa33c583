"""The one rule for a variant file's NAME: what the loader accepts is what `variant new --name` writes."""

from __future__ import annotations

import re

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,47}")
NAME_RULE = "a short name of letters, digits and - _ . + (no spaces or commas), at most 48 characters"


def name_problem(name, target: str) -> str | None:
    """Why ``name`` cannot be a user variant of ``target`` (None when it can), in words that follow the
    name: the NAME rule, no name the variant selector reserves, and no built-in variant of ``target`` of that
    name."""
    from kernels.harness.variants import RESERVED_NAMES
    from kernels.registry import by_name

    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        return f"is not {NAME_RULE}"
    if name in RESERVED_NAMES:
        return f"is reserved: --variants {name} means every variant; give yours another name"
    if name in {v.name for v in by_name(target).variants}:
        return f"is a built-in {target} variant; give yours another name"
    return None
