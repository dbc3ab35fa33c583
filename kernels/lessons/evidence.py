"""The static evidence for a lesson's steps: what each step's kernel compiles to for an architecture (the
kernel inspector's offline compile, no GPU needed), and the sentence that compares a step with its baseline."""

from __future__ import annotations

# fact name -> what a table calls it; the names past the first four are the inspector's instruction-mix
# categories (kernels.inspector.sass.CATEGORIES), counted as static SASS instructions
FACTS = {"registers": "registers", "occupancy": "occupancy %", "shared": "shared B/block",
         "instructions": "SASS instructions", "barrier": "barriers", "branch": "branches", "shared load": "shared loads",
         "shared store": "shared stores", "warp shuffle": "shuffles", "global atomic": "global atomics",
         "shared atomic": "shared atomics", "global load": "global loads", "constant load": "constant loads"}


def block_of(launch) -> tuple[int, ...] | None:
    """The block the inspector compiles a step at: the launch's, or the variant's own (None)."""
    if launch.block is None:
        return None
    return tuple(launch.block) if isinstance(launch.block, tuple) else (int(launch.block),)


def collect(target: str, wanted: dict, arch: str, cache=None) -> tuple[dict, str]:
    """{(variant, block): {fact: value}} for every wanted (variant, block) and a note on how they were
    obtained ('' when all compiled), or {} and why none could be."""
    from kernels.inspector.toolchain import EXTRA_HINT, missing

    gone = missing()
    if gone:
        return {}, f"no static evidence: compiling kernels needs {', '.join(gone)} ({EXTRA_HINT})"
    from kernels.inspector.report import inspect_many

    facts, failed = {}, []
    for block in sorted({b for _, b in wanted}, key=lambda b: b or ()):
        names = sorted({v for v, b in wanted if b == block})
        reports = inspect_many([(target, v) for v in names], arch, block, cache)
        for v in names:
            report = reports[(target, v)]
            if isinstance(report, Exception):
                failed.append(f"{v}: {report}")
                continue
            facts[(v, block)] = facts_of(report)
    return facts, ("; ".join(failed) if failed else "")


def facts_of(report) -> dict:
    out = {"registers": report.resources.registers, "occupancy": round(report.occupancy.percent),
           "shared": report.shared_per_block, "instructions": sum(report.mix.values())}
    for name in FACTS:
        if name in report.mix:
            out[name] = report.mix[name]
    return out


def describe(facts: dict, wanted: tuple[str, ...]) -> str:
    """'registers 32, occupancy % 100, barriers 8' for the facts a lesson shows."""
    return ", ".join(f"{FACTS[k]} {facts[k]}" for k in wanted if k in facts)


def difference(step: dict, baseline: dict, wanted: tuple[str, ...]) -> str:
    """What changed between a baseline's facts and a step's: 'barriers 8 -> 2, registers 32 -> 40'."""
    changed = [f"{FACTS[k]} {baseline[k]} -> {step[k]}" for k in wanted
               if k in step and k in baseline and step[k] != baseline[k]]
    return ", ".join(changed) if changed else "no static difference"
