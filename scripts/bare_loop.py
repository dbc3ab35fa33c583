"""The bare loop the desktop app is measured against: the same sphere kernel drawing the same frames
(1024x1024, 20 spheres, seed 0) into one pyqtgraph ImageItem, and nothing else: launch, copy back into
one of the pinned host buffers, setImage, let Qt paint. Prints frames per second.

    QT_QPA_PLATFORM=offscreen python scripts/bare_loop.py [--backend cuda|cpu] [--memory M] [--seconds S]

Run it next to scripts/gui_fps.py (same backend, memory and size): the window's frames per second over
this loop's is the share of the kernels' speed that the app delivers. Both paint the frame 1:1 into a view
of its own size and print that view's size and the scale the image is drawn at.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--memory", default="constant", help="global|constant|shared|binned|sorted (cuda only; default constant)")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--size", default="1024x1024", help="WxH (default 1024x1024)")
    parser.add_argument("--spheres", type=int, default=20)
    parser.add_argument("--block", default="16x16")
    parser.add_argument("--packed", action="store_true",
                        help="launch with the arguments converted once, as the window does (kernels.launch.packed), "
                             "instead of numba's kernel[grid, block](...)")
    args = parser.parse_args(argv)

    from kernels import backend as backends

    backends.prepare(args.backend)  # before numba is imported
    import pyqtgraph as pg
    from PyQt6.QtWidgets import QApplication

    from kernels.launch import parse_block
    from kernels.harness.frames import parse_size, rgba_view
    from kernels.spheres.layout import check_memory
    from kernels.spheres.scene import generate_scene, max_spheres

    width, height = parse_size(args.size)
    block = parse_block(args.block)
    memory = check_memory(args.memory) if backends.choice(args.backend).is_gpu else "host"
    scene = generate_scene(args.spheres, 0, max_spheres(memory))
    backend = backends.resolve(args.backend)
    draw = _cuda_frames(scene, width, height, memory, block, args.packed) if backend.is_gpu else _cpu_frames(scene, width, height)

    app = QApplication.instance() or QApplication(sys.argv[:1])
    view = pg.GraphicsView()
    box = pg.ViewBox()
    box.setAspectLocked(True)
    box.invertY(True)
    box.setDefaultPadding(0.0)  # as the window's view: the image fills the view, 1:1 at the frame's size
    view.setCentralItem(box)
    item = pg.ImageItem(axisOrder="row-major")
    box.addItem(item)
    view.resize(width, height)
    view.show()

    item.setImage(rgba_view(draw()), autoLevels=False, levels=None)  # compiles, uploads, sizes the view
    app.processEvents()
    box.setRange(pg.QtCore.QRectF(0, 0, width, height), padding=0)
    app.processEvents()
    frame_ms = []
    end = time.perf_counter() + args.seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        item.setImage(rgba_view(draw()), autoLevels=False, levels=None)
        app.processEvents()  # Qt paints the item
        frame_ms.append((time.perf_counter() - t0) * 1e3)
    fps = len(frame_ms) / (sum(frame_ms) / 1e3) if frame_ms else 0.0
    median = statistics.median(frame_ms) if frame_ms else float("nan")
    print(f"bare loop{' (packed launch)' if args.packed else ''}, backend {backend.label}, memory {memory}, "
          f"{width}x{height}, {scene.count} spheres: "
          f"{fps:.0f} frames per second over {len(frame_ms)} frames (median frame {median:.3f} ms); "
          f"view {view.width()}x{view.height()} px, image drawn at {100.0 / box.viewPixelSize()[0]:.0f}% scale")
    view.close()
    return 0


def _cuda_frames(scene, width, height, memory, block, packed=False):
    """A function drawing one frame into the next pinned buffer (as the window does), returning it."""
    import numpy as np

    from kernels.backend import memory as device_memory
    from kernels.harness.frames import HostFrames
    from kernels.launch import grid_for
    from kernels.launch.packed import packed_launch
    from kernels.spheres.layout import constant_values, pack_spheres
    from kernels.spheres.gpu import CONSTANT_SPHERES, gpu_kernel

    image_dev = device_memory.empty((height, width), np.uint32)
    host = HostFrames()
    count = np.int32(scene.count)
    grid = grid_for(width, height, block)
    if memory in ("binned", "sorted"):
        from kernels.spheres.binned import BinnedTiles

        spheres_dev = device_memory.to_device(pack_spheres(scene.spheres))
        launch = BinnedTiles(nearest_first=memory == "sorted").prepare(spheres_dev, scene.count, False, image_dev,
                                                                        block)
    elif memory == "constant":
        kernel = gpu_kernel("constant")
        for offset, values in constant_values(scene.spheres):  # as the window's renderer writes them
            CONSTANT_SPHERES.write(values, kernel, offset=offset)
        args = (count, False, image_dev)
    else:
        kernel, spheres_dev = gpu_kernel(memory), device_memory.to_device(pack_spheres(scene.spheres))
        args = (spheres_dev, count, False, image_dev)
    if memory not in ("binned", "sorted"):
        launch = (packed and packed_launch(kernel, grid, block, args)) or (lambda: kernel[grid, block](*args))

    def draw():
        buffer = host.next_buffer(height, width)
        launch()
        device_memory.to_host(image_dev, buffer)
        return buffer

    return draw


def _cpu_frames(scene, width, height):
    import numpy as np

    from kernels.spheres.layout import pack_spheres
    from kernels.spheres.tiles import render_spheres_tiles  # the window's CPU twin

    spheres = pack_spheres(scene.spheres)
    buffers = [np.empty((height, width), np.uint32) for _ in range(2)]
    turn = [0]

    def draw():
        buffer = buffers[turn[0]]
        turn[0] ^= 1
        render_spheres_tiles(spheres, scene.count, buffer)
        return buffer

    return draw


if __name__ == "__main__":
    raise SystemExit(main())
