"""`raytracer-app bench TARGET ... --compiler numba-cuda,numba-cuda-mlir`: every row under each compiler, then
the rows side by side with `compare`'s verdicts (the first compiler the base).

A process compiles its kernels with one compiler (kernels/backend/compiler.py), so each compiler's run is
the same command in a fresh process with ``--compiler NAME --json FILE``; its table is printed as it runs,
and the result files are then compared row by row. A row that fails verification under one compiler is a
FAILED row in that compiler's table and is named, not timed, in the comparison: the same source, verified
under the other compiler, gives a wrong result under this one."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from kernels.errors import InputError

# options whose value the side-by-side run sets itself for each child, or that write one run's output
_OWN = ("--compiler", "--json", "--csv")


def child_argv(argv: list[str], compiler: str, json_path: str) -> list[str]:
    """The bench command line for one compiler: ``argv`` (the command's own words, without the program) less
    --compiler, with that compiler and a result file."""
    out, skip = [], False
    for word in argv:
        if skip:
            skip = False
            continue
        if word in _OWN:
            skip = True
            continue
        if any(word.startswith(option + "=") for option in _OWN):
            continue
        out.append(word)
    return out + ["--compiler", compiler, "--json", json_path]


def run(args, compilers: list[str], backend) -> int:
    """Each compiler's run in its own process, then the comparison; status 1 when a run failed verification
    or raised, 2 when one refused its input."""
    if not backend.is_gpu:  # the CPU twins are numba's, and the simulator is numba-cuda's: one compiler each
        raise InputError(f"--compiler {','.join(compilers)} compares the CUDA kernels on a GPU; the {backend.kind} "
                         f"backend has one compiler (give one --compiler, or --backend cuda on a GPU)")
    if getattr(args, "csv", None) or getattr(args, "json", None):
        raise InputError("--csv and --json write one compiler's run: give them with one --compiler (the side by "
                         "side run compares the compilers' result files itself)")
    if getattr(args, "counters", False) or getattr(args, "list", False):
        raise InputError("--counters and --list apply to one compiler: give them with one --compiler")
    if getattr(args, "variant_file", None):
        raise InputError("--variant-file: a variant file is numba-cuda code, refused under numba-cuda-mlir; give "
                         "it with --compiler numba-cuda")
    from kernels.harness import compare, compare_report
    from kernels.harness.results_read import read_result

    status = 0
    with tempfile.TemporaryDirectory(prefix="raytracer-compilers-") as folder:
        paths = {}
        for name in compilers:
            paths[name] = os.path.join(folder, f"{name}.json")
            print(f"== under {name}", flush=True)
            command = [sys.executable, "-m", "raytracer_app", *child_argv(args.argv[1:], name, paths[name])]
            code = subprocess.run(command).returncode  # its table and its errors go straight to the terminal
            if code == 2:
                return 2  # the child said why in one line
            if code not in (0, 1) or not os.path.exists(paths[name]):
                print(f"raytracer-app: the run under {name} ended with status {code}", file=sys.stderr)
                return 1
            status = max(status, code)
        base, new = compilers[0], compilers[1]
        c = compare.compare(read_result(paths[base], base), read_result(paths[new], new))
        print(f"== {new} against {base} (compare's verdicts: docs/results.md)")
        print(compare_report.table_text(c, base, new), end="")
    return status
