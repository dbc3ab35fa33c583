"""The escape-time renderers' shared base (kernels/harness/image_renderer.py): its own path, the untimed
frame it queues on a GPU once a kernel is warm (a window's continuous frames) and a request for a shipped image
where a kind ships none, for each kind that subclasses it. The frames it draws otherwise are the kinds' own
tests' (test_julia*.py, test_mandelbrot.py, test_kernel_images.py)."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.harness.frames import Queued
from kernels.julia import reference as julia_reference
from kernels.julia.params import JuliaParams
from kernels.julia.renderer import JuliaRenderer
from kernels.mandelbrot import reference as mandelbrot_reference
from kernels.mandelbrot.params import MandelbrotParams
from kernels.mandelbrot.renderer import MandelbrotRenderer

SIZE = (96, 64)
# each with its numpy reference (checked against plain loops by test_startup.py and test_mandelbrot.py)
KINDS = [(JuliaRenderer, JuliaParams(iterations=60), julia_reference.render),
         (JuliaRenderer, JuliaParams(iterations=60, launch="grouped"), julia_reference.render),
         (MandelbrotRenderer, MandelbrotParams(iterations=60), mandelbrot_reference.render)]


@pytest.mark.gpu
@pytest.mark.parametrize("renderer, params, reference", KINDS, ids=["julia-2d", "julia-grouped", "mandelbrot"])
def test_gpu_queued_frames_are_the_timed_frames_image(cuda_backend, renderer, params, reference):
    r = renderer(cuda_backend)
    timed = r.start_request(params, SIZE, (16, 8), 1, True, False)()  # timed: drawn by the call, warms the kernel
    assert timed.kernel is not None
    assert (timed.image != reference(params, SIZE)).any(axis=2).mean() < 0.01  # a GPU may fuse multiply-adds
    for shipped_image in (False, True):  # a kind without images (Mandelbrot) draws its kernel as if none were asked
        started = r.start_request(params, SIZE, (16, 8), 1, False, shipped_image)
        assert isinstance(started, Queued) != (shipped_image and bool(r.renderable.images))
        frame = started()
        assert frame.block == (16, 8) and (frame.kernel is None or shipped_image)  # a shipped image's is timed
        np.testing.assert_array_equal(frame.image, timed.image)

