"""Readers of the on-disk data of Kim et al.'s benchmarks: released folders and original sets."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from fdbench.core.provenance import record_read
from fdbench.data.sources.readers import IMAGE_SUFFIXES
from fdbench.data.sources.wordnet import WordNet
from fdbench.data.suites.kim_construction import (
    CIFAR100_WNIDS,
    FilterResult,
    remove_wnid_overlaps,
    tiny_imagenet_wnids,
)
from fdbench.data.types import ImageDataset

#: Set names of the authors' released CIFAR benchmark (``cifar-bench/<mode>/<set>``, as their
#: ``dataloader.py`` and ``test.py`` name them) → (role, modes present).
KIM_CIFAR_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "cifar40": ("in_distribution", ("train", "valid", "test")),
    "new-tinyimagenet158": ("external", ("train", "valid")),
    "cifar60": ("near_ood", ("test",)),
    "svhn": ("far_ood", ("test",)),
    "lsun-fix": ("far_ood", ("test",)),
    "describable-textures": ("far_ood", ("test",)),
}
#: The same for the released ImageNet benchmark (``imagenet-bench/<mode>/<set>``).
KIM_IMAGENET_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "imagenet200": ("in_distribution", ("train", "valid", "test")),
    "external-imagenet394": ("external", ("train", "valid")),
    "near-imagenet200": ("near_ood", ("test",)),
    "food101": ("far_ood", ("test",)),
    "caltech256": ("far_ood", ("test",)),
    "places365": ("far_ood", ("test",)),
}
KIM_BENCHMARKS = {
    "cifar": ("cifar-bench", KIM_CIFAR_SETS),
    "imagenet": ("imagenet-bench", KIM_IMAGENET_SETS),
}
#: Sets the authors' test loader resizes to 32 × 32 (``transforms.Resize((32, 32))`` in
#: ``dataloader.py``); the others are stored at 32 × 32.
CIFAR_RESIZED_SETS = ("new-tinyimagenet158", "describable-textures")


def _image_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def load_images(files: Sequence[Path], transform: Callable) -> np.ndarray:
    """Read ``files`` with Pillow as RGB and stack ``transform(pil_image)`` (uint8 H×W×3)."""
    from PIL import Image

    out = []
    for f in files:
        record_read(f)
        with Image.open(f) as im:
            out.append(np.asarray(transform(im.convert("RGB")), dtype=np.uint8))
    if not out:
        raise ValueError("no images to read")
    shapes = {a.shape for a in out}
    if len(shapes) != 1:
        raise ValueError(f"images differ in size after the transform: {sorted(shapes)[:3]}")
    return np.stack(out)


def resize_to(size: int) -> Callable:
    """``Resize((size, size))`` of torchvision on PIL images (bilinear); identity at that size."""
    from PIL import Image

    def transform(im):
        return im if im.size == (size, size) else im.resize((size, size), Image.BILINEAR)

    return transform


def resize_center_crop(resize: int = 256, crop: int = 224) -> Callable:
    """``Resize(resize)`` then ``CenterCrop(crop)`` (torchvision on PIL images, bilinear): the
    authors' ImageNet test transform (``dataloader.py``)."""
    from fdbench.data.sources.fix import center_crop, shorter_side_to

    def transform(im):
        return center_crop(shorter_side_to(im, resize), crop)

    return transform


def class_folders(folder: str | os.PathLike) -> list[str]:
    """Sorted names of the sub-folders of ``folder`` (torchvision ``ImageFolder``'s classes)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"folder {folder} does not exist")
    return sorted(p.name for p in folder.iterdir() if p.is_dir())


def read_class_folders(
    folder: str | os.PathLike,
    transform: Callable,
    *,
    classes: Sequence[str] | None = None,
    max_per_class: int | None = None,
    name: str | None = None,
) -> ImageDataset:
    """An ``ImageFolder`` tree (``folder/<class>/<image>``): labels index ``classes`` (default:
    every sub-folder, sorted); ``max_per_class`` keeps the first images (sorted names) of each."""
    folder = Path(folder)
    classes = list(class_folders(folder) if classes is None else classes)
    absent = [c for c in classes if not (folder / c).is_dir()]
    if absent:
        raise FileNotFoundError(f"missing class folders under {folder}: {', '.join(absent[:5])}")
    files, labels = [], []
    for label, cls in enumerate(classes):
        found = _image_files(folder / cls)[:max_per_class]
        files += found
        labels += [label] * len(found)
    if not files:
        raise ValueError(f"no images found under {folder}")
    images = load_images(files, transform)
    return ImageDataset(name or folder.name, images, np.asarray(labels, np.int64), tuple(classes))


def released_set_folder(root: str | os.PathLike, benchmark: str, mode: str, name: str) -> Path:
    """Folder of one set of the authors' released benchmark, as their loaders read it:
    ``<bench>/train/<in-distribution set>/``, ``<bench>/<valid|test>/<in-distribution set>/
    labels/`` and ``<bench>/<mode>/<other set>/no-labels/`` (``<bench>`` is ``cifar-bench`` or
    ``imagenet-bench``)."""
    if benchmark not in KIM_BENCHMARKS:
        raise ValueError(f"benchmark must be one of {sorted(KIM_BENCHMARKS)}; got {benchmark!r}")
    bench, sets = KIM_BENCHMARKS[benchmark]
    if name not in sets:
        raise ValueError(f"unknown {benchmark} set {name!r}; recognised sets: {', '.join(sets)}")
    role, modes = sets[name]
    if mode not in modes:
        raise ValueError(f"set {name!r} has modes {modes}; got {mode!r}")
    base = Path(root).expanduser() / bench / mode / name
    if role == "in_distribution":
        return base if mode == "train" else base / "labels"
    return base / "no-labels"


def read_released_set(
    root: str | os.PathLike,
    benchmark: str,
    mode: str,
    name: str,
    *,
    max_per_class: int | None = None,
) -> ImageDataset:
    """One set of the released benchmark (:func:`released_set_folder`) as an ImageDataset.

    CIFAR: 32 × 32 images; ``new-tinyimagenet158`` and ``describable-textures`` resized to
    32 × 32 as the authors' loader does. ImageNet: ``Resize(256)``, ``CenterCrop(224)``. The
    in-distribution sets keep their class labels (sorted class folders); OoD sets are read with
    the label of their (dummy) sub-folder.
    """
    folder = released_set_folder(root, benchmark, mode, name)
    if benchmark == "cifar":
        transform = resize_to(32) if name in CIFAR_RESIZED_SETS else _require_size(32)
    else:
        transform = resize_center_crop()
    return read_class_folders(folder, transform, max_per_class=max_per_class, name=name)


def _require_size(size: int) -> Callable:
    def transform(im):
        if im.size != (size, size):
            raise ValueError(f"expected {size}×{size} images; got {im.size[0]}×{im.size[1]}")
        return im

    return transform


def read_dtd(folder: str | os.PathLike, *, size: int = 32) -> ImageDataset:
    """The Describable Textures Dataset (Cimpoi et al., 2014) from its official archive layout
    ``dtd/images/<texture>/*.jpg`` (47 textures, 5640 images), resized to ``size`` × ``size``."""
    return read_class_folders(Path(folder) / "images", resize_to(size), name="dtd")


def read_places365_val(folder: str | os.PathLike, transform: Callable) -> ImageDataset:
    """Places-365 validation images (Zhou et al., 2017) from the official files: ``val_256/``,
    ``places365_val.txt`` (``<file> <label>``) and ``categories_places365.txt``
    (``/a/airfield 0``); class names without the leading ``/<letter>/``."""
    folder = Path(folder)
    names_file, labels_file = folder / "categories_places365.txt", folder / "places365_val.txt"
    missing = [str(p) for p in (names_file, labels_file, folder / "val_256") if not p.exists()]
    if missing:
        raise FileNotFoundError(f"missing Places-365 files: {', '.join(missing)}")
    record_read(names_file)
    record_read(labels_file)
    names = {}
    for line in names_file.read_text().split("\n"):
        if line.strip():
            path, index = line.split()
            names[int(index)] = path.split("/", 2)[-1]
    rows = [line.split() for line in labels_file.read_text().split("\n") if line.strip()]
    files = [folder / "val_256" / f for f, _ in rows]
    labels = np.asarray([int(label) for _, label in rows], np.int64)
    images = load_images(files, transform)
    return ImageDataset("places365", images, labels, tuple(names[i] for i in range(len(names))))


def read_tiny_imagenet_fix(
    folder: str | os.PathLike, wordnet: WordNet, *, max_per_class: int | None = None
) -> tuple[ImageDataset, FilterResult]:
    """Kim et al.'s external set of the CIFAR benchmark, Tiny ImageNet158-FIX (Section 3.1):
    ``folder/<wnid>/*.png`` (32 × 32, e.g. ``fdbench data prepare-fix`` on the ImageNet training
    folders of the Tiny ImageNet classes) without the classes the wnid rule removes
    (:func:`~fdbench.data.suites.kim_construction.remove_wnid_overlaps` with
    :data:`~fdbench.data.suites.kim_construction. CIFAR100_WNIDS`). Returns the kept classes' images
    and the filter's record."""
    classes = class_folders(folder)
    unknown = sorted(set(classes) - set(tiny_imagenet_wnids()))
    if unknown or not classes:
        raise ValueError(
            f"{folder} must hold one folder per Tiny ImageNet class (wnid); unknown: {unknown[:5]}"
        )
    result = remove_wnid_overlaps(classes, CIFAR100_WNIDS, wordnet)
    ds = read_class_folders(
        folder,
        _require_size(32),
        classes=list(result.kept),
        max_per_class=max_per_class,
        name="tiny_imagenet_fix",
    )
    return ds, result
