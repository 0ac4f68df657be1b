"""Outlier Exposure (Hendrycks, Mazeika & Dietterich, ICLR 2019): loss, outlier batches, module.

A classifier is trained from scratch on in-distribution batches together with batches of an
external outlier set, with the loss ``CE(in) + λ · CE(outliers, uniform)`` (the paper's
Eq. 1 with the uniform-posterior cross-entropy of its Section 4.2.1). As Kim et al. ("A
Unified Benchmark for the Unknown Detection Capability of Deep Neural Networks", Section 4)
and their code (``methods/oe/train.py``, ``train.py`` of daintlab/unknown-detection-benchmarks):
λ = 0.5, outlier batches twice the size of the in-distribution batch, one forward pass on the
concatenated batch.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

__all__ = [
    "OE_WEIGHT",
    "OUTLIER_RATIO",
    "OutlierBatches",
    "outlier_exposure_loss",
    "outlier_loader",
    "uniform_cross_entropy",
]

#: λ of Kim et al. and Hendrycks et al. (their value for vision, kept across settings).
OE_WEIGHT = 0.5
#: Outlier batch size over the in-distribution batch size (Kim et al., Section 4).
OUTLIER_RATIO = 2


def uniform_cross_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Cross-entropy from the uniform distribution to ``softmax(logits)``, averaged over rows:
    ``mean_i (−(1/K) Σ_j log softmax(z_i)_j) = mean_i (logsumexp(z_i) − mean_j z_ij)``
    (Hendrycks et al. 2019, Section 4.2.1; Kim et al.'s ``methods/oe/train.py``)."""
    if not isinstance(logits, torch.Tensor) or logits.ndim != 2 or logits.shape[1] < 2:
        raise ValueError(f"logits must be a tensor N × K with K >= 2, got {_shape(logits)}")
    return (torch.logsumexp(logits, dim=1) - logits.mean(dim=1)).mean()


def outlier_exposure_loss(
    logits: torch.Tensor,
    targets: torch.Tensor,
    outlier_logits: torch.Tensor,
    weight: float = OE_WEIGHT,
) -> torch.Tensor:
    """``CE(logits, targets) + weight · uniform_cross_entropy(outlier_logits)``."""
    if weight < 0:
        raise ValueError(f"weight must be >= 0, got {weight}")
    return F.cross_entropy(logits, targets) + weight * uniform_cross_entropy(outlier_logits)


def _shape(x: object) -> str:
    return str(tuple(x.shape)) if isinstance(x, torch.Tensor) else type(x).__name__


class OutlierBatches(Dataset):
    """In-distribution batches, each with ``ratio`` times as many outliers.

    Indexed by a list of in-distribution indices (a batch), it returns ``(images, labels,
    outliers)``. Outliers are taken in the order of seeded random permutations of the
    outlier set, a new permutation whenever one is used up, so every outlier is seen once
    before any is seen twice and a short outlier set is cycled (Kim et al.'s code zips the two
    loaders and so stops at the shorter one; cycling keeps every in-distribution batch).
    ``transform`` (e.g. the training augmentation) is applied to both image batches, with its
    own state for the outliers.
    """

    def __init__(
        self,
        images: torch.Tensor,
        labels: torch.Tensor,
        outliers: torch.Tensor,
        *,
        ratio: int = OUTLIER_RATIO,
        seed: int = 0,
        transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
        outlier_transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        if len(images) != len(labels):
            raise ValueError(f"images ({len(images)}) and labels ({len(labels)}) differ")
        if len(outliers) == 0 or outliers.shape[1:] != images.shape[1:]:
            raise ValueError(
                f"outliers must be a non-empty batch of images shaped {tuple(images.shape[1:])}, "
                f"got {tuple(outliers.shape)}"
            )
        if not isinstance(ratio, int) or ratio < 1:
            raise ValueError(f"ratio must be an int >= 1, got {ratio!r}")
        self.images, self.labels, self.outliers = images, labels, outliers
        self.ratio = ratio
        self.transform, self.outlier_transform = transform, outlier_transform
        self._generator = torch.Generator().manual_seed(seed)
        self._order = torch.empty(0, dtype=torch.long)

    def __len__(self) -> int:
        return len(self.images)

    def _next_outliers(self, n: int) -> torch.Tensor:
        while len(self._order) < n:
            perm = torch.randperm(len(self.outliers), generator=self._generator)
            self._order = torch.cat([self._order, perm])
        taken, self._order = self._order[:n], self._order[n:]
        return self.outliers[taken]

    def __getitem__(self, index: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x, y = self.images[index], self.labels[index]
        out = self._next_outliers(self.ratio * len(index))
        if self.transform is not None:
            x = self.transform(x)
        if self.outlier_transform is not None:
            out = self.outlier_transform(out)
        return x, y, out


def outlier_loader(
    images: torch.Tensor,
    labels: torch.Tensor,
    outliers: torch.Tensor,
    *,
    batch_size: int,
    seed: int = 0,
    ratio: int = OUTLIER_RATIO,
    augment: Callable[[int], Callable[[torch.Tensor], torch.Tensor] | None] | None = None,
) -> DataLoader:
    """A shuffled loader of :class:`OutlierBatches` (uint8 image tensors N × C × H × W).

    Shuffling draws from a generator seeded with ``seed``, the outlier order from ``seed +
    2``; ``augment(s)`` builds the augmentation seeded with ``s`` (``seed + 1`` for the
    in-distribution images, ``seed + 3`` for the outliers), e.g. ``lambda s:
    Pipeline(ops, s)``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    data = OutlierBatches(
        images,
        labels,
        outliers,
        ratio=ratio,
        seed=seed + 2,
        transform=augment(seed + 1) if augment else None,
        outlier_transform=augment(seed + 3) if augment else None,
    )
    base = RandomSampler(data, generator=torch.Generator().manual_seed(seed))
    sampler = BatchSampler(base, batch_size, drop_last=False)
    return DataLoader(data, sampler=sampler, batch_size=None, num_workers=0)
