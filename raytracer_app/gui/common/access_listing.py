"""What the Access tool shows of a traced kernel, without widgets: its Python source as listed lines (the
functions that hold its accesses, kernel first, each line with its LineAccess when it has one), each line's heat
for the figure chosen, and the requests a line steps through. Reading the source happens in the worker thread
(``source_listing``); the GUI thread only draws what comes back."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the project: LineAccess.file is relative to it for its own files

# the heat column's figures: (label, the per-request figure, its tooltip)
FIGURES = {
    "sectors / request": ("sectors_per_request",
                          "global memory: 32-byte sectors each warp request touches (4 for 32 consecutive 4-byte "
                          "lanes; up to 32 when every lane is in a sector of its own)"),
    "conflicts / request": ("conflicts_per_request",
                            "shared memory: wavefronts beyond the fewest the access width needs (0: no bank "
                            "conflict; 31: every lane served alone)"),
    "active lanes": ("lanes_per_request",
                     "lanes taking part in each request, of 32 (fewer: a divergent branch or a bounds check left "
                     "lanes idle)"),
}


@dataclass(frozen=True)
class ListedLine:
    """One line of the listing: a source line (``number`` > 0) with its access tallies (``access``, or None when
    the line makes no memory request), or a heading (``number`` 0: the file and function that follow)."""

    file: str
    number: int
    text: str
    access: object = None  # kernels.access.LineAccess


def heat(line, figure: str) -> float | None:
    """The line's value of ``figure`` (a FIGURES label), or None where it has no request of that kind."""
    if line is None:
        return None
    return line.per_request(FIGURES[figure][0])


def heat_level(figure: str, value: float | None) -> float:
    """How hot a value is, 0 (as good as it gets) to 1 (as bad): sectors 1..32, conflicts 0..8 and more,
    active lanes 32 down to 1."""
    if value is None:
        return 0.0
    name = FIGURES[figure][0]
    if name == "sectors_per_request":
        return min(max((value - 4.0) / 28.0, 0.0), 1.0)  # 4: a coalesced warp of 4-byte lanes
    if name == "conflicts_per_request":
        return min(max(value / 8.0, 0.0), 1.0)
    return min(max((32.0 - value) / 31.0, 0.0), 1.0)


def _source_of(file: str) -> str | None:
    path = Path(file) if Path(file).is_absolute() else ROOT / file
    try:
        if Path(file).is_absolute():  # a user's variant file: through the one reader
            from kernels.user_variants.loader import read

            return read(path).source
        from kernels.io.reader import read_bytes

        return read_bytes(path, "source", 1 << 22, "a kernel's source file").decode("utf-8")
    except Exception:  # noqa: BLE001 - a file gone or unreadable: its lines are listed alone
        return None


def _functions(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line with its decorators, last line) of every function in ``source``."""
    out = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                name = f"{prefix}{child.name}"
                out.append((name, first, child.end_lineno or child.lineno))
                walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")

    walk(ast.parse(source), "")
    return out


def source_listing(kernel) -> list[ListedLine]:
    """The kernel's source as listed lines: for each file its accesses are in (in the order the kernel's lines
    name them), the innermost functions holding an access, whole, each under a heading; a line of a file that
    cannot be read is listed alone."""
    by_line = {(ln.file, ln.line): ln for ln in kernel.lines}
    files = list(dict.fromkeys(ln.file for ln in kernel.lines))
    out: list[ListedLine] = []
    for file in files:
        wanted = sorted(n for f, n in by_line if f == file)
        source = _source_of(file)
        if source is None:
            out.append(ListedLine(file, 0, f"# {file}"))
            out += [ListedLine(file, n, by_line[(file, n)].source, by_line[(file, n)]) for n in wanted]
            continue
        text = source.splitlines()
        try:
            functions = _functions(source)
        except SyntaxError:
            functions = []
        spans: dict[tuple[int, int], str] = {}
        for n in wanted:  # the innermost function around each accessed line
            around = [f for f in functions if f[1] <= n <= f[2]]
            name, first, last = min(around, key=lambda f: f[2] - f[1]) if around else (f"line {n}", n, n)
            spans[(first, last)] = name
        for (first, last), name in sorted(spans.items()):
            out.append(ListedLine(file, 0, f"# {file}: {name}"))
            for n in range(first, min(last, len(text)) + 1):
                out.append(ListedLine(file, n, text[n - 1], by_line.get((file, n))))
    return out


def steps(line, warp: int | None = None, space: str | None = None) -> list:
    """The requests a line steps through: all it kept, or one warp's (its first block's), in trace order, so
    stepping walks a loop's iterations."""
    requests = line.requests_of(space=space)
    if warp is None:
        return requests
    mine = [r for r in requests if r.warp == warp]
    if not mine:
        return []
    block = mine[0].block
    return [r for r in mine if r.block == block]


def describe(request) -> str:
    """One line on a request: where it comes from and what it cost."""
    where = (f"block {tuple(request.block)}, warp {request.warp}, iteration {request.iteration}; {request.space} "
             f"{request.op}, {request.width}-byte lanes, {request.active} of 32 lanes")
    if request.space == "global":
        ideal = max(1, -(-request.active * request.width // 32))
        return f"{where}; {len(request.sectors())} sectors (a coalesced warp: {ideal})"
    if request.space == "shared":
        total, fewest = request.wavefronts()
        conflicts = total - fewest
        return (f"{where}; {total} wavefronts, the fewest {fewest}: "
                + ("no bank conflict" if not conflicts else f"{conflicts} bank conflict(s)"))
    return f"{where}; {len({a for a in request.lanes if a is not None})} distinct constant address(es)"
