"""Named image datasets as uint8 N×H×W×C arrays with int64 labels, cached under a data dir."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fdbench.data import _cache

FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)
MNIST_CLASSES = tuple(str(d) for d in range(10))
#: Animal-MNIST's classes (label order of the PyPI package ``animal-mnist==0.4``).
ANIMAL_MNIST_CLASSES = (
    "bear",
    "bird",
    "cat",
    "cow",
    "dog",
    "elephant",
    "giraffe",
    "horse",
    "sheep",
    "zebra",
)
DIGITS_CLASSES = MNIST_CLASSES
#: Texture images bundled with scikit-image (no download), one class each.
TEXTURE_IMAGES = ("brick", "grass", "gravel", "moon", "cell")
TEXTURE_PATCH = 32
TEXTURE_PATCHES_PER_CLASS = 300
NOISE_CLASSES = ("gaussian", "uniform", "salt_and_pepper", "smooth")
NOISE_SIZE = 28
NOISE_PER_CLASS = 250
#: Fixed seeds of the generated datasets (the datasets are part of the benchmark definition).
_LOCAL_SEEDS = {"train": 20230101, "test": 20230102}
#: Fraction of scikit-learn's digits that forms the fixed test split (last images of each class).
DIGITS_TEST_FRACTION = 0.25

DATASETS: dict[str, tuple[str, ...]] = {
    "fashion_mnist": FASHION_MNIST_CLASSES,
    "mnist": MNIST_CLASSES,
    "animal_mnist": ANIMAL_MNIST_CLASSES,
    "digits": DIGITS_CLASSES,
    "textures": TEXTURE_IMAGES,
    "noise": NOISE_CLASSES,
}
SPLITS = ("train", "test")


@dataclass(frozen=True)
class ImageDataset:
    """Images (uint8, N×H×W×C, C = 1 grey or 3 colour), int64 labels indexing ``class_names``."""

    name: str
    images: np.ndarray
    labels: np.ndarray
    class_names: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.images, np.ndarray) or self.images.dtype != np.uint8:
            raise TypeError(f"images must be a uint8 numpy array; got {_describe(self.images)}")
        if self.images.ndim != 4 or self.images.shape[-1] not in (1, 3):
            raise ValueError(f"images must be N×H×W×C with C in (1, 3); got {self.images.shape}")
        if not isinstance(self.labels, np.ndarray) or self.labels.dtype != np.int64:
            raise TypeError(f"labels must be an int64 numpy array; got {_describe(self.labels)}")
        if self.labels.shape != (self.images.shape[0],):
            raise ValueError(
                f"labels must have shape ({self.images.shape[0]},); got {self.labels.shape}"
            )
        if self.labels.size and (
            self.labels.min() < 0 or self.labels.max() >= len(self.class_names)
        ):
            raise ValueError(f"labels must lie in [0, {len(self.class_names)}) (class_names)")

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def subset(self, index: np.ndarray) -> ImageDataset:
        """The samples at ``index`` (integer indices or a boolean mask)."""
        return ImageDataset(self.name, self.images[index], self.labels[index], self.class_names)


def _describe(x: object) -> str:
    return f"{type(x).__name__} of dtype {x.dtype}" if hasattr(x, "dtype") else type(x).__name__


def load_dataset(
    name: str, split: str = "train", *, data_dir: str | os.PathLike | None = None
) -> ImageDataset:
    """Load ``split`` ("train" or "test") of dataset ``name`` from the cache, fetching it first.

    Names: ``fashion_mnist``, ``mnist`` (60 000/10 000, 28×28×1), ``animal_mnist`` (8 000/2 000,
    28×28×1, the last 200 images of each class are the test split), ``digits`` (scikit-learn's
    8×8×1 digits scaled 0..16 → 0..255, last 25 % of each class for test), ``textures``
    (32×32×1 patches at seeded random positions of scikit-image's bundled texture images, train
    patches from the top half of each image and test patches from the bottom half, 300 per class)
    and ``noise`` (28×28×1 synthetic noise images of four kinds, 250 per class, fixed seeds).
    The cache is ``data_dir``, else ``$FDBENCH_DATA``, else ``~/.cache/fdbench``; each cached
    file is verified against the SHA-256 written with it.
    """
    from fdbench.data.fetching import fetch

    if name not in DATASETS:
        raise ValueError(f"name must be one of {sorted(DATASETS)}; got {name!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
    folder = _cache.data_dir(data_dir) / name
    if not _cache.is_cached(folder):
        fetch(name, data_dir=data_dir)
    images, labels, class_names = _cache.read_cached_split(folder, split, name)
    return ImageDataset(name, images, labels, class_names)


def cache_folder(name: str, *, data_dir: str | os.PathLike | None = None) -> Path:
    """The cache folder of dataset ``name``."""
    return _cache.data_dir(data_dir) / name


# --------------------------------------------------------------------------- generated datasets


def _split_last_per_class(labels: np.ndarray, fraction: float) -> np.ndarray:
    test = np.zeros(labels.shape[0], dtype=bool)
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        test[idx[len(idx) - round(fraction * len(idx)) :]] = True
    return test


def _digits() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = np.rint(bunch.images * (255.0 / 16.0)).astype(np.uint8)[..., None]
    labels = bunch.target.astype(np.int64)
    test = _split_last_per_class(labels, DIGITS_TEST_FRACTION)
    return {"train": (images[~test], labels[~test]), "test": (images[test], labels[test])}


def _textures() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    import skimage.data

    out = {}
    for split in SPLITS:
        rng = np.random.default_rng(_LOCAL_SEEDS[split])
        images, labels = [], []
        for label, texture in enumerate(TEXTURE_IMAGES):
            img = np.asarray(getattr(skimage.data, texture)(), dtype=np.uint8)
            half = img.shape[0] // 2
            rows = (0, half) if split == "train" else (half, img.shape[0])
            top = rng.integers(rows[0], rows[1] - TEXTURE_PATCH + 1, TEXTURE_PATCHES_PER_CLASS)
            left = rng.integers(0, img.shape[1] - TEXTURE_PATCH + 1, TEXTURE_PATCHES_PER_CLASS)
            win = np.lib.stride_tricks.sliding_window_view(img, (TEXTURE_PATCH, TEXTURE_PATCH))
            images.append(win[top, left])
            labels.append(np.full(TEXTURE_PATCHES_PER_CLASS, label, dtype=np.int64))
        out[split] = (np.concatenate(images)[..., None].copy(), np.concatenate(labels))
    return out


def _noise() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from scipy.ndimage import gaussian_filter

    out = {}
    shape = (NOISE_PER_CLASS, NOISE_SIZE, NOISE_SIZE, 1)
    for split in SPLITS:
        rng = np.random.default_rng(_LOCAL_SEEDS[split])
        gaussian = np.clip(rng.normal(0.5, 0.25, shape), 0, 1)
        uniform = rng.uniform(0, 1, shape)
        salt = (rng.uniform(0, 1, shape) < 0.5).astype(np.float64)
        smooth = gaussian_filter(rng.normal(0, 1, shape), sigma=(0, 2, 2, 0))
        smooth = (smooth - smooth.min(axis=(1, 2, 3), keepdims=True)) / np.ptp(
            smooth, axis=(1, 2, 3), keepdims=True
        )
        stack = np.concatenate([gaussian, uniform, salt, smooth])
        labels = np.repeat(np.arange(len(NOISE_CLASSES), dtype=np.int64), NOISE_PER_CLASS)
        out[split] = (np.rint(stack * 255).astype(np.uint8), labels)
    return out


_LOCAL_BUILDERS = {"digits": _digits, "textures": _textures, "noise": _noise}


def _build_local(name: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return _LOCAL_BUILDERS[name]()
