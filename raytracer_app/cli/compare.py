"""`raytracer-app compare BASE.json NEW.json`: two result files of `bench --json`, row by row, with a verdict
per row (kernels.harness.compare) as a table, and optionally as CSV and Markdown."""

from __future__ import annotations

import sys

from kernels.errors import InputError

FAIL_ON = ("slower",)


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="compare two result files of bench --json row by row: FASTER / SLOWER / "
                                       "SAME / UNSURE from the samples",
                       description="Match the rows of two result files (bench --json) by target, variant, op, dtype, "
                                   "n, block and grid, and say for each whether NEW is FASTER, SLOWER, the SAME or "
                                   "UNSURE against BASE (docs/results.md).")
    p.add_argument("base", metavar="BASE.json", help="the result file to compare against")
    p.add_argument("new", metavar="NEW.json", help="the result file to judge")
    p.add_argument("--csv", default=None, help="also write the comparison as CSV (an existing file is kept as FILE.~N~)")
    p.add_argument("--markdown", default=None, help="also write it as a Markdown table (an existing file is kept as FILE.~N~)")
    p.add_argument("--fail-on", default=None, choices=FAIL_ON,
                   help="slower: exit with status 1 when any row is SLOWER (for CI); else 0")


def run(args) -> int:
    from kernels.harness import compare, compare_report
    from kernels.service.result_files import read_result
    from kernels.io.writer import check_output, write_each, write_output
    from raytracer_app.cli.parser import report_failed_write

    inputs = [("BASE", args.base), ("NEW", args.new)]
    outputs = [(o, p) for o, p in (("--csv", args.csv), ("--markdown", args.markdown)) if p]
    for option, path in outputs:
        check_output(path, option, inputs + [x for x in outputs if x[0] != option])
    base, new = read_result(args.base, "BASE"), read_result(args.new, "NEW")
    c = compare.compare(base, new)
    if not c.pairs and not c.not_compared:
        raise InputError(f"BASE {args.base!r} ({base.target}, {len(base.rows)} rows) and NEW {args.new!r} "
                         f"({new.target}, {len(new.rows)} rows) have no row in common (matched by "
                         f"{', '.join(compare.KEY_FIELDS)})")
    print(compare_report.table_text(c, args.base, args.new), end="")
    texts = {"--csv": lambda: compare_report.csv_text(c),
             "--markdown": lambda: compare_report.markdown_text(c, args.base, args.new)}
    def write(option, path):
        written = write_output(path, texts[option](), option, inputs)
        print(f"wrote {option[2:]} to {path}{written.kept()}")

    if not write_each([(o, p, lambda o=o, p=p: write(o, p)) for o, p in outputs], report_failed_write):
        return 1
    slower = c.counts()[compare.SLOWER]
    if args.fail_on == "slower" and slower:
        print(f"raytracer-app: {slower} row(s) SLOWER (--fail-on slower)", file=sys.stderr)
        return 1
    return 0
