"""`raytracer-app render spheres|julia`: one image to a PNG, with its timing printed."""

from __future__ import annotations

from kernels.errors import InputError, printable
from kernels.io.writer import check_output
from kernels.service.render import render_frame
from kernels.service.requests import RenderRequest
from raytracer_app.cli.cluster import cluster_address, on_option, one_place
from raytracer_app.cli.parser import Parser, common, number, whole_number
from raytracer_app.png import check_writable, frame_metadata, write_png


def add_parser(sub) -> None:
    from kernels.backend import MAX_REPEATS
    from kernels.julia import COLORMAPS, LAUNCHES, PRECISIONS
    from kernels.spheres.layout import PATTERNS
    from kernels.spheres.scene import MAX_SPHERES, MEMORIES

    render = sub.add_parser("render", help="render one image to a PNG and print its timing")
    images = render.add_subparsers(dest="target", metavar="TARGET", parser_class=Parser, required=True)
    spheres = images.add_parser("spheres", help="the ray-traced spheres of seed 001")
    julia = images.add_parser("julia", help="the Julia set of seed 003")
    for p, size in ((spheres, "1024x1024"), (julia, "1000x1000")):
        p.add_argument("--out", required=True, help="output PNG file")
        p.add_argument("--size", default=None, help=f"WxH, each 1..4096 (default {size}; 32x32 in the simulator, at most 128x128)")
        p.add_argument("--repeats", type=whole_number("--repeats", 1), default=None,
                       help=f"timed repeats after a warm-up (default 10, 2 in the simulator; at most {MAX_REPEATS}, 5 in the simulator)")
        p.add_argument("--block", default=None, help="CUDA block shape BXxBY (default 16x16; cuda/sim only)")
    spheres.add_argument("--spheres", type=whole_number("--spheres"), default=None,
                         help=f"random scene with N spheres, 1..{MAX_SPHERES:,} (constant memory: up to its capacity, 2340 spheres in 64 KiB; default 20; at most 64 in the simulator)")
    spheres.add_argument("--seed", type=whole_number("--seed", 0), default=0, help="seed of the random scene (default 0)")
    spheres.add_argument("--scene", default=None, help="load the scene from a JSON file instead")
    spheres.add_argument("--save-scene", default=None, help="also save the scene as JSON")
    spheres.add_argument("--memory", default=None, choices=MEMORIES,
                         help="where the kernel reads the spheres: " + "|".join(MEMORIES) + " (default global; cuda/sim only)")
    spheres.add_argument("--pattern", default="uniform", choices=PATTERNS, help="sphere access order per warp (default uniform)")
    julia.add_argument("--c", default="-0.8,0.156", help="the constant c as RE,IM (default -0.8,0.156)")
    julia.add_argument("--center", default="0,0", help="view centre as X,Y (default 0,0)")
    julia.add_argument("--zoom", type=number("--zoom"), default=1.0, help="zoom factor (default 1)")
    julia.add_argument("--iterations", type=whole_number("--iterations"), default=200, help="iterations, 1..100000 (default 200)")
    julia.add_argument("--colormap", default="classic", choices=COLORMAPS, help="classic: the book's red on black (default)")
    julia.add_argument("--precision", default="float32", choices=PRECISIONS,
                       help="float32 (the book's, default) or float64 for deep zooms (float32 shows blocks past a zoom of about 10^4)")
    julia.add_argument("--launch", default=None, choices=LAUNCHES, help="book: one thread per block as in the book; 2d: 2-D blocks (default; cuda/sim only)")
    common(spheres)
    common(julia)
    for p in (spheres, julia):
        c = p.add_argument_group("on a cluster (docs/cluster.md)")
        cluster_address(c)
        on_option(c, "to draw")


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


def _default_size(target: str, backend) -> tuple[int, int]:
    from kernels.harness.frames import DEFAULT_IMAGE_SIZES, SIM_IMAGE_SIZE

    return SIM_IMAGE_SIZE if backend.is_simulator else DEFAULT_IMAGE_SIZES[target]


def render_command(args, backend, draw=None) -> int:
    """Renders through the same service as the window (kernels.service.render); ``draw`` (request -> Frame)
    draws it elsewhere (a cluster's worker)."""
    draw = draw or (lambda request: render_frame({}, request))
    from kernels.launch import parse_block
    from kernels.harness.frames import parse_size
    from kernels.launch import DEFAULT_BLOCK_2D

    refuse_launch_options_on_the_host(args, backend, ("memory", "block", "launch"))
    scene_file = ("--scene", getattr(args, "scene", None))
    check_writable(args.out, "--out", [scene_file])
    if getattr(args, "save_scene", None):
        check_output(args.save_scene, "--save-scene", [("--out", args.out), scene_file])
    block = parse_block(args.block) if args.block else DEFAULT_BLOCK_2D
    size = parse_size(args.size) if args.size else _default_size(args.target, backend)
    notes: list[str] = []  # printed after the timing
    if args.target == "spheres":
        frame = _render_spheres(args, backend, size, block, draw)
    else:
        frame = _render_julia(args, backend, size, block, notes, draw)
    print(f"backend: {backend.label}" + (f"  [{backend.note}]" if backend.note else ""))
    launch = f", block {frame.block[0]}x{frame.block[1]}, grid {frame.grid[0]}x{frame.grid[1]}" if frame.block else ""
    details = ", ".join(f"{k} {printable(v)}" for k, v in frame.meta.items() if k != "kind")  # scene names
    print(f"{frame.meta['kind']}: {details}, {frame.image.shape[1]}x{frame.image.shape[0]}{launch}")
    print(f"kernel ({backend.timing_method}): {frame.kernel.summary()}")
    print(f"one whole frame (launch + kernel + copy back): median {frame.frame_ms:.3f} ms over the same "
          f"{frame.kernel.repeats} frames, {frame.outside_kernel_ms:.3f} ms of it outside the kernel")
    if backend.timing_note:
        print(f"note: {backend.timing_note}")
    for line in notes:
        print(line)
    write_png(args.out, frame.image, frame_metadata(frame), "--out", [scene_file])
    print(f"wrote {printable(args.out)}")
    return 0


def _render_spheres(args, backend, size, block, draw):
    from kernels.spheres.scene import generate_scene, load_scene, memory_cap, save_scene

    if args.scene and args.spheres is not None:
        raise InputError("give either --scene FILE or --spheres N, not both")
    memory = args.memory or "global"
    cap = memory_cap(backend, memory)  # refused before a large file is read or a scene generated
    if args.scene:
        scene = load_scene(args.scene, cap)
    else:
        scene = generate_scene(20 if args.spheres is None else args.spheres, args.seed, cap)
    request = RenderRequest("spheres", backend, size, block, scene=scene, memory=memory, pattern=args.pattern,
                            repeats=args.repeats, labels={"spheres": "--scene" if args.scene else "--spheres"})
    frame = draw(request)
    if args.save_scene:
        save_scene(scene, args.save_scene, "--save-scene", [("--out", args.out), ("--scene", args.scene)])
        print(f"saved scene to {printable(args.save_scene)}")
    return frame


def _render_julia(args, backend, size, block, notes, draw):
    from kernels.julia import JuliaParams, parse_complex

    center = parse_complex(args.center, "--center")
    params = JuliaParams(c=parse_complex(args.c, "--c"), center=(center.real, center.imag), zoom=args.zoom,
                         iterations=args.iterations, colormap=args.colormap, precision=args.precision).checked("--")
    frame = draw(RenderRequest("julia", backend, size, block, julia=params, launch=args.launch or "2d",
                               repeats=args.repeats))
    size = frame.image.shape[1], frame.image.shape[0]
    if params.precision == "float32" and not params.float32_resolves(*size):
        notes.append(f"note: float32 cannot resolve this view ({params.ulps_per_pixel(*size):.2g} float32 steps "
                     "per pixel): expect blocks; use --precision float64")
    notes.append(f"view: {params.view_text()}")
    notes.append(f"again: {params.command_line(*size, args.out)}")
    return frame
