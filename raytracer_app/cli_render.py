"""`raytracer-app render spheres|julia`: one image to a PNG, with its timing printed."""

from __future__ import annotations

from kernels.errors import InputError, printable
from kernels.io.writer import check_output
from kernels.service.render import render_frame
from kernels.service.requests import RenderRequest
from raytracer_app.cli_options import refuse_launch_options_on_the_host
from raytracer_app.png import check_writable, frame_metadata, write_png


def _default_size(target: str, backend) -> tuple[int, int]:
    from kernels.harness.frames import DEFAULT_IMAGE_SIZES, SIM_IMAGE_SIZE

    return SIM_IMAGE_SIZE if backend.is_simulator else DEFAULT_IMAGE_SIZES[target]


def render_command(args, backend) -> int:
    """Renders through the same service as the window (kernels.service.render)."""
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
        frame = _render_spheres(args, backend, size, block)
    else:
        frame = _render_julia(args, backend, size, block, notes)
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


def _render_spheres(args, backend, size, block):
    from kernels.raytrace.scene import generate_scene, load_scene, memory_cap, save_scene

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
    frame = render_frame({}, request)
    if args.save_scene:
        save_scene(scene, args.save_scene, "--save-scene", [("--out", args.out), ("--scene", args.scene)])
        print(f"saved scene to {printable(args.save_scene)}")
    return frame


def _render_julia(args, backend, size, block, notes):
    from kernels.julia import JuliaParams, parse_complex

    center = parse_complex(args.center, "--center")
    params = JuliaParams(c=parse_complex(args.c, "--c"), center=(center.real, center.imag), zoom=args.zoom,
                         iterations=args.iterations, colormap=args.colormap, precision=args.precision).checked("--")
    frame = render_frame({}, RenderRequest("julia", backend, size, block, julia=params, launch=args.launch or "2d",
                                           repeats=args.repeats))
    size = frame.image.shape[1], frame.image.shape[0]
    if params.precision == "float32" and not params.float32_resolves(*size):
        notes.append(f"note: float32 cannot resolve this view ({params.ulps_per_pixel(*size):.2g} float32 steps "
                     "per pixel): expect blocks; use --precision float64")
    notes.append(f"view: {params.view_text()}")
    notes.append(f"again: {params.command_line(*size, args.out)}")
    return frame
