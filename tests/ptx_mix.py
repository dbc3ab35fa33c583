"""PTX instruction counts per kind (opcode with its type suffixes) of a kernel: the measure by which a change
meant to leave numba-cuda's code alone is checked (tests/test_inspector.py).

``python -m tests.ptx_mix`` rewrites tests/data/ptx/numba-cuda-sm_90.json from a fresh sm_90 compile of every
declared kernel: run it only when a kernel's code is meant to change, and say why in the commit."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

RECORDED = Path(__file__).parent / "data" / "ptx" / "numba-cuda-sm_90.json"


def ptx_mix(ptx: str) -> dict[str, int]:
    counts: collections.Counter = collections.Counter()
    for line in ptx.splitlines():
        s = line.strip()
        if not s or s.startswith(("//", ".", "{", "}", "$")) or s.endswith(":"):
            continue  # comments, directives, braces, labels
        s = re.sub(r"^@!?%p\d+\s+", "", s)  # a predicate guard is not an instruction kind
        counts[s.split()[0].rstrip(";")] += 1
    return dict(sorted(counts.items()))


def main() -> None:
    from kernels.inspector.compiler import compile_kernels
    from kernels.inspector.declarations import all_declarations

    compiled = compile_kernels(list(all_declarations()), "sm_90", compiler="numba-cuda")
    RECORDED.write_text(json.dumps({f"{t}/{v}": ptx_mix(c.ptx) for (t, v), c in compiled.items()},
                                   indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
