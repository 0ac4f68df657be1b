"""Seeded procedural textures for corruptions: plasma fractals (fog) and frost (ice on glass)."""

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


#: Resolution at which frost is drawn before it is resized to the requested size, so that a
#: texture looks the same (relative to its size) at any size, as ImageNet-C's frost photographs
#: rescaled for CIFAR-10-C.
FROST_DRAW_SIZE = 256


def frost_texture(size: int, rng: np.random.Generator) -> np.ndarray:
    """A ``size``×``size`` grey frost texture in [0, 1]: ice on a window pane.

    Replaces the six frost photographs of ImageNet-C with a seeded synthesis drawn at
    ``max(FROST_DRAW_SIZE, size)`` pixels and box-resized to ``size``: a coverage map (a plasma
    fractal, clipped so that some of the pane stays clear) carries fine hoarfrost grain and
    feathery dendrites — stems with side branches and sub-branches at ±60° (the hexagonal
    habit of ice), drawn with Pillow where the coverage is high. Mean intensity ≈ 0.4.
    """
    from PIL import Image, ImageDraw, ImageFilter
    from scipy import ndimage

    if size < 1:
        raise ValueError(f"size must be ≥ 1; got {size}")
    n = max(FROST_DRAW_SIZE, size)
    scale = n / FROST_DRAW_SIZE
    cover = plasma_fractal(1, _next_pow2(n), 1.8, rng)[0, :n, :n]
    cover = np.clip((cover - 0.25) / 0.55, 0.0, 1.0)
    grain = ndimage.gaussian_filter(rng.random((n, n)), 0.7 * scale)
    grain = np.clip((grain - grain.mean()) / grain.std() * 0.5 + 0.5, 0.0, 1.0) ** 3
    canvas = Image.new("L", (n, n), 0)
    draw = ImageDraw.Draw(canvas)
    starts = rng.choice(n * n, size=round(45 * scale**2), p=cover.ravel() / cover.sum())
    for start in starts:
        _dendrite(draw, *divmod(float(start), n)[::-1], n, scale, rng)
    crystals = np.asarray(canvas.filter(ImageFilter.GaussianBlur(0.5 * scale)), np.float64) / 255
    texture = 0.1 + 0.35 * cover + 0.6 * grain * cover + 0.9 * crystals * (0.5 + 0.5 * cover)
    texture = np.clip(texture, 0.0, 1.0).astype(np.float32)
    if n != size:
        texture = np.asarray(Image.fromarray(texture, mode="F").resize((size, size), Image.BOX))
    return np.clip(texture.astype(np.float64), 0.0, 1.0)


def _dendrite(draw, x: float, y: float, n: int, scale: float, rng: np.random.Generator) -> None:
    """Draw one ice dendrite from (x, y): a slightly curving stem of ten segments, each with a
    side branch on both sides at ±60° (shorter towards the tip), each side branch with two
    pairs of sub-branches at ±60°."""
    angle = rng.uniform(0.0, 2.0 * np.pi)
    length = rng.uniform(0.06, 0.2) * n
    shade = rng.uniform(140.0, 255.0)
    steps = 10
    for k in range(steps):
        angle += rng.normal(0.0, 0.08)
        x2, y2 = x + length / steps * np.cos(angle), y + length / steps * np.sin(angle)
        draw.line([(x, y), (x2, y2)], fill=int(shade), width=max(1, round(scale)))
        for side in (-1.0, 1.0):
            a = angle + side * np.pi / 3 + rng.normal(0.0, 0.1)
            branch = 0.45 * length * (1 - k / steps) * rng.uniform(0.6, 1.0)
            draw.line(
                [(x, y), (x + branch * np.cos(a), y + branch * np.sin(a))],
                fill=int(0.85 * shade),
                width=1,
            )
            for t in (0.35, 0.7):
                px, py = x + t * branch * np.cos(a), y + t * branch * np.sin(a)
                twig = 0.3 * branch * (1 - t)
                for side2 in (-1.0, 1.0):
                    a2 = a + side2 * np.pi / 3
                    draw.line(
                        [(px, py), (px + twig * np.cos(a2), py + twig * np.sin(a2))],
                        fill=int(0.7 * shade),
                        width=1,
                    )
        x, y = x2, y2


def _next_pow2(n: int) -> int:
    return 1 << max(1, int(np.ceil(np.log2(max(n, 2)))))
