"""Independent numpy renderings of the definitions, written from the seeds, not from kernels/."""

import numpy as np


def spheres_reference(spheres: np.ndarray, width: int, height: int) -> np.ndarray:
    """Seed 001's kernel in numpy float32: nearest hit (largest dz + z) shades color * dz / radius."""
    f32 = np.float32
    ys, xs = np.mgrid[0:height, 0:width]
    ox = (xs - width // 2).astype(f32)
    oy = (ys - height // 2).astype(f32)
    maxz = np.full((height, width), f32(-2e10), f32)
    rgb = np.zeros((height, width, 3), f32)
    for r, g, b, rad, x, y, z in spheres.astype(f32):
        dx, dy = ox - x, oy - y
        hit = dx * dx + dy * dy < rad * rad
        dz = np.sqrt(np.where(hit, rad * rad - dx * dx - dy * dy, f32(0))).astype(f32)
        t = dz + z
        nearer = hit & (t > maxz)
        n = dz / np.sqrt(rad * rad)
        for k, col in enumerate((r, g, b)):
            rgb[..., k] = np.where(nearer, col * n, rgb[..., k])
        maxz = np.where(nearer, t, maxz)
    out = np.empty((height, width, 4), np.uint8)
    out[..., :3] = (rgb * f32(255)).astype(np.uint8)
    out[..., 3] = 255
    return out


def julia_reference(width: int, height: int, c=complex(-0.8, 0.156), iterations=200, scale=1.5) -> np.ndarray:
    """Seed 003's julia() in numpy float32, red (255, 0, 0) where the point stays bounded."""
    f32 = np.float32
    half = f32(min(width, height) // 2)
    jx = (f32(scale) * ((width >> 1) - np.arange(width)).astype(f32)) / half
    jy = (f32(scale) * ((height >> 1) - np.arange(height)).astype(f32)) / half
    ar = np.broadcast_to(jx[None, :], (height, width)).astype(f32)
    ai = np.broadcast_to(jy[:, None], (height, width)).astype(f32)
    cr, ci = f32(c.real), f32(c.imag)
    bounded = np.ones((height, width), bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(iterations):
            nr = ar * ar - ai * ai + cr
            ni = ai * ar + ar * ai + ci
            ar = np.where(bounded, nr, ar)
            ai = np.where(bounded, ni, ai)
            bounded &= ~(ar * ar + ai * ai > f32(1000))
    out = np.zeros((height, width, 4), np.uint8)
    out[..., 0] = np.where(bounded, 255, 0)
    out[..., 3] = 255
    return out
