"""Seeded mini-batch loading of uint8 image arrays into PyTorch tensors."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler

__all__ = ["Batches", "image_tensor", "make_loader"]


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

    With ``flip_generator`` set, each image of the first tensor (N × C × H × W) is mirrored
    horizontally with probability ½, drawn from that generator (reproducible augmentation).
    """

    def __init__(self, *tensors: torch.Tensor, flip_generator: torch.Generator | None = None):
        if not tensors or len({len(t) for t in tensors}) != 1:
            raise ValueError(f"tensors must share one length, got {[len(t) for t in tensors]}")
        self.tensors = tensors
        self.flip_generator = flip_generator

    def __len__(self) -> int:
        return len(self.tensors[0])

    def __getitem__(self, index: list[int]) -> tuple[torch.Tensor, ...]:
        batch = [t[index] for t in self.tensors]
        if self.flip_generator is not None:
            x = batch[0]
            flip = torch.rand(len(x), generator=self.flip_generator) < 0.5
            batch[0] = torch.where(flip.view(-1, 1, 1, 1), x.flip(-1), x)
        return tuple(batch)


def make_loader(
    *tensors: torch.Tensor,
    batch_size: int,
    shuffle: bool,
    seed: int = 0,
    augment: bool = False,
    num_workers: int = 0,
) -> DataLoader:
    """A ``DataLoader`` of whole batches of ``tensors``; shuffling and flips (of the first
    tensor, when ``augment``) are drawn from generators seeded with ``seed`` alone."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    flip = torch.Generator().manual_seed(seed + 1) if augment else None
    data = Batches(*tensors, flip_generator=flip)
    if shuffle:
        base = RandomSampler(data, generator=torch.Generator().manual_seed(seed))
    else:
        base = SequentialSampler(data)
    sampler = BatchSampler(base, batch_size, drop_last=False)
    return DataLoader(data, sampler=sampler, batch_size=None, num_workers=num_workers)
