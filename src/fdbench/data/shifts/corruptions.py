"""The 15 corruptions of Hendrycks & Dietterich (ICLR 2019) at 5 severities, NumPy/SciPy/Pillow.

Re-implementation of ImageNet-C / CIFAR-10-C without OpenCV or ImageMagick, vectorised over the
batch and tuned for 28×28 images (spatial parameters scale with ``min(H, W) / 28``). Every
corruption draws its random numbers in the same order at every severity, so with one seed the
severities differ only by their parameters: the mean absolute pixel change grows strictly with
severity. Frost uses seeded procedural textures
(:func:`fdbench.data.shifts.procedural.frost_texture`) instead of the six frost photographs, laid
over the image as a translucent ice layer (``x + c · frost · (ice − x)``, a blend towards bluish
white whose opacity grows with severity) rather than ImageNet-C's ``c₀ · x + c₁ · frost``, whose
image weight c₀ falling with severity made the change shrink from one severity to the next on bright
colour images.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
from scipy import ndimage

from fdbench.core.io import atomic_path
from fdbench.data.shifts.procedural import _next_pow2, frost_texture, plasma_fractal

CORRUPTIONS = (
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "zoom_blur",
    "snow",
    "frost",
    "fog",
    "brightness",
    "contrast",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",
)
SEVERITIES = (1, 2, 3, 4, 5)

#: Parameters per corruption, one entry per severity 1..5 (28×28 scale for spatial ones).
PARAMS: dict[str, tuple] = {
    "gaussian_noise": (0.08, 0.12, 0.18, 0.26, 0.38),  # noise std
    "shot_noise": (40.0, 15.0, 7.0, 3.5, 2.0),  # photons per unit intensity
    "impulse_noise": (0.03, 0.06, 0.10, 0.17, 0.27),  # salt-and-pepper fraction
    "defocus_blur": ((1.0, 0.3), (1.6, 0.4), (2.3, 0.5), (3.0, 0.5), (4.0, 0.5)),  # radius, alias
    "glass_blur": (
        (0.6, 1, 1),
        (0.7, 1, 2),
        (0.8, 1, 3),
        (0.9, 2, 2),
        (1.0, 2, 3),
    ),  # sigma, delta, it.
    "motion_blur": ((4, 1.0), (6, 1.8), (8, 2.6), (10, 3.4), (12, 4.5)),  # length, sigma
    "zoom_blur": (0.10, 0.16, 0.22, 0.30, 0.40),  # largest zoom − 1
    "snow": (
        (0.1, 0.2, 1.0, 0.6, 4, 1.5, 0.95),
        (0.1, 0.2, 1.0, 0.5, 5, 2.0, 0.9),
        (0.15, 0.3, 1.75, 0.55, 5, 2.0, 0.88),
        (0.25, 0.3, 2.25, 0.6, 6, 3.0, 0.85),
        (0.3, 0.3, 1.25, 0.65, 7, 4.0, 0.8),
    ),  # loc, scale, zoom, threshold, motion length, motion sigma, blend
    "frost": (0.2, 0.3, 0.4, 0.5, 0.6),  # opacity of the ice layer per unit frost density
    "fog": ((0.2, 3.0), (0.5, 3.0), (0.75, 2.5), (1.0, 2.0), (1.5, 1.75)),  # strength, decay
    "brightness": (0.1, 0.2, 0.3, 0.4, 0.5),  # added to HSV value
    "contrast": (0.6, 0.45, 0.3, 0.2, 0.1),  # contrast factor
    "elastic_transform": ((0.6, 0.6), (0.9, 0.9), (1.2, 1.2), (1.6, 1.6), (2.0, 2.0)),
    "pixelate": (0.36, 0.25, 0.18, 0.143, 0.107),  # down-sampling factor: 10, 7, 5, 4, 3 px
    "jpeg_compression": (18, 10, 7, 4, 2),  # JPEG quality
}
_FROST_TEXTURES = 4
_ELASTIC_SMOOTHNESS = 2.5  # Gaussian sigma of the displacement field at 28×28


# --------------------------------------------------------------------------- helpers


def _scale(x: np.ndarray) -> float:
    return min(x.shape[1], x.shape[2]) / 28.0


def _grey(x: np.ndarray) -> np.ndarray:
    if x.shape[-1] == 1:
        return x
    return (x @ np.array([0.299, 0.587, 0.114]))[..., None]


def _shift(x: np.ndarray, dy: np.ndarray, dx: np.ndarray) -> np.ndarray:
    """Translate image i by (dy[i], dx[i]) pixels, bilinear, edge pixels repeated."""
    n, h, w, _ = x.shape
    iy, ix = np.floor(dy).astype(np.int64), np.floor(dx).astype(np.int64)
    fy, fx = (dy - iy)[:, None, None, None], (dx - ix)[:, None, None, None]
    rows = np.arange(h)[None, :] - iy[:, None]
    cols = np.arange(w)[None, :] - ix[:, None]
    b = np.arange(n)[:, None, None]

    def take(r: np.ndarray, c: np.ndarray) -> np.ndarray:
        return x[b, np.clip(r, 0, h - 1)[:, :, None], np.clip(c, 0, w - 1)[:, None, :]]

    return (
        (1 - fy) * (1 - fx) * take(rows, cols)
        + fy * (1 - fx) * take(rows - 1, cols)
        + (1 - fy) * fx * take(rows, cols - 1)
        + fy * fx * take(rows - 1, cols - 1)
    )


def _motion(x: np.ndarray, length: float, sigma: float, angles: np.ndarray) -> np.ndarray:
    """One-sided Gaussian motion blur along ``angles`` (degrees, one per image), as ImageMagick."""
    taps = np.arange(int(np.ceil(length)) + 1, dtype=np.float64)
    weights = np.exp(-(taps**2) / (2 * sigma**2))
    weights /= weights.sum()
    rad = np.deg2rad(angles)
    out = np.zeros_like(x)
    for k, wk in zip(taps, weights, strict=True):
        out += wk * _shift(x, k * np.sin(rad), k * np.cos(rad))
    return out


def _resample_axis(x: np.ndarray, coords: np.ndarray, axis: int) -> np.ndarray:
    lo = np.clip(np.floor(coords).astype(np.int64), 0, x.shape[axis] - 1)
    hi = np.clip(lo + 1, 0, x.shape[axis] - 1)
    frac = np.clip(coords - lo, 0.0, 1.0)
    shape = [1] * x.ndim
    shape[axis] = -1
    frac = frac.reshape(shape)
    return (1 - frac) * np.take(x, lo, axis=axis) + frac * np.take(x, hi, axis=axis)


def _zoom(x: np.ndarray, factor: float) -> np.ndarray:
    """Zoom into the centre by ``factor`` ≥ 1, keeping the size (ImageNet-C's clipped_zoom)."""
    h, w = x.shape[1], x.shape[2]
    rows = (h - 1) / 2 + (np.arange(h) - (h - 1) / 2) / factor
    cols = (w - 1) / 2 + (np.arange(w) - (w - 1) / 2) / factor
    return _resample_axis(_resample_axis(x, rows, 1), cols, 2)


def _disk(radius: float, alias_blur: float) -> np.ndarray:
    """Disk kernel of ``radius`` with an anti-aliased rim (each pixel weighted by how far inside
    the circle its centre lies, clipped to [0, 1]), so the kernel grows continuously with the
    radius even below a pixel; then ImageNet-C's Gaussian alias blur."""
    half = int(np.ceil(radius)) + 1
    grid = np.arange(-half, half + 1)
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    kernel = np.clip(radius + 0.5 - np.hypot(yy, xx), 0.0, 1.0)
    kernel = ndimage.gaussian_filter(kernel / kernel.sum(), alias_blur)
    return kernel / kernel.sum()


def _pil_map(x: np.ndarray, fn: Callable) -> np.ndarray:
    from PIL import Image

    u8 = np.rint(np.clip(x, 0, 1) * 255).astype(np.uint8)
    out = np.empty_like(u8)
    for i, img in enumerate(u8):
        pil = Image.fromarray(img[..., 0] if img.shape[-1] == 1 else img)
        res = np.asarray(fn(pil), dtype=np.uint8)
        out[i] = res.reshape(img.shape)
    return out.astype(np.float64) / 255


# --------------------------------------------------------------------------- corruptions
# Each takes x (float64 N×H×W×C in [0, 1]), the severity's parameters and a Generator.


def _gaussian_noise(x, c, rng):
    return x + rng.normal(size=x.shape) * c


def _shot_noise(x, c, rng):
    return rng.poisson(x * c) / c


def _impulse_noise(x, c, rng):
    u = rng.uniform(size=x.shape)
    salt = rng.uniform(size=x.shape) < 0.5
    return np.where(u < c, salt.astype(np.float64), x)


def _defocus_blur(x, c, rng):
    kernel = _disk(c[0] * _scale(x), c[1])
    return ndimage.convolve(x, kernel[None, :, :, None], mode="reflect")


def _glass_blur(x, c, rng):
    sigma, delta, iterations = c[0] * _scale(x), c[1], c[2]
    n, h, w, _ = x.shape
    x = ndimage.gaussian_filter(x, sigma=(0, sigma, sigma, 0))
    b = np.arange(n)[:, None, None]
    base_r, base_c = np.arange(h)[None, :, None], np.arange(w)[None, None, :]
    draws = rng.uniform(-1, 1, size=(3, 2, n, h, w))  # same draws at every severity
    for it in range(iterations):
        dy, dx = np.rint(draws[it] * delta).astype(np.int64)
        x = x[b, np.clip(base_r + dy, 0, h - 1), np.clip(base_c + dx, 0, w - 1)]
    return ndimage.gaussian_filter(x, sigma=(0, sigma, sigma, 0))


def _motion_blur(x, c, rng):
    angles = rng.uniform(-45, 45, size=x.shape[0])
    return _motion(x, c[0] * _scale(x), c[1] * _scale(x), angles)


def _zoom_blur(x, c, rng):
    factors = np.arange(1.0, 1.0 + c + 1e-9, 0.02)[1:]
    out = x.copy()
    for z in factors:
        out += _zoom(x, z)
    return out / (len(factors) + 1)


def _snow(x, c, rng):
    loc, scale, zoom, threshold, length, sigma, blend = c
    n, h, w, _ = x.shape
    layer = loc + scale * rng.normal(size=(n, h, w, 1))
    layer = _zoom(layer, zoom) if zoom > 1 else layer
    layer = np.where(layer < threshold, 0.0, layer)
    angles = rng.uniform(-135, -45, size=n)
    layer = _motion(layer, length * _scale(x), sigma * _scale(x), angles)
    lifted = np.maximum(x, _grey(x) * 1.5 + 0.5)
    x = blend * x + (1 - blend) * lifted
    return x + layer + np.rot90(layer, k=2, axes=(1, 2))


def _frost(x, c, rng):
    n, h, w, ch = x.shape
    size = max(h, w) * 2
    textures = np.stack([frost_texture(size, rng) for _ in range(_FROST_TEXTURES)])
    pick = rng.integers(0, _FROST_TEXTURES, size=n)
    top = rng.integers(0, size - h + 1, size=n)
    left = rng.integers(0, size - w + 1, size=n)
    crops = textures[
        pick[:, None, None],
        top[:, None, None] + np.arange(h)[None, :, None],
        left[:, None, None] + np.arange(w)[None, None, :],
    ][..., None]
    ice = np.array([0.85, 0.93, 1.0]) if ch == 3 else np.ones(1)  # bluish white
    return x + c * crops * (ice - x)


def _fog(x, c, rng):
    n, h, w, _ = x.shape
    maps = plasma_fractal(n, _next_pow2(max(h, w)), c[1], rng)[:, :h, :w, None]
    peak = x.max(axis=(1, 2, 3), keepdims=True)
    return (x + c[0] * maps) * peak / (peak + c[0])


def _brightness(x, c, rng):
    # Raising HSV value V by c at fixed hue and saturation scales RGB by V' / V.
    value = x.max(axis=-1, keepdims=True)
    new = np.clip(value + c, 0, 1)
    return np.where(value > 0, x * new / np.maximum(value, 1e-12), new)


def _contrast(x, c, rng):
    means = x.mean(axis=(1, 2), keepdims=True)
    return (x - means) * c + means


def _elastic_transform(x, c, rng):
    alpha, affine = c[0] * _scale(x), c[1] * _scale(x)
    n, h, w, ch = x.shape
    smooth = _ELASTIC_SMOOTHNESS * _scale(x)
    field = ndimage.gaussian_filter(rng.uniform(-1, 1, (2, n, h, w)), (0, 0, smooth, smooth))
    field /= field.std(axis=(2, 3), keepdims=True) + 1e-12
    jac = rng.uniform(-1, 1, (n, 2, 2)) / (max(h, w) / 2)
    shift = rng.uniform(-1, 1, (n, 2))
    yy, xx = np.meshgrid(np.arange(h) - (h - 1) / 2, np.arange(w) - (w - 1) / 2, indexing="ij")
    dy = affine * (
        jac[:, 0, 0, None, None] * yy + jac[:, 0, 1, None, None] * xx + shift[:, 0, None, None]
    )
    dx = affine * (
        jac[:, 1, 0, None, None] * yy + jac[:, 1, 1, None, None] * xx + shift[:, 1, None, None]
    )
    rows = np.arange(h)[None, :, None] + dy + alpha * field[0]
    cols = np.arange(w)[None, None, :] + dx + alpha * field[1]
    coords = np.stack(
        [
            np.broadcast_to(np.arange(n)[:, None, None, None], (n, h, w, ch)),
            np.broadcast_to(rows[..., None], (n, h, w, ch)),
            np.broadcast_to(cols[..., None], (n, h, w, ch)),
            np.broadcast_to(np.arange(ch)[None, None, None, :], (n, h, w, ch)),
        ]
    )
    return ndimage.map_coordinates(x, coords, order=1, mode="reflect")


def _pixel_counts(n: int) -> tuple[int, ...]:
    """Pixels kept along a side of ``n`` pixels at severities 1..5: ``round(n · factor)``, raised
    where needed so that the counts fall strictly (at least 5 − s + 1 at severity s; on 28
    pixels 10, 7, 5, 4, 3 as ImageNet-C's factors give)."""
    counts = [max(round(n * f), len(SEVERITIES) - i) for i, f in enumerate(PARAMS["pixelate"])]
    for i in range(len(counts) - 2, -1, -1):
        counts[i] = max(counts[i], counts[i + 1] + 1)
    return tuple(counts)


def _pixelate(x, c, rng):
    from PIL import Image

    h, w = x.shape[1], x.shape[2]
    level = PARAMS["pixelate"].index(c)
    small = (_pixel_counts(w)[level], _pixel_counts(h)[level])
    return _pil_map(x, lambda im: im.resize(small, Image.BOX).resize((w, h), Image.BOX))


def _jpeg_compression(x, c, rng):
    import io

    from PIL import Image

    def roundtrip(im):
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=int(c))
        return Image.open(buf).convert(im.mode)

    return _pil_map(x, roundtrip)


_FUNCTIONS: dict[str, Callable] = {name: globals()[f"_{name}"] for name in CORRUPTIONS}


# --------------------------------------------------------------------------- public API


def _check_images(images: object) -> np.ndarray:
    if not isinstance(images, np.ndarray) or images.dtype != np.uint8:
        raise TypeError("images must be a uint8 numpy array")
    if images.ndim != 4 or images.shape[-1] not in (1, 3):
        raise ValueError(f"images must be N×H×W×C with C in (1, 3); got shape {images.shape}")
    return images


def corrupt(
    images: np.ndarray,
    corruption: str,
    severity: int,
    *,
    seed: int | np.random.Generator = 0,
) -> np.ndarray:
    """Apply ``corruption`` at ``severity`` (1..5) to uint8 N×H×W×C ``images``.

    Corruptions of Hendrycks & Dietterich, "Benchmarking Neural Network Robustness to Common
    Corruptions and Perturbations", ICLR 2019 (see :data:`CORRUPTIONS`, :data:`PARAMS`). Returns
    a new uint8 array of the same shape; the result is a deterministic function of ``seed``.
    """
    images = _check_images(images)
    if corruption not in _FUNCTIONS:
        raise ValueError(f"corruption must be one of {CORRUPTIONS}; got {corruption!r}")
    if isinstance(severity, bool) or not isinstance(severity, int | np.integer):
        raise TypeError(f"severity must be an int in 1..5; got {type(severity).__name__}")
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be in 1..5; got {severity}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if images.shape[0] == 0:
        return images.copy()
    x = images.astype(np.float64) / 255.0
    out = _FUNCTIONS[corruption](x, PARAMS[corruption][severity - 1], rng)
    return np.rint(np.clip(out, 0.0, 1.0) * 255.0).astype(np.uint8)


def corruption_grid(
    images: np.ndarray,
    *,
    seed: int = 0,
    corruptions: Iterable[str] = CORRUPTIONS,
    severities: Iterable[int] = SEVERITIES,
) -> dict[tuple[str, int], np.ndarray]:
    """All corrupted versions of ``images``: (corruption, severity) → uint8 array.

    Each corruption gets its own seed derived from ``seed`` and its position in
    :data:`CORRUPTIONS`, shared by its severities (so severities differ only by parameters).
    """
    images = _check_images(images)
    out = {}
    for name in corruptions:
        if name not in _FUNCTIONS:
            raise ValueError(f"corruptions must be names from {CORRUPTIONS}; got {name!r}")
        sub_seed = np.random.SeedSequence([seed, CORRUPTIONS.index(name)])
        for severity in severities:
            out[name, severity] = corrupt(
                images, name, severity, seed=np.random.default_rng(sub_seed)
            )
    return out


def show_corruptions(
    images: np.ndarray | None,
    out_path: str | os.PathLike,
    *,
    seed: int = 0,
    data_dir: str | os.PathLike | None = None,
) -> Path:
    """Draw a PNG grid: one row per corruption, columns clean + severities 1..5.

    Each cell shows the same few ``images`` side by side (default: the first three Fashion-MNIST
    test images). Returns the path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if images is None:
        from fdbench.data.sources.datasets import load_dataset

        images = load_dataset("fashion_mnist", "test", data_dir=data_dir).images[:3]
    images = _check_images(images)
    grid = corruption_grid(images, seed=seed)
    fig, axes = plt.subplots(
        len(CORRUPTIONS), 6, figsize=(6 * 0.6 * images.shape[0], len(CORRUPTIONS) * 0.62)
    )
    for row, name in enumerate(CORRUPTIONS):
        cells = [images] + [grid[name, s] for s in SEVERITIES]
        for col, cell in enumerate(cells):
            ax = axes[row, col]
            strip = np.concatenate(list(cell), axis=1)
            ax.imshow(
                strip[..., 0] if strip.shape[-1] == 1 else strip,
                cmap="gray",
                vmin=0,
                vmax=255,
                interpolation="nearest",
            )
            ax.set_xticks([])
            ax.set_yticks([])
            if row == 0:
                ax.set_title("clean" if col == 0 else f"severity {col}", fontsize=7)
            if col == 0:
                ax.set_ylabel(name, fontsize=6, rotation=0, ha="right", va="center")
    fig.subplots_adjust(left=0.16, right=0.99, top=0.97, bottom=0.01, wspace=0.04, hspace=0.08)
    out_path = Path(out_path)
    with atomic_path(out_path) as tmp:
        fig.savefig(tmp, dpi=150, format="png")
    plt.close(fig)
    return out_path
