"""Reading what the tools print: ``ptxas -v`` resources, ``nvdisasm -gi`` SASS with its Python line
markers, the PTX's ``.loc`` line table, and the instruction mix counted from SASS opcodes (static counts:
each instruction once, however often it runs)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

CATEGORIES = (
    "global load", "global store", "shared load", "shared store", "constant load", "local load", "local store",
    "global atomic", "shared atomic", "warp shuffle", "barrier", "branch", "integer", "floating point",
    "special function", "other",
)

# Generic LD/ST: numba's kernels reach global memory through them when the address space is not known.
_BY_OPCODE = {
    "LDG": "global load", "LD": "global load", "STG": "global store", "ST": "global store",
    "LDS": "shared load", "LDSM": "shared load", "STS": "shared store",
    "LDC": "constant load", "ULDC": "constant load",
    "LDL": "local load", "STL": "local store",
    "ATOMG": "global atomic", "RED": "global atomic", "ATOM": "global atomic", "REDG": "global atomic",
    "ATOMS": "shared atomic", "REDS": "shared atomic",
    "SHFL": "warp shuffle", "BAR": "barrier",
    "BRA": "branch", "BRX": "branch", "JMP": "branch", "JMX": "branch", "CALL": "branch", "RET": "branch",
    "EXIT": "branch", "BREAK": "branch", "BSSY": "branch", "BSYNC": "branch", "WARPSYNC": "branch",
    "MUFU": "special function",
}
_INTEGER = {"LOP3", "ULOP3", "SHF", "USHF", "LEA", "ULEA", "POPC", "UPOPC", "FLO", "UFLO", "BREV", "UBREV",
            "SGXT", "USGXT", "PRMT", "UPRMT", "BMSK", "UBMSK", "VIADD", "VIMNMX", "SHL", "SHR", "BMOV"}
_FLOAT = {"FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "FCHK", "FSET", "FRND", "FSWZADD", "DADD", "DMUL", "DFMA",
          "DSETP", "DMNMX", "HADD2", "HMUL2", "HFMA2", "HSETP2", "HMNMX2", "F2F", "F2I", "I2F", "F2FP", "FSEL",
          "I2FP", "F2IP"}


def classify(opcode: str) -> str:
    """The mix category of a SASS opcode (its base name, e.g. 'LDG' of 'LDG.E.64')."""
    base = opcode.split(".")[0]
    if base in _BY_OPCODE:
        return _BY_OPCODE[base]
    if base in _FLOAT:
        return "floating point"
    if base in _INTEGER or base.startswith(("IADD", "IMAD", "IMUL", "IMNMX", "ISETP", "IABS", "ISCADD", "IDP",
                                            "UIADD", "UIMAD", "UIMNMX", "UISETP", "I2I")):
        return "integer"
    return "other"


@dataclass(frozen=True)
class SassLine:
    address: int
    text: str  # the instruction as nvdisasm prints it, without the address comment
    opcode: str
    category: str
    file: str | None  # the Python file and line of the innermost marker above it
    line: int | None


_MARKER = re.compile(r'//## File "(?P<file>[^"]+)", line (?P<line>\d+)')
_INSTRUCTION = re.compile(r"/\*(?P<addr>[0-9a-f]{4,})\*/\s+(?P<text>[^;]*;)")
_PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")


def parse_sass(text: str) -> list[SassLine]:
    lines, where = [], (None, None)
    for raw in text.splitlines():
        marker = _MARKER.search(raw)
        if marker:
            where = (marker["file"], int(marker["line"]))
            continue
        ins = _INSTRUCTION.search(raw)
        if not ins:
            continue
        body = ins["text"].strip()
        opcode = _PREDICATE.sub("", body).split()[0].rstrip(";")
        lines.append(SassLine(int(ins["addr"], 16), body, opcode, classify(opcode), *where))
    return lines


def mix(lines: list[SassLine]) -> dict[str, int]:
    counts = Counter(line.category for line in lines)
    return {c: counts.get(c, 0) for c in CATEGORIES}


def mix_by_line(lines: list[SassLine]) -> dict[tuple[str, int], dict[str, int]]:
    """Non-zero categories per (file, line) of Python."""
    out: dict[tuple[str, int], Counter] = {}
    for ln in lines:
        if ln.file is not None:
            out.setdefault((ln.file, ln.line), Counter())[ln.category] += 1
    return {key: dict(counts) for key, counts in sorted(out.items())}


@dataclass(frozen=True)
class Resources:
    registers: int
    barriers: int
    static_shared: int  # bytes per block
    stack_frame: int  # bytes of local memory per thread (includes spills)
    spill_stores: int
    spill_loads: int
    constant: int  # bytes of __constant__ data the module declares (PTX .const)
    parameters: int  # bytes of kernel parameters (they live in constant bank 0)
    global_bytes: int  # module-level __device__ data


_PTX_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "b32": 4, "u32": 4,
                   "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}


def _ptx_bytes(ptx: str, pattern: str) -> int:
    return sum(_PTX_TYPE_BYTES.get(kind, 0) * int(count or 1) for kind, count in re.findall(pattern, ptx))


def parse_ptxas(report: str, ptx: str = "") -> Resources:
    """Resources of the entry function from ``ptxas -v`` output; constant data and parameter sizes from
    the PTX (ptxas 13 no longer prints cmem)."""
    entry = report.split("Compiling entry function", 1)[-1].split("Compile time", 1)[0]

    def first(pattern, text=entry):
        found = re.search(pattern, text)
        return int(found.group(1)) if found else 0

    constant = _ptx_bytes(ptx, r"\.const\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+[\w$]+(?:\[(\d+)\])?")
    entry_params = re.search(r"\.entry\s+[\w$]+\s*\(([^)]*)\)", ptx)
    parameters = _ptx_bytes(entry_params.group(1) if entry_params else "", r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+[\w$]+(?:\[(\d+)\])?")
    return Resources(
        registers=first(r"Used (\d+) registers"), barriers=first(r"used (\d+) barriers"),
        static_shared=first(r"(\d+) bytes smem"), stack_frame=first(r"(\d+) bytes stack frame"),
        spill_stores=first(r"(\d+) bytes spill stores"), spill_loads=first(r"(\d+) bytes spill loads"),
        constant=constant, parameters=parameters, global_bytes=first(r"(\d+) bytes gmem", report),
    )


def ptx_lines_by_source(ptx: str) -> dict[tuple[str, int], list[int]]:
    """(Python file, line) -> 0-based PTX line indices of the instructions under its ``.loc``."""
    files = {int(i): path for i, path in re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.M)}
    out: dict[tuple[str, int], list[int]] = {}
    where = None
    loc = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
    for index, raw in enumerate(ptx.splitlines()):
        found = loc.match(raw)
        if found:
            file_no, line = int(found.group(1)), int(found.group(2))
            where = (files.get(file_no, "?"), line) if line else None
            continue
        stripped = raw.strip()
        if where and stripped and not stripped.startswith(("//", ".", "}", "{", "$")):
            out.setdefault(where, []).append(index)
    return out
