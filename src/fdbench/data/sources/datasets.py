"""Named image datasets as uint8 N×H×W×C arrays with int64 labels, read from the cache (fetched
first when missing)."""

from __future__ import annotations

import os

from fdbench.data.sources import cache as _cache
from fdbench.data.sources.catalog import DATASETS, SPLITS
from fdbench.data.types import ImageDataset


def load_dataset(
    name: str, split: str = "train", *, data_dir: str | os.PathLike | None = None
) -> ImageDataset:
    """Load ``split`` ("train" or "test") of dataset ``name`` from the cache, fetching it first.

    Images are uint8 N×H×W×C, labels int64 indexing ``class_names``::

        name           train / test     H×W×C    classes
        fashion_mnist  60 000 / 10 000  28×28×1  10
        mnist          60 000 / 10 000  28×28×1  10
        animal_mnist    8 000 /  2 000  28×28×1  10
        digits          1 347 /    450   8×8×1   10
        textures        1 500 /  1 500  32×32×1   5
        noise           1 000 /  1 000  28×28×1   4

    ``animal_mnist``: the last 200 images of each class are the test split; ``digits``:
    scikit-learn's digits scaled 0..16 → 0..255, last 25 % of each class for test;
    ``textures``: patches at seeded random positions of scikit-image's bundled texture images,
    train patches from the top half of each image and test patches from the bottom half, 300 per
    class; ``noise``: synthetic noise images of four kinds, 250 per class, fixed seeds. The
    content of every split has the SHA-256 in :data:`CONTENT_SHA256`. The cache is
    ``data_dir``, else ``$FDBENCH_DATA``, else ``~/.cache/fdbench``; each cached file is verified
    against the SHA-256 written with it, and a missing or altered file raises
    :class:`~fdbench.data.sources.cache.CorruptedCacheError`.
    """
    from fdbench.data.sources.fetching import fetch

    if name not in DATASETS:
        raise ValueError(f"name must be one of {sorted(DATASETS)}; got {name!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
    folder = _cache.data_dir(data_dir) / name
    if not _cache.is_cached(folder):
        fetch(name, data_dir=data_dir)
    images, labels, class_names = _cache.read_cached_split(folder, split, name)
    return ImageDataset(name, images, labels, class_names)
