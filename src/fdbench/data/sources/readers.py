"""Readers for image datasets a user already has on disk, in their official distribution formats."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from fdbench.core.provenance import record_read
from fdbench.data.sources._safe_pickle import load_array_pickle
from fdbench.data.types import ImageDataset

CIFAR_C_SEVERITIES = 5
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")


def _folder(path: str | os.PathLike, what: str) -> Path:
    path = Path(path).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"{what} folder {path} does not exist")
    return path


def _unpickle(path: Path) -> dict:
    if not path.is_file():
        raise FileNotFoundError(f"missing file {path}")
    record_read(path)
    with open(path, "rb") as fh:
        obj = load_array_pickle(fh, encoding="bytes")
    if not isinstance(obj, dict):
        raise ValueError(f"{path} does not hold a CIFAR dictionary")
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in obj.items()}


def _names(values) -> tuple[str, ...]:
    return tuple(v.decode() if isinstance(v, bytes) else str(v) for v in values)


def _cifar_images(data: np.ndarray, n_labels: int, path: Path) -> np.ndarray:
    """CIFAR rows (N×3072: the red, green and blue 32×32 planes, row-major) as N×32×32×3."""
    data = np.asarray(data)
    if data.dtype != np.uint8 or data.shape != (n_labels, 3072):
        raise ValueError(
            f"{path} must hold uint8 'data' of shape ({n_labels}, 3072) (one row per label); "
            f"got {data.dtype} {data.shape}"
        )
    return data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()


def read_cifar10(path: str | os.PathLike, split: str = "train") -> ImageDataset:
    """CIFAR-10 from its python folder (``cifar-10-batches-py``): ``data_batch_1..5`` for train,
    ``test_batch`` for test, class names from ``batches.meta`` (Krizhevsky, 2009)."""
    folder = _folder(path, "CIFAR-10")
    files = {"train": [f"data_batch_{i}" for i in range(1, 6)], "test": ["test_batch"]}
    if split not in files:
        raise ValueError(f"split must be 'train' or 'test'; got {split!r}")
    images, labels = [], []
    for f in files[split]:
        batch = _unpickle(folder / f)
        labels.append(np.asarray(batch["labels"], dtype=np.int64))
        images.append(_cifar_images(batch["data"], labels[-1].size, folder / f))
    images, labels = np.concatenate(images), np.concatenate(labels)
    names = _names(_unpickle(folder / "batches.meta")["label_names"])
    return ImageDataset("cifar10", images, labels, names)


def read_cifar100(
    path: str | os.PathLike, split: str = "train", *, label: str = "fine"
) -> ImageDataset:
    """CIFAR-100 from its python folder (``cifar-100-python``): ``train``/``test`` pickles with
    ``fine_labels`` and ``coarse_labels``, names from ``meta``; ``label`` picks fine or coarse."""
    folder = _folder(path, "CIFAR-100")
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test'; got {split!r}")
    if label not in ("fine", "coarse"):
        raise ValueError(f"label must be 'fine' or 'coarse'; got {label!r}")
    batch = _unpickle(folder / split)
    meta = _unpickle(folder / "meta")
    labels = np.asarray(batch[f"{label}_labels"], dtype=np.int64)
    names = _names(meta[f"{label}_label_names"])
    name = "cifar100" if label == "fine" else "cifar100_coarse"
    images = _cifar_images(batch["data"], labels.size, folder / split)
    return ImageDataset(name, images, labels, names)


def read_svhn(path: str | os.PathLike, split: str = "train") -> ImageDataset:
    """SVHN cropped digits from ``train_32x32.mat`` / ``test_32x32.mat`` (Netzer et al., 2011):
    ``X`` is 32×32×3×N, ``y`` uses 10 for the digit 0, mapped to label 0 here."""
    from scipy.io import loadmat

    folder = _folder(path, "SVHN")
    if split not in ("train", "test", "extra"):
        raise ValueError(f"split must be 'train', 'test' or 'extra'; got {split!r}")
    file = folder / f"{split}_32x32.mat"
    if not file.is_file():
        raise FileNotFoundError(f"missing file {file}")
    record_read(file)
    mat = loadmat(file)
    x, y = np.asarray(mat["X"]), np.asarray(mat["y"]).reshape(-1)
    if x.ndim != 4 or x.shape[:3] != (32, 32, 3) or x.shape[3] != y.size:
        raise ValueError(f"{file} must hold X of shape 32×32×3×N and N labels y; got {x.shape}")
    if y.size and (y.min() < 1 or y.max() > 10):
        raise ValueError(f"{file} must hold labels y in 1..10 (10 = digit 0)")
    images = np.ascontiguousarray(x.astype(np.uint8).transpose(3, 0, 1, 2))
    labels = y.astype(np.int64) % 10
    return ImageDataset("svhn", images, labels, tuple(str(d) for d in range(10)))


def _load_rgb(path: Path) -> np.ndarray:
    from PIL import Image

    record_read(path)
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def read_tiny_imagenet(path: str | os.PathLike, split: str = "train") -> ImageDataset:
    """Tiny ImageNet (``tiny-imagenet-200``): ``wnids.txt`` fixes the label order, ``words.txt``
    the class names, ``train/<wnid>/images/*.JPEG`` the training images, ``val/images`` with
    ``val/val_annotations.txt`` the validation images (used as ``split="val"``)."""
    folder = _folder(path, "Tiny ImageNet")
    record_read(folder / "wnids.txt")
    wnids = (folder / "wnids.txt").read_text().split()
    words = {}
    if (folder / "words.txt").is_file():
        for line in (folder / "words.txt").read_text().splitlines():
            if "\t" in line:
                wnid, text = line.split("\t", 1)
                words[wnid] = text.strip()
    index = {w: i for i, w in enumerate(wnids)}
    files: list[Path] = []
    labels: list[int] = []
    if split == "train":
        for wnid in wnids:
            for f in sorted((folder / "train" / wnid / "images").glob("*.JPEG")):
                files.append(f)
                labels.append(index[wnid])
    elif split == "val":
        for line in (folder / "val" / "val_annotations.txt").read_text().splitlines():
            parts = line.split("\t")
            if len(parts) >= 2:
                files.append(folder / "val" / "images" / parts[0])
                labels.append(index[parts[1]])
    else:
        raise ValueError(f"split must be 'train' or 'val'; got {split!r}")
    images = (
        np.stack([_load_rgb(f) for f in files]) if files else np.zeros((0, 64, 64, 3), np.uint8)
    )
    names = tuple(words.get(w, w) for w in wnids)
    return ImageDataset("tiny_imagenet", images, np.asarray(labels, dtype=np.int64), names)


def read_medmnist(
    path: str | os.PathLike, split: str = "train", *, class_names: tuple[str, ...] | None = None
) -> ImageDataset:
    """A MedMNIST ``<name>.npz`` (Yang et al., 2023) with ``train/val/test_images`` and
    ``_labels``; grey images get a channel axis, labels of shape N×1 are flattened. Multi-label
    files (N×L with L > 1) are rejected."""
    path = Path(path).expanduser()
    if split not in ("train", "val", "test"):
        raise ValueError(f"split must be 'train', 'val' or 'test'; got {split!r}")
    if not path.is_file():
        raise FileNotFoundError(f"missing file {path}")
    record_read(path)
    with np.load(path, allow_pickle=False) as npz:
        images = np.asarray(npz[f"{split}_images"], dtype=np.uint8)
        labels = np.asarray(npz[f"{split}_labels"])
        n_classes = int(
            max(
                np.max(npz[f"{s}_labels"], initial=0)
                for s in ("train", "val", "test")
                if f"{s}_labels" in npz.files
            )
            + 1
        )
    if images.ndim == 3:
        images = images[..., None]
    if labels.ndim == 2 and labels.shape[1] != 1:
        raise ValueError(f"{path.name} is multi-label ({labels.shape[1]} labels); not supported")
    labels = labels.reshape(-1).astype(np.int64)
    names = class_names or tuple(str(i) for i in range(n_classes))
    return ImageDataset(path.stem, images, labels, names)


def read_cifar_c(
    path: str | os.PathLike, corruption: str, severity: int, *, class_names: tuple[str, ...]
) -> ImageDataset:
    """One corruption and severity of CIFAR-10-C / CIFAR-100-C (Hendrycks & Dietterich, 2019):
    ``<corruption>.npy`` holds 50 000 images, severities 1..5 in blocks of 10 000, and
    ``labels.npy`` the matching labels."""
    folder = _folder(path, "CIFAR-C")
    if severity not in range(1, CIFAR_C_SEVERITIES + 1):
        raise ValueError(f"severity must be in 1..5; got {severity}")
    if not isinstance(corruption, str) or not corruption or Path(corruption).name != corruption:
        raise ValueError(f"corruption must be a file name such as 'fog'; got {corruption!r}")
    file = folder / f"{corruption}.npy"
    if not file.is_file():
        raise FileNotFoundError(f"missing file {file}")
    record_read(file)
    record_read(folder / "labels.npy")
    images = np.load(file, mmap_mode="r", allow_pickle=False)
    labels = np.load(folder / "labels.npy", mmap_mode="r", allow_pickle=False)
    n_total = images.shape[0] if images.ndim == 4 else -1
    if images.dtype != np.uint8 or labels.shape != (n_total,) or n_total % CIFAR_C_SEVERITIES:
        raise ValueError(
            f"{file} must hold uint8 N×H×W×C images and labels.npy N labels, N a multiple of "
            f"{CIFAR_C_SEVERITIES} (one block per severity); got {images.dtype} {images.shape} "
            f"and {labels.shape}"
        )
    n = images.shape[0] // CIFAR_C_SEVERITIES
    block = slice((severity - 1) * n, severity * n)
    return ImageDataset(
        f"{folder.name}/{corruption}/{severity}",
        np.array(images[block], np.uint8),
        np.asarray(labels[block], dtype=np.int64),
        class_names,
    )


def read_image_folder(path: str | os.PathLike, *, mode: str = "RGB") -> ImageDataset:
    """A folder with one sub-folder per class (sorted names = label order) of image files, read
    with Pillow and converted to ``mode`` ("RGB" or "L"); all images must have the same size."""
    from PIL import Image

    folder = _folder(path, "image")
    if mode not in ("RGB", "L"):
        raise ValueError(f"mode must be 'RGB' or 'L'; got {mode!r}")
    classes = sorted(p.name for p in folder.iterdir() if p.is_dir())
    images, labels = [], []
    for label, cls in enumerate(classes):
        for f in sorted((folder / cls).iterdir()):
            if f.suffix.lower() in IMAGE_SUFFIXES:
                record_read(f)
                with Image.open(f) as im:
                    arr = np.asarray(im.convert(mode), dtype=np.uint8)
                images.append(arr[..., None] if mode == "L" else arr)
                labels.append(label)
    if not images:
        raise ValueError(f"no images found under {folder}")
    shapes = {im.shape for im in images}
    if len(shapes) > 1:
        raise ValueError(f"images under {folder} differ in size: {sorted(shapes)[:3]}")
    return ImageDataset(folder.name, np.stack(images), np.asarray(labels, np.int64), tuple(classes))
