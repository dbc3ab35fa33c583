"""One benchmark run described by plain fields, for the window's panels and the simulator's child process
(the CLI builds its problems itself, to read --input files and print as rows come)."""

from __future__ import annotations

import dataclasses

from kernels.harness import bench
from kernels.registry import by_name


def run_bench(fields: dict, send, should_stop=lambda: False) -> list:
    """Run the fields' algorithm, backend, sizes, options, launches, variant_names, repeats, want_peak and
    rounds (optional, default 1);
    ``send(kind, value)`` streams 'peak', 'row' and 'progress'. ``wrap_run`` (optional) wraps each compute
    call, e.g. in a lock."""
    spec = by_name(fields["algorithm"])
    backend = fields["backend"]
    backend.activate()
    wrap = fields.get("wrap_run", lambda run: run)
    options = spec.options_for(fields["options"], backend)
    for n in fields["sizes"]:
        spec.check_memory(n, options, backend, spec.size.label)
    peak = None
    if fields["want_peak"] and not should_stop():
        peak = wrap(bench.copy_peak)(backend)
        send("peak", peak)
    variants_by_name = {v.name: v for v in spec.variants}
    variants = [dataclasses.replace(variants_by_name[n], run=wrap(variants_by_name[n].run))
                for n in fields["variant_names"]]
    # each size's input is built when its turn comes, not all up front
    problems = (spec.make_problem(n, options, 0) for n in fields["sizes"])
    return bench.run(problems, variants, fields["launches"], backend, fields["repeats"], peak=peak, unit=spec.unit,
                     on_row=lambda row: send("row", row), on_progress=lambda d, t: send("progress", (d, t)),
                     should_stop=should_stop, problem_count=len(fields["sizes"]), rounds=fields.get("rounds", 1))
