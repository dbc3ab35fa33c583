"""`raytracer-app lesson NAME`: a lesson's steps run in order on this machine (timed on a GPU, verified in
the CUDA simulator without one), beside the published figures, with the inspector's static evidence and a
sentence per step on whether it still pays; with --counters, each step's measured counters (Nsight Compute);
optionally written as CSV, as a Markdown report and as a lesson result file (--json). Without a GPU the
tables show the project's reference results (kernels.lessons.references), labelled with their device."""

from __future__ import annotations

import os
import sys

from kernels.errors import InputError
from raytracer_app.cli.cluster import cluster_address, on_option, one_place
from raytracer_app.cli.parser import add_list, common, compiler_option, whole_number


def add_parser(subparsers) -> None:
    from kernels.lessons.catalog import LESSONS, names

    p = subparsers.add_parser("lesson", help="replay a lesson's optimisation steps on this machine: "
                              + "; ".join(f"{lesson.name} ({lesson.title})" for lesson in LESSONS))
    p.add_argument("name", metavar="NAME", choices=names(), help="|".join(names()))
    add_list(p, "--n", item=whole_number("--n", 1), default=None, metavar="N1,N2,...",
                   help="sizes N1,N2,... in the lesson's unit (default: the lesson's own on a GPU, e.g. 2^22 and "
                        "2^26 ints for the reduction; its small simulator size without one)")
    p.add_argument("--arch", default=None, help="architecture sm_XY of the static evidence (default: the GPU's "
                                                "own, sm_90 without one)")
    p.add_argument("--repeats", type=whole_number("--repeats", 1), default=None,
                   help="timed repeats of each step after a warm-up (default 10, 2 in the simulator)")
    p.add_argument("--counters", action="store_true",
                   help="read every step's hardware counters with Nsight Compute (ncu) once, as bench --counters "
                        "does, and cite them in the evidence and verdicts (needs a CUDA GPU and ncu)")
    p.add_argument("--csv", default=None, help="write one row per step and size to this CSV file (an existing one is kept as FILE.~N~)")
    p.add_argument("--markdown", default=None, help="write the lesson as a Markdown report with device, versions "
                                                    "and date to this file (an existing one is kept as FILE.~N~)")
    p.add_argument("--json", default=None, help="write every step's figures and the run's header (device, versions, "
                                                "commit, command, date) as a lesson result file (docs/results.md)")
    common(p)
    compiler_option(p)
    c = p.add_argument_group("on a cluster (docs/cluster.md)")
    cluster_address(c)
    on_option(c, "to run the steps")


OUTPUTS = ("--csv", "--markdown", "--json")


def _outputs(args) -> list[tuple[str, str]]:
    return [(o, p) for o, p in zip(OUTPUTS, (args.csv, args.markdown, args.json)) if p]


def _check_outputs(args) -> None:
    from kernels.io.writer import overwrite_notice

    chosen = _outputs(args)
    for k, (option, path) in enumerate(chosen):
        for other, other_path in chosen[k + 1:]:
            if os.path.abspath(path) == os.path.abspath(other_path):
                raise InputError(f"{option} and {other} name the same file")
    for option, path in chosen:
        notice = overwrite_notice(path, option, [o for o in chosen if o[0] != option])
        if notice:
            print(notice)


def run(args) -> int:
    if not args.cluster:
        from kernels.backend import resolve

        return lesson_command(args, resolve(args.backend, args.device))
    from kernels.cluster import remote

    client = remote.connect(args.cluster, args.certs)
    try:
        backend, resources = one_place(args, client)
        if args.counters and not backend.is_gpu:  # ncu runs on the cluster's GPU workers
            from kernels.counters.tool import CannotMeasure

            raise CannotMeasure(f"counters cannot be read on the {backend.kind} backend: the cluster at "
                                f"{client.scheduler.address} " + ("has no GPU worker" if not remote.gpu_models(client)
                                                                  else "runs it on its cpu and sim workers")
                                + "; Nsight Compute needs a CUDA GPU")
        place = remote.LessonPlace(client, resources)
        args.arch = args.arch or getattr(backend, "remote_arch", None)
        code = lesson_command(args, backend, place)
        print(f"steps run on {', '.join(place.workers) or 'no worker'} of {client.scheduler.address}")
        return code
    finally:
        client.close()


def lesson_command(args, backend, place=None) -> int:
    """The lesson on ``backend``, its steps here or at ``place`` (a cluster's)."""
    from kernels.inspector.compiler import check_arch
    from kernels.lessons import report
    from kernels.lessons import references, report_refs, results
    from kernels.lessons.catalog import by_name
    from kernels.lessons.run import run_lesson, sizes_for

    lesson = by_name(args.name)
    if args.arch is not None:
        check_arch(args.arch)
    sizes = sizes_for(lesson, backend, args.n)
    if args.counters and place is None:  # refused with the counters module's one line before anything runs
        from kernels.lessons.measured import check

        check(backend)
    _check_outputs(args)
    print(f"lesson {lesson.name}: {lesson.summary}")
    print(f"running {len(lesson.steps)} steps at n = {', '.join(f'{n:,}' for n in sizes)} on {backend.label}"
          + ("" if backend.is_gpu else " (no GPU: each step is verified in the CUDA simulator)"), flush=True)

    def on_step(result):
        print(f"  {result.step.title}: {result.verified}", file=sys.stderr, flush=True)
        if result.index == len(lesson.steps) - 1 and result.n == sizes[-1]:  # seconds of compiling follow
            print("compiling each step's kernel for its evidence (registers, shared memory, "
                  "occupancy; cached after a first run)…", file=sys.stderr, flush=True)

    def on_counters(text):
        print(f"counters: {text}", file=sys.stderr, flush=True)

    lesson_run = run_lesson(lesson, backend, sizes, args.repeats, args.arch, on_step=on_step,
                            counters=args.counters, on_counters=on_counters, place=place)
    shown = []
    if not lesson_run.measured:  # no measurement here: the shipped references, each labelled with its device
        shown, refused = references.load(lesson)
        for line in refused:
            print(f"reference not shown: {line}", file=sys.stderr)
        if not shown:
            print(f"no reference results shipped for lesson {lesson.name} (made by scripts/reference_results.py "
                  "--lessons on a GPU)")
    print(report_refs.text(lesson_run, shown), end="")
    contents = {"--csv": lambda: report_refs.csv_text(lesson_run, shown),
                "--markdown": lambda: report_refs.markdown(lesson_run, shown),
                "--json": lambda: results.to_json(lesson_run, getattr(args, "argv", None))}
    def write(option, path):
        others = [o for o in _outputs(args) if o[0] != option]
        report.write(path, contents[option](), option, others)
        print(f"wrote {option[2:]} to {path}")

    from kernels.io.writer import write_each
    from raytracer_app.cli.parser import report_failed_write

    if not write_each([(o, p, lambda o=o, p=p: write(o, p)) for o, p in _outputs(args)], report_failed_write):
        return 1
    if lesson_run.failed:
        print(f"{len(lesson_run.failed)} of {len(lesson_run.results)} steps failed verification or raised",
              file=sys.stderr)
        return 1
    return 0
