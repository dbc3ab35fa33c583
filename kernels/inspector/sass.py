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
    file: str | None  # the Python file and line the instruction belongs to: for code inlined from a device
    line: int | None  # function or a shared @numba.jit function, that function's own line
    inlined_at: tuple = ()  # ((file, line), ...): the call sites it was inlined at, innermost first; () in the kernel

    @property
    def chain(self) -> tuple:
        """Its own (file, line), then the lines it was inlined at: every line whose code it is part of."""
        return (((self.file, self.line),) if self.file is not None else ()) + tuple(self.inlined_at)


_MARKER = re.compile(r'//## File "(?P<file>[^"]+)", line (?P<line>\d+)'
                     r'(?: inlined at "(?P<at_file>[^"]+)", line (?P<at_line>\d+))?')
_INSTRUCTION = re.compile(r"/\*(?P<addr>[0-9a-f]{4,})\*/\s+(?P<text>[^;]*;)")
_PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")


def _chain(markers: list) -> list:
    """The location chain of a group of consecutive ``nvdisasm -gi`` markers, innermost first.

    Inlined code comes as one marker per frame: ``File "f.py", line 7 inlined at "f.py", line 13``, then
    ``File "f.py", line 13 inlined at "f.py", line 20``, then ``File "f.py", line 20``; each marker whose
    location is not the caller the previous one named starts over (a location replaced by the next one)."""
    chain: list = []
    for m in markers:
        where = (m["file"], int(m["line"]))
        if not chain or chain[-1] != where:
            chain = [where]
        if m["at_file"]:
            chain.append((m["at_file"], int(m["at_line"])))
    return [w for w in chain if w[1] > 0]


def parse_sass(text: str) -> list[SassLine]:
    """Each instruction with its opcode, mix category, own Python line and the call sites it is inlined at.
    A compiler helper the kernel calls (a function after it, e.g. 64-bit division) has no line markers: its
    instructions count on the line that calls it when one line does (:func:`_attribute_helpers`)."""
    lines, chain, pending, function, functions = [], [], [], None, []
    for raw in text.splitlines():
        if "@function" in raw and ".type" in raw:  # a new function: no line until its first marker
            chain, pending = [], []
            function = raw.split(".type", 1)[1].split(",", 1)[0].strip()
            continue
        marker = _MARKER.search(raw)
        if marker:
            pending.append(marker)
            continue
        ins = _INSTRUCTION.search(raw)
        if not ins:
            continue
        if pending:
            chain, pending = _chain(pending), []
        body = ins["text"].strip()
        opcode = _PREDICATE.sub("", body).split()[0].rstrip(";")
        own = chain[0] if chain else (None, None)
        lines.append(SassLine(int(ins["addr"], 16), body, opcode, classify(opcode), own[0], own[1],
                              tuple(chain[1:])))
        functions.append(function)
    return _attribute_helpers(lines, functions)


def _attribute_helpers(lines: list[SassLine], functions: list) -> list[SassLine]:
    """Instructions of a helper function without line markers take the line (and call sites) of the one
    Python line whose instructions call it; a helper called from several lines keeps no line."""
    from dataclasses import replace

    kernel = functions[0] if functions else None
    callers: dict = {}
    for ins, function in zip(lines, functions):
        if function == kernel and ins.opcode.startswith("CALL") and ins.file is not None:
            for name in set(functions) - {kernel, None}:
                if name in ins.text:
                    callers.setdefault(name, set()).add(ins.chain)
    out = []
    for ins, function in zip(lines, functions):
        chains = callers.get(function, ())
        if function != kernel and ins.file is None and len(chains) == 1:
            chain = next(iter(chains))
            ins = replace(ins, file=chain[0][0], line=chain[0][1], inlined_at=tuple(chain[1:]))
        out.append(ins)
    return out


def complete_chains(lines: list[SassLine], in_kernel) -> list[SassLine]:
    """``lines`` with the inlined-at chain filled in where nvdisasm printed a device function's line without
    one (the compiler drops it for some instructions, e.g. a rotated loop's): a line outside the kernel's own
    function (``in_kernel(file, line)`` False) that is elsewhere seen inlined at exactly one chain of call
    sites takes that chain."""
    from dataclasses import replace

    seen: dict = {}
    for ins in lines:
        if ins.inlined_at:
            seen.setdefault((ins.file, ins.line), set()).add(ins.inlined_at)
    out = []
    for ins in lines:
        chains = seen.get((ins.file, ins.line), ())
        if ins.file is not None and not ins.inlined_at and not in_kernel(ins.file, ins.line) and len(chains) == 1:
            ins = replace(ins, inlined_at=next(iter(chains)))
        out.append(ins)
    return out


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


_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)(?:\s+\d+)?"
                  r"(?:\s*,\s*function_name\s+[\w$.]+(?:\s*\+\s*\d+)?\s*,\s*inlined_at\s+(\d+)\s+(\d+)(?:\s+\d+)?)?")


def ptx_lines_by_source(ptx: str) -> dict[tuple[str, int], list[int]]:
    """(Python file, line) -> 0-based PTX line indices of the instructions under its ``.loc``, and of those
    inlined at it (a call line lists what it inlines).

    A ``.loc`` of inlined code names its immediate call site only (``inlined_at``); the rest of the chain is
    that call site's own, taken from the chain being walked, else the last ``.loc`` of the call site seen."""
    files = {int(i): path for i, path in re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.M)}
    out: dict[tuple[str, int], list[int]] = {}
    chain: list = []
    last_chain: dict = {}
    for index, raw in enumerate(ptx.splitlines()):
        found = _LOC.match(raw)
        if found:
            file_no, line = int(found.group(1)), int(found.group(2))
            if not line:
                chain = []
                continue
            where = (files.get(file_no, "?"), line)
            if found.group(3):
                at = (files.get(int(found.group(3)), "?"), int(found.group(4)))
                parent = chain[chain.index(at):] if at in chain else last_chain.get(at, [at])
                chain = [where] + [w for w in parent if w != where]
            else:
                chain = [where]
            last_chain[where] = chain
            continue
        stripped = raw.strip()
        if chain and stripped and not stripped.startswith(("//", ".", "}", "{", "$")):
            for where in chain:
                out.setdefault(where, []).append(index)
    return out
