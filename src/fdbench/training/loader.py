"""Seeded mini-batch loading of uint8 image arrays into PyTorch tensors."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler

from .augment import Pipeline

__all__ = ["Batches", "augmentation_ops", "image_tensor", "make_loader"]


def image_tensor(images: np.ndarray) -> torch.Tensor:
    """uint8 N × H × W × C array → uint8 tensor N × C × H × W (contiguous)."""
    images = np.asarray(images)
    if images.dtype != np.uint8 or images.ndim != 4:
        raise ValueError(
            f"images must be a uint8 array N × H × W × C, got {images.dtype} {images.shape}"
        )
    return torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2)))


class Batches(Dataset):
    """Tensors of equal length indexed by a list of sample indices, returning one whole batch.

    With ``transform`` set (e.g. an augmentation :class:`~fdbench.training.augment.Pipeline`),
    the batch of the first tensor (N × C × H × W) is replaced by ``transform(batch)``.
    """

    def __init__(
        self,
        *tensors: torch.Tensor,
        transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ):
        if not tensors or len({len(t) for t in tensors}) != 1:
            raise ValueError(f"tensors must share one length, got {[len(t) for t in tensors]}")
        self.tensors = tensors
        self.transform = transform

    def __len__(self) -> int:
        return len(self.tensors[0])

    def __getitem__(self, index: list[int]) -> tuple[torch.Tensor, ...]:
        batch = [t[index] for t in self.tensors]
        if self.transform is not None:
            batch[0] = self.transform(batch[0])
        return tuple(batch)


def augmentation_ops(
    augment: bool | Sequence[Mapping[str, Any] | Any],
) -> list[Mapping[str, Any] | Any]:
    """The operations of a ``training.augment`` setting: none for ``False``, horizontal flips
    with probability ½ for ``True`` (the historical default), else the given operations."""
    if isinstance(augment, bool):
        return [{"name": "hflip", "p": 0.5}] if augment else []
    return list(augment)


def make_loader(
    *tensors: torch.Tensor,
    batch_size: int,
    shuffle: bool,
    seed: int = 0,
    augment: bool | Sequence[Mapping[str, Any] | Any] = False,
    num_workers: int = 0,
    transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    pin_memory: bool = False,
) -> DataLoader:
    """A ``DataLoader`` of whole batches of ``tensors``; shuffling and augmentation (of the
    first tensor, a uint8 image batch) are drawn from generators seeded with ``seed`` alone.

    ``augment``: ``False`` (none), ``True`` (horizontal flips with probability ½, the
    historical default) or a sequence of named operations for
    :class:`~fdbench.training.augment.Pipeline` (e.g. ``[{"name": "random_crop", "padding":
    4}, {"name": "hflip"}]``); the augmentation generator is seeded with ``seed + 1``.
    ``transform`` (a callable on the uint8 image batch, e.g. a method's own augmentation)
    replaces the augmentation; giving both is a ``ValueError``. ``pin_memory`` pins the
    batches in page-locked memory for fast copies to a GPU (the batches are the same).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    ops = augmentation_ops(augment)
    if transform is not None and ops:
        raise ValueError("give either augment or transform, not both")
    if transform is None and ops:
        transform = Pipeline(ops, seed + 1)
    data = Batches(*tensors, transform=transform)
    if shuffle:
        base = RandomSampler(data, generator=torch.Generator().manual_seed(seed))
    else:
        base = SequentialSampler(data)
    sampler = BatchSampler(base, batch_size, drop_last=False)
    return DataLoader(
        data, sampler=sampler, batch_size=None, num_workers=num_workers, pin_memory=pin_memory
    )
