"""The escape-time kinds' work counts (kernels/julia/work.py, kernels/mandelbrot/work.py: the iterations their
ceilings judge), in float64 against plain Python loops over the same pixel mapping."""

from __future__ import annotations

import pytest

from kernels.julia.params import JuliaParams
from kernels.mandelbrot.params import MandelbrotParams


def _points(width, height, center, scale):
    half = min(width, height) // 2
    for y in range(height):
        for x in range(width):
            yield center[0] + scale * (x - width // 2) / half, center[1] + scale * (height // 2 - 1 - y) / half


def julia_trips(width, height, params) -> int:
    total = 0
    for zr, zi in _points(width, height, params.center, params.scale / params.zoom):
        trips = params.iterations
        for i in range(params.iterations):
            zr, zi = zr * zr - zi * zi + params.c.real, zi * zr + zr * zi + params.c.imag
            if zr * zr + zi * zi > 1000.0:
                trips = i + 1
                break
        total += trips
    return total


def mandelbrot_trips(width, height, params) -> int:
    total = 0
    for x0, y0 in _points(width, height, params.center, params.scale / params.zoom):
        zr = zi = 0.0
        trips = params.iterations
        for i in range(params.iterations):
            if zr * zr + zi * zi > 4.0:
                trips = min(i + 1, params.iterations)
                break
            zr, zi = zr * zr - zi * zi + x0, zr * zi + zr * zi + y0
        total += trips
    return total


@pytest.mark.parametrize("params", [JuliaParams(iterations=50), JuliaParams(c=complex(-0.123, 0.745), zoom=2.5,
                                                                             center=(0.1, -0.2), iterations=80)])
def test_the_julia_count_is_the_plain_loops(params):
    from kernels.julia import work

    assert work.iterations(params, (24, 17), "float64") == julia_trips(24, 17, params)


@pytest.mark.parametrize("params", [MandelbrotParams(iterations=50), MandelbrotParams(center=(-0.75, 0.1), zoom=4.0,
                                                                                     iterations=90)])
def test_the_mandelbrot_count_is_the_plain_loops(params):
    from kernels.mandelbrot import work

    assert work.iterations(params, (24, 17), "float64") == mandelbrot_trips(24, 17, params)
