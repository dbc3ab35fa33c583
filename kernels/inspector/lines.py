"""Figures per Python line of a GPU variant's kernel: static ones from its compile (offline, any
architecture), measured ones from Nsight Compute on this GPU, each a :class:`kernels.counters.lines.KernelLines`.

- :func:`static_lines` (no GPU): SASS instructions per line and their mix. A device function's or a shared
  ``@numba.jit`` function's code counts on that function's own lines; a line that calls one also counts,
  in scope ``with_inlined``, everything its call inlined.
- :func:`measure_lines` (a GPU and ncu): one ncu run over the variants, its per-PC source counters folded
  onto lines; where the measured kernel's SASS is the inspector's compile of it, instruction for
  instruction, each PC also takes that compile's inlined-at chain, so call lines get ``with_inlined``
  figures as the static ones do (:func:`with_chains`).

The result file (``inspect --lines --json FILE``, and the per-line references shipped in
assets/reference-results/) is :func:`to_json`'s; :mod:`kernels.inspector.line_references` reads it back."""

from __future__ import annotations

import json
import time
from collections import Counter

from kernels.counters.lines import OWN, STATIC, WITH_INLINED, KernelLines, fill_sources, shown_file, source_text
from kernels.inspector.sass import _PREDICATE

SCHEMA, VERSION = "raytracer-app/line-figures", 1


def kernel_name(report) -> str:
    """The kernel's function name, as ncu's report shortens it ('best' of 'best_kernel.<locals>.best')."""
    return report.sources[0].name.rsplit(".", 1)[-1] if report.sources else report.variant


def static_lines(report) -> KernelLines:
    """The report's SASS counted per Python line (see the module's doc)."""
    from kernels.inspector.compiler import compiled_by

    out = KernelLines(kernel_name(report), labels={
        STATIC: f"static: the {report.arch} SASS of {compiled_by(report.numba_cuda)}'s compile "
                "(each instruction once)"})
    texts = {}
    for block in report.sources:
        for i, text in enumerate(block.text.splitlines()):
            texts[(block.file, block.first_line + i)] = text.strip()
    own: dict = {}
    inlined: dict = {}
    for ins in report.sass:
        if ins.file is None:
            continue
        own.setdefault((ins.file, ins.line), Counter())[ins.category] += 1
        for site in ins.inlined_at:
            inlined.setdefault(tuple(site), Counter())[ins.category] += 1
    for scope, table in ((OWN, own), (WITH_INLINED, inlined)):
        for (file, line), mix in table.items():
            if scope == WITH_INLINED:
                mix = mix + own.get((file, line), Counter())
            row = out.add(file, line, texts.get((file, line)) or source_text(file, line))
            row.set("sass_instructions", sum(mix.values()), STATIC, scope)
            for category, count in mix.items():
                row.set(f"mix.{category}", count, STATIC, scope)
    for (file, line), text in texts.items():  # every line of the sources is a row, figures or none
        out.add(file, line, text)
    return out


def _opcode(text: str) -> str:
    body = _PREDICATE.sub("", text.strip())
    return body.split()[0].rstrip(";") if body.split() else ""


def with_chains(pcs: dict, report) -> tuple[dict, str]:
    """(the per-PC table with each row's line and inlined-at chain from ``report``'s SASS, a note) when the
    measured instructions are the report's at the same offsets from the kernel's first (same opcodes);
    else (the table as it was, why not). The first instruction of a kernel runs in every warp, so the lowest
    measured PC is its start."""
    from kernels.counters.fold import pc_number

    if not pcs or report is None:
        return pcs, "no compile to take inlined-at chains from"
    numbered = {pc_number(k): v for k, v in pcs.items()}
    base = min(numbered)
    by_address = {ins.address: ins for ins in report.sass}
    for pc, row in numbered.items():
        ins = by_address.get(pc - base)
        if ins is None or (row.get("sass") and _opcode(row["sass"]) != ins.opcode):
            return pcs, (f"the measured SASS differs from the {report.arch} compile at offset {pc - base:#x}: "
                         "call lines show their own instructions only")
    out, moved = {}, 0
    for pc, row in numbered.items():
        ins = by_address[pc - base]
        new = dict(row)
        if ins.file is not None:
            if row.get("file") and (shown_file(row["file"]), row.get("line")) != (shown_file(ins.file), ins.line):
                moved += 1
            new.update(file=ins.file, line=ins.line, inlined_at=[list(site) for site in ins.inlined_at])
        out[pc] = new
    note = f"lines and inlined-at chains from the {report.arch} compile, instruction for instruction"
    if moved:
        note += f" ({moved} PCs placed on another line than ncu's source_info gave)"
    return out, note


def measure_lines(target: str, variants, backend, n: int | None = None, options=None, on_progress=None,
                  should_stop=None, static=None) -> dict:
    """{variant: [KernelLines of each of its kernels] or the reason it has none}, measured in one ncu run on
    ``backend``'s GPU at size ``n`` (default: the declaration's) with each variant's default launch.
    ``static``: {variant: KernelReport} of this GPU's architecture, for the inlined-at chains. Raises
    CannotMeasure (one line) where counters cannot be read here; stopped, the result is empty."""
    from kernels.counters.fold import fold
    from kernels.counters.measure import line_label, measure
    from kernels.counters.report import short_name, split
    from kernels.counters.tool import find_ncu
    from kernels.inspector.declarations import declaration
    from kernels.service.bench_request import BenchRequest

    names = list(variants)
    n = n or declaration(target, names[0]).default_n
    request = BenchRequest(target, backend, sizes=(n,), options=options or (), variants=tuple(names), repeats=1,
                           peak=False).to_json()
    raw: list = []
    got = measure(request, backend, on_progress=on_progress, should_stop=should_stop, raw_out=raw, lines=True)
    if not got:
        return {}
    label = line_label(backend, str(find_ncu()), request)
    windows = split(raw, len(names))
    out: dict = {}
    for i, name in enumerate(names):
        outcome = got.get(name)
        if isinstance(outcome, str) or outcome is None:
            out[name] = outcome or "no kernel was profiled for it"
            continue
        report = (static or {}).get(name)
        kernels, seen = [], Counter()
        for action in windows.get(i, []):
            short = short_name(action["name"])
            seen[short] += 1
            kernel = short if seen[short] == 1 else f"{short}#{seen[short]}"
            pcs, note = action.get("pcs", {}), ""
            if report is not None and kernel_name(report) == short:
                pcs, note = with_chains(pcs, report)
            lines = fold(pcs, kernel, {**action.get("pc_totals", {}), **action.get("metrics", {})}, label)
            if note:
                lines.notes.append(note)
            kernels.append(fill_sources(lines))
        out[name] = kernels
    return out


def joined(kernels: list, extra) -> list:
    """Each kernel with the figures of ``extra``'s kernel of its name (a second launch's 'name#2' matched
    exactly where ``extra`` has it, else by the name before the '#'), then ``extra``'s kernels of no other's
    name on their own: a traced or a reference kernel joining the static and measured ones."""
    out, used = [], set()
    for kernel in kernels:
        base = kernel.name.split("#")[0]
        match = next((e for e in extra if e.name == kernel.name and e.name not in used), None) or \
            next((e for e in extra if e.name == base and e.name not in used), None)
        if match is not None:
            used.add(match.name)
            kernel = kernel.merged(match)
        out.append(kernel)
    return out + [e for e in extra if e.name not in used]


def combined(static: KernelLines | None, measured=None, predicted=()) -> list | str:
    """[KernelLines] of one variant: its static kernel with the measured figures of the kernel of its name
    (then any other measured kernel), each with the predicted figures of its name; ``measured`` is
    measure_lines' entry (a list, the reason there is none, or None). The reason itself when there is
    nothing else to show."""
    if isinstance(measured, str):
        if static is None:
            return measured
        static.notes.append(f"not measured: {measured}")
        measured = None
    if measured is None:
        kernels = [static] if static is not None else []
    else:
        kernels = measured if static is None else joined([static], measured)
    kernels = joined(kernels, list(predicted))
    return kernels if kernels else "nothing to show"


def document(target: str, arch: str, variants: dict, command=None, measured_device: dict | None = None,
             n: int | None = None, seconds: float | None = None) -> dict:
    """The line-figures result file: ``variants`` {variant: [KernelLines] or the reason it has none}, with
    the header every result file carries (device, versions, commit, command, date)."""
    from kernels.backend import Backend
    from kernels.harness import results

    made = results.provenance(command)
    doc = {"schema": SCHEMA, "version": VERSION, "target": target, "arch": arch, "date": made["date"],
           "device": measured_device or results.device_info(Backend("cpu"), None), "measured": measured_device
           is not None, "n": n, "measure_seconds": seconds, "versions": made["versions"], "commit": made["commit"],
           "dirty": made["dirty"], "command": made["command"], "variants": []}
    for name, kernels in variants.items():
        entry = {"variant": name}
        if isinstance(kernels, str):
            entry["note"] = kernels
        else:
            entry["kernels"] = [k.to_dict() for k in kernels]
        doc["variants"].append(entry)
    return results._plain(doc)


def to_json(doc: dict) -> str:
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def timed(call):
    """(call's result, seconds it took)."""
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start
