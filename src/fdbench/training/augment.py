"""Seeded, deterministic training augmentations on uint8 image batches (pure PyTorch).

Every operation takes a uint8 batch N × C × H × W (the layout the training loader batches, see
:func:`fdbench.training.loader.image_tensor`) and a ``torch.Generator``, draws its random
numbers for the whole batch from that generator (one draw per image, in batch order) and
returns a new uint8 batch of the same shape. A :class:`Pipeline` applies named operations in
order, all drawing from one generator, so a seed fixes every augmented batch.

The operations follow FD-Shifts' training transforms (``fd_shifts/utils/aug_utils.py`` and the
data configs ``fd_shifts/configs/data/*.yaml`` of IML-DKFZ/fd-shifts, removed in 2b88730 and
replaced by ``fd_shifts/experiments/configs.py``), which are torchvision's ``RandomCrop``,
``RandomHorizontalFlip``, ``RandomRotation``, ``ColorJitter`` and DeVries & Taylor's (2017)
``Cutout``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F

__all__ = [
    "AUGMENTATIONS",
    "Pipeline",
    "color_jitter",
    "cutout",
    "hflip",
    "random_crop",
    "rotate",
]


def _check_batch(x: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor) or x.dtype != torch.uint8 or x.ndim != 4:
        raise ValueError(
            "x must be a uint8 tensor N × C × H × W, got "
            f"{getattr(x, 'dtype', type(x).__name__)} {tuple(getattr(x, 'shape', ()))}"
        )


def _fill(x: torch.Tensor, fill: int | Sequence[int]) -> torch.Tensor:
    """The fill value as a uint8 tensor C × 1 × 1 (one value for all channels, or one each)."""
    values = [fill] * x.shape[1] if isinstance(fill, int) else list(fill)
    if len(values) != x.shape[1] or any(not 0 <= int(v) <= 255 for v in values):
        raise ValueError(f"fill must be one value or one per channel in [0, 255], got {fill!r}")
    return torch.tensor(values, dtype=torch.uint8).view(-1, 1, 1)


def hflip(x: torch.Tensor, generator: torch.Generator, *, p: float = 0.5) -> torch.Tensor:
    """Mirror each image horizontally with probability ``p``: image i is flipped iff
    ``u_i < p`` for ``u = torch.rand(N, generator=generator)`` (torchvision's
    ``RandomHorizontalFlip``)."""
    _check_batch(x)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p}")
    flip = torch.rand(len(x), generator=generator) < p
    return torch.where(flip.view(-1, 1, 1, 1), x.flip(-1), x)


def random_crop(
    x: torch.Tensor, generator: torch.Generator, *, padding: int, fill: int | Sequence[int] = 0
) -> torch.Tensor:
    """Pad each image by ``padding`` pixels of value ``fill`` on every side and crop an H × W
    window at a uniform offset: row offset ``i`` and column offset ``j`` drawn (in that order,
    for the whole batch) with ``torch.randint(0, 2·padding + 1)``; output pixel (r, c) is
    padded pixel (i + r, j + c) (torchvision's ``RandomCrop(H, padding)``)."""
    _check_batch(x)
    if not isinstance(padding, int) or padding < 0:
        raise ValueError(f"padding must be an int >= 0, got {padding!r}")
    n, c, h, w = x.shape
    padded = _fill(x, fill).expand(c, h + 2 * padding, w + 2 * padding).repeat(n, 1, 1, 1)
    padded[:, :, padding : padding + h, padding : padding + w] = x
    i = torch.randint(0, 2 * padding + 1, (n,), generator=generator)
    j = torch.randint(0, 2 * padding + 1, (n,), generator=generator)
    rows = (i.view(-1, 1) + torch.arange(h)).view(n, 1, h, 1).expand(n, c, h, w + 2 * padding)
    out = padded.gather(2, rows)
    cols = (j.view(-1, 1) + torch.arange(w)).view(n, 1, 1, w).expand(n, c, h, w)
    return out.gather(3, cols)


def rotate(
    x: torch.Tensor, generator: torch.Generator, *, degrees: float, fill: int | Sequence[int] = 0
) -> torch.Tensor:
    """Rotate each image about its centre by an angle drawn uniformly from
    [−``degrees``, ``degrees``], nearest-neighbour sampling, pixels from outside the image set
    to ``fill`` (torchvision's ``RandomRotation(degrees)`` with its default nearest
    interpolation; sampling grid of ``torch.nn.functional.affine_grid``, corners not aligned)."""
    _check_batch(x)
    if not degrees >= 0:
        raise ValueError(f"degrees must be >= 0, got {degrees}")
    n, c, h, w = x.shape
    angle = (torch.rand(n, generator=generator, dtype=torch.float64) * 2 - 1) * degrees
    rad = angle * (math.pi / 180)
    cos, sin = torch.cos(rad), torch.sin(rad)
    theta = torch.zeros(n, 2, 3, dtype=torch.float64)
    theta[:, 0, 0], theta[:, 0, 1] = cos, -sin * h / w
    theta[:, 1, 0], theta[:, 1, 1] = sin * w / h, cos
    grid = F.affine_grid(theta.float(), [n, c, h, w], align_corners=False)
    ones = torch.ones(n, 1, h, w)
    sampled = F.grid_sample(
        torch.cat([x.float(), ones], 1), grid, mode="nearest", align_corners=False
    )
    inside = sampled[:, -1:] > 0.5
    return torch.where(inside, sampled[:, :-1].round().to(torch.uint8), _fill(x, fill))


def cutout(
    x: torch.Tensor,
    generator: torch.Generator,
    *,
    size: int,
    p: float = 1.0,
    fill: int | Sequence[int] = 0,
) -> torch.Tensor:
    """Cutout (DeVries & Taylor, 2017): one square hole per image, set to ``fill``.

    Drawn for the whole batch in this order: whether to cut (``torch.rand(N) < p``), the hole
    centre's row ``y`` in [0, H) and column ``x`` in [0, W) (``torch.randint``). The hole covers
    rows [y − ⌊size/2⌋, y + ⌊size/2⌋) and columns likewise, clipped to the image, as in DeVries
    & Taylor's ``Cutout`` (their ``util/cutout.py``) and FD-Shifts' copy
    (``fd_shifts/utils/aug_utils.py``, which cuts with probability ½: ``p = 0.5``). Both apply
    it after normalisation, where 0 is the data set's mean colour: ``fill`` is that mean in
    pixel values.
    """
    _check_batch(x)
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be an int >= 1, got {size!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p}")
    n, _, h, w = x.shape
    apply = torch.rand(n, generator=generator) < p
    cy = torch.randint(0, h, (n,), generator=generator).view(-1, 1)
    cx = torch.randint(0, w, (n,), generator=generator).view(-1, 1)
    half = size // 2
    r, c = torch.arange(h), torch.arange(w)
    in_rows = (r >= cy - half) & (r < cy + half)
    in_cols = (c >= cx - half) & (c < cx + half)
    hole = in_rows.view(n, 1, h, 1) & in_cols.view(n, 1, 1, w) & apply.view(-1, 1, 1, 1)
    return torch.where(hole, _fill(x, fill), x)


def _grey(x: torch.Tensor) -> torch.Tensor:
    """ITU-R 601-2 luma ``0.2989 R + 0.587 G + 0.114 B`` truncated to uint8, N × 1 × H × W
    (torchvision's ``rgb_to_grayscale``); grey images are returned as they are."""
    if x.shape[1] == 1:
        return x
    r, g, b = x.float().unbind(1)
    return (0.2989 * r + 0.587 * g + 0.114 * b).unsqueeze(1).to(torch.uint8)


def _blend(x: torch.Tensor, other: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """``factor · x + (1 − factor) · other`` clamped to [0, 255] and truncated to uint8."""
    f = factor.view(-1, 1, 1, 1)
    return (f * x.float() + (1 - f) * other.float()).clamp(0, 255).to(torch.uint8)


def _factors(n: int, strength: float, generator: torch.Generator) -> torch.Tensor:
    low = max(0.0, 1.0 - strength)
    return low + torch.rand(n, generator=generator) * (1.0 + strength - low)


def color_jitter(
    x: torch.Tensor,
    generator: torch.Generator,
    *,
    brightness: float = 0.0,
    contrast: float = 0.0,
    saturation: float = 0.0,
) -> torch.Tensor:
    """Colour jitter (torchvision's ``ColorJitter(brightness, contrast, saturation)``, no hue).

    For each image, factors ``f`` are drawn uniformly from [max(0, 1 − s), 1 + s] for each
    strength ``s`` and the three adjustments applied in a random order (each a blend with
    ``factor`` ``f``, truncated to uint8 after each step, as torchvision does for uint8):
    brightness blends with black, contrast with the mean of the image's grey values,
    saturation with the grey image. Draws for the whole batch, in this order: the order
    (``argsort`` of ``torch.rand(N, 3)``), then the brightness, contrast and saturation factors.
    A strength of 0 leaves that adjustment out (factor 1).
    """
    _check_batch(x)
    for name, s in (("brightness", brightness), ("contrast", contrast), ("saturation", saturation)):
        if not s >= 0:
            raise ValueError(f"{name} must be >= 0, got {s}")
    n = len(x)
    order = torch.rand(n, 3, generator=generator).argsort(dim=1)
    factors = [_factors(n, s, generator) for s in (brightness, contrast, saturation)]

    def adjust(op: int, img: torch.Tensor) -> torch.Tensor:
        if op == 0:
            return _blend(img, torch.zeros_like(img), factors[0])
        if op == 1:
            mean = _grey(img).float().mean(dim=(1, 2, 3), keepdim=True)
            return _blend(img, mean.expand_as(img), factors[1])
        return _blend(img, _grey(img).expand_as(img), factors[2])

    for position in range(3):
        for op in range(3):
            if (brightness, contrast, saturation)[op] == 0:
                continue
            chosen = (order[:, position] == op).view(-1, 1, 1, 1)
            x = torch.where(chosen, adjust(op, x), x)
    return x


#: Operation name → function; the names of the ``training.augment`` list of a config.
AUGMENTATIONS: dict[str, Callable[..., torch.Tensor]] = {
    "random_crop": random_crop,
    "hflip": hflip,
    "rotate": rotate,
    "cutout": cutout,
    "color_jitter": color_jitter,
}


class Pipeline:
    """Named operations applied in order to uint8 batches, every draw from one generator
    seeded with ``seed``.

    ``ops`` is a sequence of mappings (or pydantic models) ``{"name": <one of AUGMENTATIONS>,
    **parameters}``. ``Pipeline([{"name": "hflip"}], seed)`` is the loader's historical
    ``augment: true`` (flips with probability ½), batch for batch.
    """

    def __init__(self, ops: Iterable[Mapping[str, Any] | Any], seed: int) -> None:
        self.ops: list[tuple[Callable[..., torch.Tensor], dict[str, Any]]] = []
        for op in ops:
            params = dict(op)
            name = params.pop("name", None)
            if name not in AUGMENTATIONS:
                raise ValueError(
                    f"augmentation name must be one of {list(AUGMENTATIONS)}, got {name!r}"
                )
            self.ops.append((AUGMENTATIONS[name], params))
        self.generator = torch.Generator().manual_seed(seed)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        for fn, params in self.ops:
            x = fn(x, self.generator, **params)
        return x
