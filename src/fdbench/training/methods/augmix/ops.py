"""AugMix (Hendrycks, Mu, Cubuk, Zoph, Gilmer & Lakshminarayanan, ICLR 2020) in pure PyTorch.

Each training image gets two AugMix views: ``width`` chains of 1–3 (or ``depth``) random
operations, mixed with Dirichlet(α) weights, then mixed with the clean image by a Beta(α, α)
weight (the paper's Algorithm 1). The loss is cross-entropy on the clean images plus λ = 12
times the Jensen–Shannon consistency of the clean and the two augmented posteriors. Settings
of Kim et al.'s CIFAR benchmark (``methods/augmix/augmix_loader.py``, ``methods/augmix/train.py``
of daintlab/unknown-detection-benchmarks): width 3, random depth 1–3, severity 3, α = 1, the
operation list without the ones overlapping the test corruptions (autocontrast, equalize,
posterize, rotate, solarize, shear x / y, translate x / y; ``augmentations.augmentations``).

The operations act on uint8 batches N × C × H × W (grey or colour) with per-image parameters
drawn from a ``torch.Generator``, re-implementing Pillow's ``ImageOps`` point operations
exactly and its affine transforms with bilinear sampling (pixel centres, zero fill).
Mixing happens on the 0..255 scale in float; since the network's standardisation is affine
and the weights sum to 1, this equals the authors' mixing of standardised images.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

__all__ = [
    "AUGMIX_OPERATIONS",
    "AUGMIX_WEIGHT",
    "augmix",
    "jensen_shannon_consistency",
    "mix_views",
]

#: Weight of the Jensen–Shannon consistency term (Hendrycks et al. 2020; Kim et al.).
AUGMIX_WEIGHT = 12.0


def _check_batch(x: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor) or x.dtype != torch.uint8 or x.ndim != 4:
        raise ValueError(
            "x must be a uint8 tensor N × C × H × W, got "
            f"{getattr(x, 'dtype', type(x).__name__)} {tuple(getattr(x, 'shape', ()))}"
        )


def _sample_level(severity: float, n: int, generator: torch.Generator) -> torch.Tensor:
    """The authors' ``sample_level``: uniform in [0.1, severity), one per image (float64)."""
    u = torch.rand(n, generator=generator, dtype=torch.float64)
    return 0.1 + u * (severity - 0.1)


def _random_sign(n: int, generator: torch.Generator) -> torch.Tensor:
    return torch.where(torch.rand(n, generator=generator) > 0.5, -1.0, 1.0).double()


def _apply_lut(x: torch.Tensor, lut: torch.Tensor) -> torch.Tensor:
    """Map every pixel through a per-(image, channel) look-up table ``lut`` (N × C × 256)."""
    n, c, h, w = x.shape
    flat = x.reshape(n, c, h * w).long()
    return lut.gather(2, flat).reshape(n, c, h, w).to(torch.uint8)


def autocontrast(x: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
    """Pillow's ``ImageOps.autocontrast(img)`` per image and channel: the channel's range
    [lo, hi] is stretched to [0, 255] by ``⌊(v − lo) · 255 / (hi − lo)⌋``; constant channels
    are left unchanged. ``level`` is unused."""
    lo = x.amin(dim=(2, 3)).double().numpy()[..., None]
    hi = x.amax(dim=(2, 3)).double().numpy()[..., None]
    values = np.arange(256, dtype=np.float64)
    scale = 255.0 / np.maximum(hi - lo, 1.0)  # NumPy's division, correctly rounded as Pillow's
    lut = np.where(hi > lo, np.clip(np.floor(values * scale + -lo * scale), 0, 255), values)
    lut = torch.from_numpy(lut)
    return _apply_lut(x, lut.long())


def equalize(x: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
    """Pillow's ``ImageOps.equalize(img)`` per image and channel: with histogram ``h``,
    ``step = ⌊(Σh − h[last non-empty bin]) / 255⌋``, value ``i`` maps to
    ``⌊(⌊step/2⌋ + Σ_{k<i} h_k) / step⌋`` (clipped to 255); unchanged where ``step`` = 0.
    ``level`` is unused."""
    n, c, h, w = x.shape
    flat = x.reshape(n * c, h * w).long()
    hist = torch.zeros(n * c, 256, dtype=torch.long).scatter_add_(1, flat, torch.ones_like(flat))
    last = 255 - (hist.flip(1) > 0).long().argmax(dim=1)
    step = (hist.sum(dim=1) - hist.gather(1, last.view(-1, 1)).squeeze(1)) // 255
    before = torch.cumsum(hist, dim=1) - hist
    safe = step.clamp(min=1).view(-1, 1)
    lut = ((safe // 2 + before) // safe).clamp(max=255)
    identity = torch.arange(256).expand_as(lut)
    lut = torch.where((step > 0).view(-1, 1), lut, identity)
    return _apply_lut(x, lut.view(n, c, 256))


def posterize(x: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
    """Pillow's ``ImageOps.posterize(img, bits)`` with ``bits = 4 − ⌊level · 4 / 10⌋``: keep
    the ``bits`` highest bits of every value."""
    bits = 4 - (level * 4 / 10).floor().long()
    mask = (256 - torch.pow(2, 8 - bits)).to(torch.uint8).view(-1, 1, 1, 1)
    return x & mask


def solarize(x: torch.Tensor, level: torch.Tensor) -> torch.Tensor:
    """Pillow's ``ImageOps.solarize(img, threshold)`` with ``threshold = 256 − ⌊level · 256 /
    10⌋``: values ``v >= threshold`` become ``255 − v``."""
    threshold = (256 - (level * 256 / 10).floor()).view(-1, 1, 1, 1)
    return torch.where(x.double() >= threshold, 255 - x, x)


def _affine(x: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:
    """Resample each image at ``matrix @ (col, row, 1)`` (N × 2 × 3, output pixel centre →
    input position, pixel centres at integer + ½), bilinear, zero outside (Pillow's
    ``Image.transform(AFFINE, resample=BILINEAR)``), rounded to uint8."""
    n, c, h, w = x.shape
    scale_in = torch.tensor([[2.0 / w, 0.0, -1.0], [0.0, 2.0 / h, -1.0]], dtype=torch.float64)
    to_pixels = torch.tensor(
        [[w / 2.0, 0.0, w / 2.0], [0.0, h / 2.0, h / 2.0], [0.0, 0.0, 1.0]], dtype=torch.float64
    )
    full = torch.cat([matrix, torch.tensor([[[0.0, 0.0, 1.0]]]).double().expand(n, 1, 3)], 1)
    theta = scale_in @ full @ to_pixels
    grid = F.affine_grid(theta.float(), [n, c, h, w], align_corners=False)
    out = F.grid_sample(x.float(), grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    return out.round().clamp(0, 255).to(torch.uint8)


def rotate(x: torch.Tensor, level: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Rotation about the centre by ``±⌊level · 30 / 10⌋`` degrees (sign drawn per image),
    counter-clockwise for positive angles (Pillow's ``Image.rotate``)."""
    degrees = (level * 30 / 10).floor() * _random_sign(len(x), generator)
    rad = degrees * (math.pi / 180)
    cos, sin = torch.cos(rad), torch.sin(rad)
    h, w = x.shape[2:]
    cx, cy = w / 2.0, h / 2.0
    m = torch.zeros(len(x), 2, 3, dtype=torch.float64)
    m[:, 0, 0], m[:, 0, 1] = cos, -sin
    m[:, 1, 0], m[:, 1, 1] = sin, cos
    m[:, 0, 2] = cx - cos * cx + sin * cy
    m[:, 1, 2] = cy - sin * cx - cos * cy
    return _affine(x, m)


def _shear(axis: int) -> Callable[..., torch.Tensor]:
    def shear(x: torch.Tensor, level: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        amount = level * 0.3 / 10 * _random_sign(len(x), generator)
        m = torch.zeros(len(x), 2, 3, dtype=torch.float64)
        m[:, 0, 0] = m[:, 1, 1] = 1.0
        m[:, axis, 1 - axis] = amount
        return _affine(x, m)

    shear.__doc__ = (
        f"Shear along {'xy'[axis]}: the input position of output (col, row) is offset along "
        f"{'xy'[axis]} by ``±level · 0.3 / 10`` times the other coordinate (Pillow's affine "
        f"``(1, a, 0, 0, 1, 0)`` / ``(1, 0, 0, a, 1, 0)``)."
    )
    return shear


def _translate(axis: int) -> Callable[..., torch.Tensor]:
    def translate(x: torch.Tensor, level: torch.Tensor, generator: torch.Generator):
        size = x.shape[3 - axis]
        pixels = (level * (size / 3) / 10).floor() * _random_sign(len(x), generator)
        m = torch.zeros(len(x), 2, 3, dtype=torch.float64)
        m[:, 0, 0] = m[:, 1, 1] = 1.0
        m[:, axis, 2] = pixels
        return _affine(x, m)

    translate.__doc__ = (
        f"Translation along {'xy'[axis]} by ``±⌊level · side / 3 / 10⌋`` pixels (Pillow's "
        "affine with that offset)."
    )
    return translate


def _pointwise(op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]):
    def wrapped(x: torch.Tensor, level: torch.Tensor, generator: torch.Generator):
        return op(x, level)

    wrapped.__doc__ = op.__doc__
    return wrapped


#: The AugMix operations of Kim et al. and Hendrycks et al. (``augmentations.augmentations``),
#: none of which is one of the test corruptions: name → ``op(x, level, generator)``.
AUGMIX_OPERATIONS: dict[str, Callable[..., torch.Tensor]] = {
    "autocontrast": _pointwise(autocontrast),
    "equalize": _pointwise(equalize),
    "posterize": _pointwise(posterize),
    "rotate": rotate,
    "solarize": _pointwise(solarize),
    "shear_x": _shear(0),
    "shear_y": _shear(1),
    "translate_x": _translate(0),
    "translate_y": _translate(1),
}


def _chain_step(x: torch.Tensor, severity: float, generator: torch.Generator) -> torch.Tensor:
    """One operation per image: draws the operation (uniform over the list) and the level of
    every image, then each operation's own draws for the images that chose it, in list
    order."""
    n = len(x)
    names = list(AUGMIX_OPERATIONS)
    choice = torch.randint(0, len(names), (n,), generator=generator)
    level = _sample_level(severity, n, generator)
    out = x.clone()
    for k, name in enumerate(names):
        chosen = torch.nonzero(choice == k).flatten()
        if len(chosen):
            out[chosen] = AUGMIX_OPERATIONS[name](x[chosen], level[chosen], generator)
    return out


def augmix(
    x: torch.Tensor,
    generator: torch.Generator,
    *,
    width: int = 3,
    depth: int = -1,
    severity: float = 3.0,
    alpha: float = 1.0,
) -> torch.Tensor:
    """AugMix views (float32, 0..255 scale, N × C × H × W) of a uint8 batch ``x``.

    Per image: ``w ~ Dirichlet(α·1_width)``, ``m ~ Beta(α, α)`` (drawn by a NumPy generator
    seeded from ``generator``); chain ``i`` applies
    ``depth`` operations (1–3, drawn per image and chain, when ``depth`` <= 0) of
    :data:`AUGMIX_OPERATIONS` at levels uniform in [0.1, ``severity``); the result is
    ``(1 − m) · x + m · Σ_i w_i · chain_i(x)``, a convex combination of the image and its
    augmented copies (Hendrycks et al. 2020, Algorithm 1).
    """
    _check_batch(x)
    if not isinstance(width, int) or width < 1:
        raise ValueError(f"width must be an int >= 1, got {width!r}")
    if not isinstance(depth, int) or depth > 3 or depth == 0 or depth < -1:
        raise ValueError(f"depth must be 1, 2, 3 or -1 (random 1–3), got {depth!r}")
    if not 0 < severity <= 10:
        raise ValueError(f"severity must lie in (0, 10], got {severity}")
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha}")
    n = len(x)
    rng = np.random.default_rng(int(torch.randint(0, 2**62, (1,), generator=generator)))
    weights = torch.from_numpy(rng.dirichlet([alpha] * width, size=n))
    m = torch.from_numpy(rng.beta(alpha, alpha, size=n))
    chains = [_chain(x, generator, depth, severity) for _ in range(width)]
    return mix_views(x, chains, weights, m)


def _chain(x: torch.Tensor, generator: torch.Generator, depth: int, severity: float):
    """One augmentation chain per image: ``depth`` operations, or 1–3 drawn per image."""
    n = len(x)
    if depth > 0:
        steps = torch.full((n,), depth)
    else:
        steps = torch.randint(1, 4, (n,), generator=generator)
    image = x
    for s in range(int(steps.max())):
        stepped = _chain_step(image, severity, generator)
        image = torch.where((steps > s).view(-1, 1, 1, 1), stepped, image)
    return image


def mix_views(
    x: torch.Tensor, chains: list[torch.Tensor], weights: torch.Tensor, m: torch.Tensor
) -> torch.Tensor:
    """``(1 − m) · x + m · Σ_i w_i · chains[i]`` per image (float32, computed in float64):
    ``weights`` N × len(chains) on the simplex, ``m`` (N) in [0, 1]."""
    weights = torch.as_tensor(weights, dtype=torch.float64)
    m = torch.as_tensor(m, dtype=torch.float64)
    if weights.shape != (len(x), len(chains)) or m.shape != (len(x),):
        raise ValueError(
            f"weights must be N × {len(chains)} and m of length N = {len(x)}, got "
            f"{tuple(weights.shape)} and {tuple(m.shape)}"
        )
    if (weights < 0).any() or not torch.allclose(weights.sum(1), torch.ones(len(x)).double()):
        raise ValueError("every row of weights must be non-negative and sum to 1")
    if ((m < 0) | (m > 1)).any():
        raise ValueError("m must lie in [0, 1]")
    mix = torch.zeros(x.shape, dtype=torch.float64)
    for i, image in enumerate(chains):
        mix += weights[:, i].view(-1, 1, 1, 1) * image.double()
    m = m.view(-1, 1, 1, 1)
    return ((1 - m) * x.double() + m * mix).float()


def jensen_shannon_consistency(*logits: torch.Tensor, eps: float = 1e-7) -> torch.Tensor:
    """Jensen–Shannon divergence of the posteriors ``p_k = softmax(logits_k)``, averaged over
    rows: with ``M = clamp(mean_k p_k, eps, 1)``, ``JS = mean_k Σ_j p_kj (log p_kj − log M_j)``
    (Hendrycks et al. 2020, Eq. 2-3; Kim et al.'s ``methods/augmix/train.py`` clamps M the
    same way and, like ``F.kl_div``, counts ``0 · log 0`` as 0)."""
    if len(logits) < 2:
        raise ValueError(f"need the logits of at least two views, got {len(logits)}")
    shapes = {tuple(z.shape) for z in logits}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2:
        raise ValueError(f"logits must be N × K tensors of one shape, got {sorted(shapes)}")
    probs = [torch.softmax(z, dim=1) for z in logits]
    log_m = torch.clamp(sum(probs) / len(probs), eps, 1.0).log()
    kl = [F.kl_div(log_m, p, reduction="batchmean") for p in probs]
    return sum(kl) / len(kl)
