"""Renders sphere scenes on one backend: the CUDA kernels (:mod:`.gpu`, :mod:`.binned`) or a CPU twin,
imported on the first frame that needs them; this module imports no numba. On the host the tiled twin
(:mod:`.tiles`) draws by default; the row twin (:mod:`.cpu`) draws the same image (``twin="rows"``)."""

from __future__ import annotations

import numpy as np

from kernels.backend import HOST, Backend
from kernels.backend import memory as device_memory  # `memory` names the spheres' memory here
from kernels.errors import InputError
from kernels.harness.frames import (Frame, HostFrames, Queued, check_size, frame_by_image, launch_untimed, rgba_view,
                                   time_frames)
from kernels.launch import grid_for
from kernels.launch.packed import LastLaunch
from kernels.spheres.layout import (CONSTANT_SYMBOL, HOST_TWINS, check_memory, check_pattern, check_twin, constant_values,
                                    pack_spheres)
from kernels.spheres.scene import Scene, capacity, check_count, memory_cap
from kernels.timing import Timing, time_wall


class SphereRenderer:
    """Renders scenes on one backend, keeping device buffers between frames (safe to call from one
    worker thread). ``render`` validates everything first and raises InputError on a bad value."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.limits = backend.limits
        self.capacity = capacity(self.limits)
        self._image_dev = None
        self._scene_dev = None  # the packed spheres of the last scene uploaded
        self._scene_host: np.ndarray | None = None
        self._warm: set = set()
        self._host_frames = HostFrames()  # pinned, three in turn
        self._binned = None  # the binned-tiles kernel's buffers, made on first use
        self._sorted = None  # the same for binned tiles sorted nearest first (memory 'sorted')
        # the last launch with its arguments converted once: less Python per continuous frame on the
        # worker, which shares the GIL with the window's repaint
        self._launches = LastLaunch()
        self._constant = None  # (spheres, their constant-memory values): the last scene's

    def render(self, scene: Scene, size=(1024, 1024), memory: str = "global", block=(16, 16),
               pattern: str = "uniform", repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True,
               shipped_image: bool = False) -> Frame:
        """One frame; on the host ``twin`` picks the CPU code ('tiles', 'rows' or 'rows-serial': the same
        image). On a GPU, ``timed=False`` leaves the kernel untimed (see :func:`time_frames`), and ``shipped_image``
        draws a single frame with the kernel's shipped image where there is one for this GPU (numba need not
        be loaded; kernels/launch/images.py), else with numba's kernel."""
        width, height, block = self._checked(scene, size, memory, block, pattern, twin)
        staggered = pattern == "staggered"
        drawn = None
        if shipped_image and repeats == 1 and self.backend.is_gpu:
            drawn = self._render_image(scene, width, height, memory, block, staggered)
        if drawn is not None:
            image, kernel_time, frame_time, grid = drawn
        elif self.backend.runs_cuda_kernels:
            image, kernel_time, frame_time, grid = self._render_gpu(scene, width, height, memory, block, staggered,
                                                                    repeats, timed)
        else:
            pixels = np.empty((height, width), np.uint32)
            spheres = pack_spheres(scene.spheres)
            if twin == "tiles":
                from kernels.spheres.tiles import render_spheres_tiles

                launch = lambda: render_spheres_tiles(spheres, scene.count, pixels)  # noqa: E731
            else:
                from kernels.spheres import cpu

                draw = cpu.render_spheres_cpu_serial if twin == "rows-serial" else cpu.render_spheres_cpu
                launch = lambda: draw(spheres, scene.count, staggered, pixels)  # noqa: E731
            warmup = 0 if ("host", twin) in self._warm else 1
            kernel_time, frame_time = time_frames(HOST, launch, None, None, repeats, warmup)  # no copy back
            image = rgba_view(pixels)
            memory, block, grid = "host", None, None
            self._warm.add(("host", twin))
        return self._frame(image, kernel_time, frame_time, scene, memory, pattern, twin, block, grid)

    def start(self, scene: Scene, size=(1024, 1024), memory: str = "global", block=(16, 16),
              pattern: str = "uniform", repeats: int = 1, twin: str = HOST_TWINS[0], timed: bool = True,
              shipped_image: bool = False):
        """Begin one frame; calling the result completes it and returns the Frame. A single untimed frame of
        a kernel already warm on a GPU is queued here (launch and copy back, see :func:`launch_untimed`), so
        the caller can show the previous frame while the GPU draws; anything else is drawn by the call."""
        if shipped_image or timed or repeats != 1 or not self.backend.is_gpu or memory not in self._warm:
            return lambda: self.render(scene, size, memory, block, pattern, repeats, twin, timed, shipped_image)
        width, height, block = self._checked(scene, size, memory, block, pattern, twin)
        launch, image_dev, host, grid = self._prepare_gpu(scene, width, height, memory, block, pattern == "staggered")
        wait = launch_untimed(launch, image_dev, host, self._host_frames.copy_stream())
        return Queued(lambda: self._frame(rgba_view(host), None, wait(), scene, memory, pattern, twin, block, grid))

    def start_request(self, params, size, block, repeats, timed, shipped_image, twin=None):
        """:meth:`start` for a request's SphereParams (the render kind's path: kernels/harness/renderable.py)."""
        return self.start(params.scene, size, params.memory, block, params.pattern, repeats, twin or HOST_TWINS[0],
                          timed, shipped_image)

    def _checked(self, scene, size, memory, block, pattern, twin):
        """(width, height, block) once every value is valid (InputError naming the first that is not)."""
        width, height = check_size(*size)
        check_memory(memory)
        check_count(scene.count, self.max_spheres(memory))
        check_pattern(pattern)
        check_twin(twin)
        return width, height, tuple(block)  # the block is checked by the request (or the bench's launch)

    def _frame(self, image, kernel_time, frame_time, scene, memory, pattern, twin, block, grid) -> Frame:
        meta = {"kind": "spheres", "scene": scene.name, "spheres": scene.count, "memory": memory, "pattern": pattern}
        if memory == "host":
            meta["twin"] = twin
        from kernels.spheres import RENDERABLE

        return Frame(image, kernel_time, frame_time.median_ms, self.backend.kind, self.backend.device_name, block, grid,
                     meta, frame_time, renderable=RENDERABLE)

    def max_spheres(self, memory: str) -> int:
        """Most spheres ``render`` accepts for a memory on this backend (the CPU twin takes any scene)."""
        return memory_cap(self.backend, memory)

    def _render_gpu(self, scene, width, height, memory, block, staggered, repeats, timed=True):
        launch, image_dev, host, grid = self._prepare_gpu(scene, width, height, memory, block, staggered)
        warmup = 0 if memory in self._warm else 1
        kernel_time, frame_time = time_frames(self.backend, launch, image_dev, host, repeats, warmup, timed)
        self._warm.add(memory)
        return rgba_view(host), kernel_time, frame_time, grid

    def _render_image(self, scene, width, height, memory, block, staggered):
        """(image, kernel and frame Timing, grid) from the kernel's shipped image, or None where it has none that
        runs here (numba draws then)."""
        from kernels.launch.images import Output
        from kernels.spheres import IMAGES

        if memory not in IMAGES:
            return None
        grid = grid_for(width, height, block)
        args = (np.int32(scene.count), np.bool_(staggered), Output((height, width), np.uint32))
        constants = ()
        if memory == "constant":
            constants = [(CONSTANT_SYMBOL, 4 * offset, values)  # offsets in floats, the symbol's in bytes
                         for offset, values in self._constant_values(scene.spheres)]
        else:
            args = (pack_spheres(scene.spheres), *args)
        drawn = frame_by_image(IMAGES[memory], self.backend.device, grid, block, args, constants)
        return None if drawn is None else (*drawn, grid)

    def _prepare_gpu(self, scene, width, height, memory, block, staggered):
        """(launch, device image, the next pinned host image, grid) for one frame: the scene uploaded (or
        written to constant memory) and the kernel configured."""
        from kernels.spheres.gpu import CONSTANT_SPHERES, gpu_kernel

        self.backend.activate()
        if self._image_dev is None or self._image_dev.shape != (height, width):
            self._image_dev = device_memory.empty((height, width), np.uint32)
        image_dev = self._image_dev
        grid = grid_for(width, height, block)
        count = np.int32(scene.count)
        if memory in ("binned", "sorted"):
            from kernels.spheres.binned import BinnedTiles

            tiles = self._binned if memory == "binned" else self._sorted
            if tiles is None:
                tiles = BinnedTiles(nearest_first=memory == "sorted")
                if memory == "binned":
                    self._binned = tiles
                else:
                    self._sorted = tiles
            spheres_dev = self._upload_global(scene.spheres)
            launch = tiles.prepare(spheres_dev, scene.count, staggered, image_dev, block)
        elif memory in ("global", "shared"):
            kernel = gpu_kernel(memory)
            spheres_dev = self._upload_global(scene.spheres)
            launch = self._launches(kernel, grid, block, (spheres_dev, count, staggered, image_dev))
        else:
            kernel = gpu_kernel(memory)
            for offset, values in self._constant_values(scene.spheres):
                # cudaMemcpyToSymbol (no recompile), skipped when those bytes are there already
                CONSTANT_SPHERES.write(values, kernel, offset=offset, device=self.backend.device)
            launch = self._launches(kernel, grid, block, (count, staggered, image_dev))
        return launch, image_dev, self._host_frames.next_buffer(height, width), grid

    def _constant_values(self, spheres: np.ndarray):
        """The scene's constant-memory values, packed again only when the spheres change."""
        if self._constant is None or not np.array_equal(self._constant[0], spheres):
            self._constant = (spheres.copy(), constant_values(spheres))
        return self._constant[1]

    def time_frames(self, scene: Scene, size=(1024, 1024), memory: str = "constant", block=(16, 16),
                    repeats: int = 100) -> tuple[np.ndarray, Timing]:
        """Wall time of whole frames as an interactive viewer needs them: the kernel plus the copy back
        into pinned (page-locked) host memory, which the GPU writes by DMA at full link speed."""
        from kernels.spheres.gpu import gpu_kernel

        if not self.backend.is_gpu:
            raise InputError("frame-to-host timing needs a real GPU (the cuda backend)")
        self.render(scene, size, memory, block)  # validates, compiles, uploads the scene
        width, height = size
        kernel, grid, count = gpu_kernel(memory), grid_for(width, height, block), np.int32(scene.count)
        image_dev = self._image_dev
        host = device_memory.pinned_empty((height, width), np.uint32)
        args = (count, False, image_dev) if memory == "constant" else (self._scene_dev, count, False, image_dev)

        def frame():
            kernel[grid, block](*args)
            device_memory.to_host(image_dev, host)

        return rgba_view(host), time_wall(frame, repeats, warmup=3)

    def _upload_global(self, spheres: np.ndarray):
        if self._scene_host is None or not np.array_equal(self._scene_host, spheres):
            self._scene_dev = device_memory.to_device(pack_spheres(spheres))
            self._scene_host = spheres.copy()
        return self._scene_dev
