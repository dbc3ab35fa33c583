"""`raytracer-app render spheres|julia`: one image to a PNG, with its timing printed."""

from __future__ import annotations

from kernels.errors import InputError
from raytracer_app.png import check_writable, frame_metadata, write_png


def render_command(args, backend) -> int:
    from kernels.frames import parse_block, parse_size

    if not backend.runs_cuda_kernels:
        for option, value in (("--memory", args.memory), ("--block", args.block), ("--launch", args.launch)):
            if value is not None:
                raise InputError(f"{option} {value} applies to CUDA kernels; the cpu backend has none (use --backend cuda or sim)")
    out = check_writable(args.out)
    if args.save_scene:
        check_writable(args.save_scene)
    block = parse_block(args.block) if args.block else (16, 16)
    default_size = "1024x1024" if args.target == "spheres" else "1000x1000"
    size = parse_size(args.size or default_size)
    notes: list[str] = []  # printed after the timing
    if args.target == "spheres":
        frame = _render_spheres(args, backend, size, block)
    else:
        frame = _render_julia(args, backend, size, block, notes)
    print(f"backend: {backend.label}" + (f"  [{backend.note}]" if backend.note else ""))
    launch = f", block {frame.block[0]}x{frame.block[1]}, grid {frame.grid[0]}x{frame.grid[1]}" if frame.block else ""
    details = ", ".join(f"{k} {v}" for k, v in frame.meta.items() if k != "kind")
    print(f"{frame.meta['kind']}: {details}, {size[0]}x{size[1]}{launch}")
    what = "kernel (CUDA events)" if frame.kernel.method == "cuda-events" else "kernel (wall time)"
    print(f"{what}: {frame.kernel.summary()}")
    print(f"one whole frame (launch + kernel + copy back): median {frame.frame_ms:.3f} ms over the same "
          f"{frame.kernel.repeats} frames, {frame.outside_kernel_ms:.3f} ms of it outside the kernel")
    for line in notes:
        print(line)
    write_png(out, frame.image, frame_metadata(frame))
    print(f"wrote {out}")
    return 0


def _render_spheres(args, backend, size, block):
    from kernels.raytrace import SphereRenderer
    from kernels.scene import generate_scene, load_scene, save_scene

    renderer = SphereRenderer(backend)
    if args.scene and args.spheres is not None:
        raise InputError("give either --scene FILE or --spheres N, not both")
    memory = args.memory or "global"
    cap = renderer.max_spheres(memory)
    if args.scene:
        scene = load_scene(args.scene, cap)
    else:
        scene = generate_scene(20 if args.spheres is None else args.spheres, args.seed, cap)
    frame = renderer.render(scene, size, memory, block, args.pattern, args.repeats)
    if args.save_scene:
        save_scene(scene, args.save_scene)
        print(f"saved scene to {args.save_scene}")
    return frame


def _render_julia(args, backend, size, block, notes):
    from kernels.julia import JuliaParams, JuliaRenderer, parse_complex

    center = parse_complex(args.center)
    params = JuliaParams(c=parse_complex(args.c), center=(center.real, center.imag), zoom=args.zoom,
                         iterations=args.iterations, colormap=args.colormap, precision=args.precision)
    frame = JuliaRenderer(backend).render(params, size, args.launch or "2d", block, args.repeats)
    if params.precision == "float32" and not params.float32_resolves(*size):
        notes.append(f"note: float32 cannot resolve this view ({params.ulps_per_pixel(*size):.2g} float32 steps "
                     "per pixel): expect blocks; use --precision float64")
    notes.append(f"view: {params.view_text()}")
    notes.append(f"again: {params.command_line(*size, args.out)}")
    return frame
