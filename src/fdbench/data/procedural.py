"""Seeded procedural textures for corruptions: plasma fractals (fog) and frost crystals."""

from __future__ import annotations

import numpy as np


def plasma_fractal(
    n: int, mapsize: int, wibbledecay: float, rng: np.random.Generator
) -> np.ndarray:
    """``n`` plasma fractals of ``mapsize``×``mapsize`` in [0, 1] by the diamond-square algorithm.

    A batched port of ``plasma_fractal`` of Hendrycks & Dietterich's ImageNet-C code (ICLR 2019):
    corner values are averaged and perturbed by uniform noise whose amplitude is divided by
    ``wibbledecay`` at every halving of the step size. ``mapsize`` must be a power of two.
    """
    if mapsize < 2 or mapsize & (mapsize - 1):
        raise ValueError(f"mapsize must be a power of two ≥ 2; got {mapsize}")
    maps = np.zeros((n, mapsize, mapsize), dtype=np.float64)
    stepsize = mapsize
    wibble = 100.0

    def wibbled_mean(array: np.ndarray) -> np.ndarray:
        return array / 4 + wibble * rng.uniform(-wibble, wibble, array.shape)

    while stepsize >= 2:
        half = stepsize // 2
        corners = maps[:, 0:mapsize:stepsize, 0:mapsize:stepsize]
        square = corners + np.roll(corners, shift=-1, axis=1)
        square = square + np.roll(square, shift=-1, axis=2)
        maps[:, half:mapsize:stepsize, half:mapsize:stepsize] = wibbled_mean(square)
        centres = maps[:, half:mapsize:stepsize, half:mapsize:stepsize]
        corners = maps[:, 0:mapsize:stepsize, 0:mapsize:stepsize]
        left = centres + np.roll(centres, 1, axis=1) + corners + np.roll(corners, -1, axis=2)
        maps[:, 0:mapsize:stepsize, half:mapsize:stepsize] = wibbled_mean(left)
        top = centres + np.roll(centres, 1, axis=2) + corners + np.roll(corners, -1, axis=1)
        maps[:, half:mapsize:stepsize, 0:mapsize:stepsize] = wibbled_mean(top)
        stepsize //= 2
        wibble /= wibbledecay
    maps -= maps.min(axis=(1, 2), keepdims=True)
    return maps / maps.max(axis=(1, 2), keepdims=True)


def frost_texture(size: int, rng: np.random.Generator) -> np.ndarray:
    """A ``size``×``size`` grey frost texture in [0, 1]: branching ice crystals over hoarfrost.

    Replaces the six frost photographs of ImageNet-C with a seeded synthesis: a fine-grained
    plasma fractal (hoarfrost haze) plus dendrites drawn as random branching line segments
    (Pillow), lightly blurred. Mean intensity ≈ 0.45, like the photographs.
    """
    from PIL import Image, ImageDraw, ImageFilter

    haze = plasma_fractal(1, _next_pow2(size), 1.6, rng)[0, :size, :size]
    canvas = Image.new("L", (size, size), 0)
    draw = ImageDraw.Draw(canvas)
    n_crystals = max(4, size * size // 600)
    for _ in range(n_crystals):
        stack = [(*rng.uniform(0, size, 2), rng.uniform(0, 2 * np.pi), size / 6.0, 0)]
        while stack:
            x, y, angle, length, depth = stack.pop()
            x2, y2 = x + length * np.cos(angle), y + length * np.sin(angle)
            draw.line([(x, y), (x2, y2)], fill=int(rng.uniform(150, 255)), width=1)
            if depth < 3:
                for t in rng.uniform(0.3, 1.0, 2):
                    bx, by = x + t * (x2 - x), y + t * (y2 - y)
                    turn = rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 1.1)
                    stack.append((bx, by, angle + turn, length * 0.55, depth + 1))
    crystals = np.asarray(canvas.filter(ImageFilter.GaussianBlur(0.6)), dtype=np.float64) / 255
    return np.clip(0.45 * haze + 1.2 * crystals + 0.15, 0.0, 1.0)


def _next_pow2(n: int) -> int:
    return 1 << max(1, int(np.ceil(np.log2(max(n, 2)))))
