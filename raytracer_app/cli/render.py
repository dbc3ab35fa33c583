"""`raytracer-app render KIND`: one image to a PNG, with its timing printed. A subcommand per render kind of
the registry, its options made from the kind's controls (kernels.harness.renderable.Control)."""

from __future__ import annotations

import argparse

from kernels.errors import InputError, printable
from kernels.io.writer import check_output
from kernels.service.render import render_frame
from kernels.service.requests import RenderRequest
from raytracer_app.cli.cluster import cluster_address, on_option, one_place
from raytracer_app.cli.parser import Parser, common, compiler_option, whole_number
from raytracer_app.png import check_writable, frame_metadata, write_png


def add_parser(sub) -> None:
    from kernels.backend import MAX_REPEATS
    from kernels.registry import RENDERABLES

    render = sub.add_parser("render", help="render one image to a PNG and print its timing")
    images = render.add_subparsers(dest="target", metavar="TARGET", parser_class=Parser, required=True)
    for kind in RENDERABLES:
        p = images.add_parser(kind.name, help=kind.summary)
        size = f"{kind.default_size[0]}x{kind.default_size[1]}"
        p.add_argument("--out", required=True, help="output PNG file")
        p.add_argument("--size", default=None, help=f"WxH, each 1..4096 (default {size}; 32x32 in the simulator, at most 128x128)")
        p.add_argument("--repeats", type=whole_number("--repeats", 1), default=None,
                       help=f"timed repeats after a warm-up (default 10, 2 in the simulator; at most {MAX_REPEATS}, 5 in the simulator)")
        p.add_argument("--block", default=None, help="CUDA block shape BXxBY (default 16x16; cuda/sim only)")
        for control in kind.controls:
            if control.cli:
                add_control(p, control)
        common(p)
        compiler_option(p)
        c = p.add_argument_group("on a cluster (docs/cluster.md)")
        cluster_address(c)
        on_option(c, "to draw")


def add_control(p, control) -> None:
    """``control`` as an option of ``p``: a choice as argparse's choices, any other value parsed by the control
    (a bad one is one line); every default None, so a control not given keeps its kind's default."""
    if control.kind == "choice":
        p.add_argument(control.flag, default=None, choices=control.choices, help=control.help)
        return

    def parse(text):
        try:
            return control.parse(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    p.add_argument(control.flag, type=parse, default=None, help=control.help)


def run(args) -> int:
    from kernels.backend import resolve

    if args.cluster:  # drawn on a Dask cluster's worker (docs/cluster.md)
        return _on_cluster(args)
    return render_command(args, resolve(args.backend, args.device))


def _on_cluster(args) -> int:
    from kernels.cluster import remote

    client = remote.connect(args.cluster, args.certs)
    try:
        where, resources = one_place(args, client)
        drawn = []

        def draw(request):
            drawn.append(remote.render(client, request, resources))
            return drawn[-1].frame

        code = render_command(args, where, draw)
        print(f"drawn on {drawn[-1].worker} of {client.scheduler.address}: {drawn[-1].worker_ms:.1f} ms there, "
              f"{drawn[-1].round_trip_ms:.1f} ms round trip ({drawn[-1].transfer_ms:.1f} ms transfer and scheduling)")
        return code
    finally:
        client.close()


def refuse_launch_options_on_the_host(args, backend, names) -> None:
    """The cpu backend has no thread blocks or GPU memories: an option of ``names`` (attribute names) given
    there would change nothing, so it is an error (one rule for `render` and `bench`)."""
    if backend.runs_cuda_kernels:
        return
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            raise InputError(f"--{name.replace('_', '-')} {value} applies to CUDA kernels; the cpu backend has none "
                             "(use --backend cuda or sim)")


def waiting_line(kind: str, backend, size) -> str:
    """What the seconds before the timing go to, said before they pass (a cold render was silent 7-8 s)."""
    what = f"rendering {kind} {size[0]}x{size[1]} on {backend.kind}: "
    if backend.is_simulator:
        return what + "the CUDA simulator runs every GPU thread in Python (slow)…"
    if backend.is_host:
        from kernels.service.render import default_twin, twin_cached

        if twin_cached(kind, default_twin(kind)):
            return what + "loading the CPU kernel from numba's cache, then timing it…"
        return what + "compiling the CPU kernel (first run only: numba's cache does not hold it yet), then timing it…"
    return what + "loading numba and compiling the CUDA kernel (seconds on a first run), then timing it…"


def render_command(args, backend, draw=None) -> int:
    """Renders through the same service as the window (kernels.service.render); ``draw`` (request -> Frame)
    draws it elsewhere (a cluster's worker)."""
    draw = draw or (lambda request: render_frame({}, request))
    from kernels.harness.frames import SIM_IMAGE_SIZE, parse_size
    from kernels.launch import DEFAULT_BLOCK_2D, parse_block
    from kernels.registry import renderable_named

    kind = renderable_named(args.target)
    controls = [c for c in kind.controls if c.cli]
    refuse_launch_options_on_the_host(args, backend, ("block", *(c.name for c in controls if c.gpu_only)))
    values = {c.name: getattr(args, c.name, None) for c in controls}
    inputs = [(c.flag, values[c.name]) for c in controls if c.file == "in"]
    check_writable(args.out, "--out", inputs)
    for c in controls:
        if c.file == "out" and values[c.name]:
            check_output(values[c.name], c.flag, [("--out", args.out), *inputs])
    block = parse_block(args.block) if args.block else DEFAULT_BLOCK_2D
    size = parse_size(args.size) if args.size else (SIM_IMAGE_SIZE if backend.is_simulator else kind.default_size)
    labels = {c.name: c.flag for c in controls}
    for c in controls:  # a value read from a file given: a refusal of it names the file's option
        if c.supplies and values[c.name]:
            labels[c.supplies] = c.flag
    params = kind.make_params(values, backend, labels)
    print(waiting_line(kind.name, backend, size), flush=True)
    frame = draw(RenderRequest(kind.name, backend, size, block, params, repeats=args.repeats, labels=labels))
    notes = kind.notes(params, frame.size, args.out, values)  # printed after the timing
    print(f"backend: {backend.label}" + (f"  [{backend.note}]" if backend.note else ""))
    launch = f", block {frame.block[0]}x{frame.block[1]}, grid {frame.grid[0]}x{frame.grid[1]}" if frame.block else ""
    details = ", ".join(f"{k} {printable(v)}" for k, v in frame.meta.items() if k != "kind")  # names read from files
    print(f"{frame.meta['kind']}: {details}, {frame.image.shape[1]}x{frame.image.shape[0]}{launch}")
    print(f"kernel ({backend.timing_method}): {frame.kernel.summary()}")
    print(f"one whole frame (launch + kernel + copy back): median {frame.frame_ms:.3f} ms over the same "
          f"{frame.kernel.repeats} frames, {frame.outside_kernel_ms:.3f} ms of it outside the kernel")
    if backend.timing_note:
        print(f"note: {backend.timing_note}")
    for line in notes:
        print(line)

    def write_image():
        written = write_png(args.out, frame.image, frame_metadata(frame), "--out", inputs)
        print(f"wrote {printable(args.out)}{written.kept()}")

    from kernels.io.writer import write_each
    from raytracer_app.cli.parser import report_failed_write

    writes = [("--out", args.out, write_image), *kind.outputs(params, frame.size, args.out, values)]
    return 0 if write_each(writes, report_failed_write) else 1
