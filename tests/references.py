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
    return _classic_escape(ar, ai, c, iterations, f32)


def julia_book_picture(width: int, height: int, **kwargs) -> np.ndarray:
    """Seed 003's picture as the book shows it: its bitmap drawn with row 0 at the bottom, here turned
    into an image whose row 0 is the top."""
    return julia_reference(width, height, **kwargs)[::-1].copy()


def julia_plane_float64(width, height, c, center=(0.0, 0.0), zoom=1.0, iterations=200, scale=1.5):
    """Escape test in float64 over the complex plane in the standard orientation: column x at real
    cx + s * (x - W/2) / h, row y (row 0 at the top) at imaginary cy + s * (H/2 - 1 - y) / h, with
    s = scale / zoom and h = min(W, H) / 2. Returns the classic colours: red where bounded."""
    f64 = np.float64
    s, half = f64(scale / zoom), f64(min(width, height) // 2)
    re = f64(center[0]) + s * (np.arange(width) - (width >> 1)).astype(f64) / half
    im = f64(center[1]) + s * ((height >> 1) - 1 - np.arange(height)).astype(f64) / half
    ar = np.broadcast_to(re[None, :], (height, width)).copy()
    ai = np.broadcast_to(im[:, None], (height, width)).copy()
    return _classic_escape(ar, ai, c, iterations, f64)


def _classic_escape(ar, ai, c, iterations, real):
    """The book's iteration z = z*z + c in the ``real`` type, from the plane (ar, ai), until |z|^2 > 1000;
    the classic colours: red where the point stays bounded."""
    cr, ci = real(c.real), real(c.imag)
    bounded = np.ones(ar.shape, bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(iterations):
            nr = ar * ar - ai * ai + cr
            ni = ai * ar + ar * ai + ci
            ar = np.where(bounded, nr, ar)
            ai = np.where(bounded, ni, ai)
            bounded &= ~(ar * ar + ai * ai > real(1000))
    out = np.zeros((*ar.shape, 4), np.uint8)
    out[..., 0] = np.where(bounded, 255, 0)
    out[..., 3] = 255
    return out


def julia_complex(width, height, c, step, iterations=200) -> np.ndarray:
    """Bounded (True) per pixel from Python complex numbers: the real part grows along a row, the
    imaginary part shrinks down the columns (the standard picture), origin near the image centre."""
    out = np.zeros((height, width), bool)
    for y in range(height):
        for x in range(width):
            z = complex((x - width // 2) * step, (height // 2 - 1 - y) * step)
            for _ in range(iterations):
                z = z * z + c
                if abs(z) ** 2 > 1000:
                    break
            else:
                out[y, x] = True
    return out


def julia_view(width, height, c=complex(-0.8, 0.156), center=(0.0, 0.0), zoom=1.0, iterations=200,
               precision="float32", colormap="classic", scale=1.5) -> np.ndarray:
    """A Julia view as the app defines it (kernels/julia/__init__.py), in numpy in ``precision``: column x at
    real cx + s * (x - W/2) / h, row y at imaginary cy + s * (H/2 - 1 - y) / h (s = scale / zoom, h = min(W, H)
    / 2), z = z*z + c until |z|^2 > 1000 after n iterations (n counted from 0). Colours: ``classic`` red
    where bounded; ``smooth`` black where bounded, else v = 3 sqrt(mu / iterations) with mu = n + 1 -
    log2(ln|z|^2 / (2 ln 2) + 1e-9) and bytes int(255 (0.5 + 0.5 cos(2 pi (v + phase)))), phases 0, 0.1, 0.2."""
    real = np.float32 if precision == "float32" else np.float64
    s, half = real(scale / zoom), real(min(width, height) // 2)
    re = real(center[0]) + s * (np.arange(width) - (width >> 1)).astype(np.float32).astype(real) / half
    im = real(center[1]) + s * ((height >> 1) - 1 - np.arange(height)).astype(np.float32).astype(real) / half
    ar = np.broadcast_to(re[None, :], (height, width)).copy()
    ai = np.broadcast_to(im[:, None], (height, width)).copy()
    cr, ci = real(c.real), real(c.imag)
    count = np.full(ar.shape, iterations)
    mag2 = np.zeros(ar.shape, real)
    live = np.ones(ar.shape, bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(iterations):
            nr = ar * ar - ai * ai + cr
            ni = ai * ar + ar * ai + ci
            ar, ai = np.where(live, nr, ar), np.where(live, ni, ai)
            m = ar * ar + ai * ai
            out = live & (m > real(1000))
            count[out], mag2[out] = i, m[out]
            live &= ~out
            if not live.any():
                break
    image = np.zeros((height, width, 4), np.uint8)
    image[..., 3] = 255
    bounded = count == iterations
    if colormap == "classic":
        image[..., 0] = np.where(bounded, 255, 0)
        return image
    esc = ~bounded
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.log(mag2[esc].astype(np.float64))
        mu = np.float32(count[esc] + 1) - np.log2(lg * 0.5 / np.log(2.0) + 1e-9).astype(np.float32)
    v = (np.float32(3.0) * np.sqrt(np.maximum(mu, np.float32(0)) / np.float32(iterations)).astype(np.float32))
    for k, phase in enumerate((0.0, 0.1, 0.2)):
        image[esc, k] = (255.0 * (0.5 + 0.5 * np.cos(6.2831853 * (v.astype(np.float64) + phase)))).astype(np.uint8)
    return image


def spheres_reference_sparse(spheres: np.ndarray, width: int, height: int) -> np.ndarray:
    """Seed 001's kernel in numpy float32 for scenes of many small spheres: the same arithmetic as
    :func:`spheres_reference`, evaluated only on the (sphere, pixel) pairs inside each sphere's bounding
    square (two pixels of margin), all pairs at once; each pixel then keeps the largest dz + z, ties to
    the lower sphere index."""
    f32 = np.float32
    s = spheres.astype(f32)
    rad, x, y, z = s[:, 3], s[:, 4], s[:, 5], s[:, 6]
    cx, cy = width // 2, height // 2
    x0 = np.clip(np.floor(x - rad).astype(np.int64) + cx - 2, 0, width)
    x1 = np.clip(np.ceil(x + rad).astype(np.int64) + cx + 3, 0, width)
    y0 = np.clip(np.floor(y - rad).astype(np.int64) + cy - 2, 0, height)
    y1 = np.clip(np.ceil(y + rad).astype(np.int64) + cy + 3, 0, height)
    bw, bh = np.maximum(x1 - x0, 0), np.maximum(y1 - y0, 0)
    sphere = np.repeat(np.arange(len(s)), bw * bh)  # one row per (sphere, pixel of its square)
    first = np.repeat(np.cumsum(bw * bh) - bw * bh, bw * bh)
    k = np.arange(sphere.size) - first
    px = x0[sphere] + k % bw[sphere]
    py = y0[sphere] + k // bw[sphere]
    dx = (px - cx).astype(f32) - x[sphere]
    dy = (py - cy).astype(f32) - y[sphere]
    r = rad[sphere]
    hit = dx * dx + dy * dy < r * r
    sphere, px, py, dx, dy, r = sphere[hit], px[hit], py[hit], dx[hit], dy[hit], r[hit]
    dz = np.sqrt(r * r - dx * dx - dy * dy).astype(f32)
    t = dz + z[sphere]
    pixel = py * width + px
    order = np.lexsort((sphere, -t, pixel))  # by pixel, then nearest, then lower index
    pixel, sphere, t, dz, r = pixel[order], sphere[order], t[order], dz[order], r[order]
    keep = np.ones(pixel.size, bool)
    keep[1:] = pixel[1:] != pixel[:-1]
    keep &= t > f32(-2e10)  # nearer than the miss value, as the kernel's first comparison needs
    rgb = np.zeros((height * width, 3), f32)
    n = dz[keep] / np.sqrt(r[keep] * r[keep])
    rgb[pixel[keep]] = s[sphere[keep], 0:3] * n[:, None]
    out = np.empty((height, width, 4), np.uint8)
    out[..., :3] = (rgb.reshape(height, width, 3) * f32(255)).astype(np.uint8)
    out[..., 3] = 255
    return out
