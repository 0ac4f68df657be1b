"""Your own data in the benchmark: image-folder trees and MedMNIST-style ``.npz`` files.

``data.builder: folder_experiments`` reads a tree laid out as torchvision's ``ImageFolder``
expects, one folder per split and one sub-folder per class::

    root/
      train/<class>/<image>        training split (class names: the sorted sub-folder names)
      val/<class>/<image>          optional; else a seeded fraction of train/ is held out
      test/<class>/<image>         the in-distribution test study "iid"
      <study path>/...             one folder per declared shift study

``data.builder: npz_experiments`` reads one MedMNIST-style archive (``train_images``,
``train_labels``, ``val_*``, ``test_*``) with :func:`fdbench.data.sources.readers.read_medmnist`.
Both return one :class:`~fdbench.data.types.Experiment`; their arguments are validated by
:class:`fdbench.config.schema.FolderDataArgs` and :class:`fdbench.config.schema.NpzDataArgs`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from fdbench.config.schema import NEW_CLASS_KINDS, FolderDataArgs, NpzDataArgs
from fdbench.data.sources.readers import read_medmnist
from fdbench.data.suites import register_builder
from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind

__all__ = ["IMAGE_SUFFIXES", "folder_experiments", "npz_experiments", "read_image_folder"]

#: Image files read from a folder tree (by suffix, case-insensitive).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
_GREY_MODES = ("1", "L", "LA", "I", "I;16", "F")


def _images_under(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
    )


def _is_grey(path: Path) -> bool:
    from PIL import Image

    with Image.open(path) as im:
        return im.mode in _GREY_MODES


def _read_image(path: Path, channels: int, size: int | None) -> np.ndarray:
    from PIL import Image

    try:
        with Image.open(path) as im:
            im = im.convert("L" if channels == 1 else "RGB")
            if size is not None and im.size != (size, size):
                im = im.resize((size, size), Image.BILINEAR)
            array = np.asarray(im, dtype=np.uint8)
    except OSError as error:
        raise ValueError(f"cannot read image {str(path)!r}: {error}") from error
    return array[..., None] if channels == 1 else array


def _stack(paths: list[Path], channels: int, size: int | None, where: Path) -> np.ndarray:
    images = [_read_image(p, channels, size) for p in paths]
    first = images[0].shape[:2]
    for path, image in zip(paths, images, strict=True):
        if image.shape != images[0].shape or image.shape[0] != image.shape[1]:
            raise ValueError(
                f"{str(where)!r}: images must be square and of one size, but {path.name} is "
                f"{image.shape[:2]} (first: {first}); set image_size to resize them"
            )
    return np.stack(images)


def read_image_folder(
    folder: str | os.PathLike[str],
    class_names: tuple[str, ...] | None,
    *,
    channels: int,
    image_size: int | None,
    name: str = "folder",
) -> ImageDataset:
    """The images of ``folder/<class>/...`` with labels indexing ``class_names`` (the sorted
    sub-folder names when ``None``), in sorted class then file order, as uint8 N × S × S × C.

    A sub-folder not in ``class_names`` is a ``ValueError`` naming it; images are converted to
    ``channels`` (1 or 3) and resized to ``image_size`` (bilinear) when given.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"image folder {str(folder)!r} does not exist")
    present = sorted(p.name for p in folder.iterdir() if p.is_dir())
    names = tuple(present) if class_names is None else tuple(class_names)
    unknown = sorted(set(present) - set(names))
    if unknown:
        raise ValueError(
            f"{str(folder)!r} has class folder(s) {unknown} that are not training classes "
            f"{list(names)}"
        )
    paths, labels = [], []
    for label, cls in enumerate(names):
        found = _images_under(folder / cls) if (folder / cls).is_dir() else []
        paths += found
        labels += [label] * len(found)
    if not paths:
        raise ValueError(f"{str(folder)!r} holds no images in class folders ({IMAGE_SUFFIXES})")
    images = _stack(paths, channels, image_size, folder)
    return ImageDataset(name, images, np.asarray(labels, dtype=np.int64), names)


def _held_out(train: ImageDataset, fraction: float, seed: int) -> tuple[ImageDataset, ...]:
    """A seeded ``fraction`` of ``train`` as validation split (sorted indices)."""
    perm = np.random.default_rng(seed).permutation(len(train))
    n_val = max(1, round(fraction * len(train)))
    if n_val >= len(train):
        raise ValueError(f"train/ holds {len(train)} images: too few to hold out a val split")
    return train.subset(np.sort(perm[n_val:])), train.subset(np.sort(perm[:n_val]))


@register_builder("folder_experiments")
def folder_experiments(**kwargs: Any) -> list[Experiment]:
    """One experiment from an image-folder tree (module docstring; arguments as
    :class:`fdbench.config.schema.FolderDataArgs`).

    Studies: ``iid`` from ``test/``, then every declared study in order. A labelled study
    (kind ``iid``, ``corruption``, ``subclass``, ``cood``) holds one sub-folder per training
    class; a new-class study (:data:`fdbench.config.schema.NEW_CLASS_KINDS`) any images under its
    folder, all labelled -1.
    """
    args = FolderDataArgs.model_validate(kwargs)
    root = Path(args.root).expanduser()
    if not (root / "train").is_dir() or not (root / "test").is_dir():
        raise FileNotFoundError(
            f"image-folder dataset {str(root)!r} needs train/ and test/ folders of classes"
        )
    name = args.name or root.name
    train_images = _images_under(root / "train")
    if not train_images:
        raise ValueError(f"{str(root / 'train')!r} holds no images")
    channels = args.channels or (1 if all(_is_grey(p) for p in train_images) else 3)
    read = {"channels": channels, "image_size": args.image_size, "name": name}
    train = read_image_folder(root / "train", None, **read)
    classes = train.class_names
    if (root / "val").is_dir():
        val = read_image_folder(root / "val", classes, **read)
    else:
        train, val = _held_out(train, args.val_fraction, args.seed)
    test = read_image_folder(root / "test", classes, **read)
    studies = [Study("iid", StudyKind.IID, test.images, test.labels)]
    for study, spec in args.studies.items():
        folder = root / (spec.path if spec.path is not None else study)
        if spec.kind in NEW_CLASS_KINDS:
            paths = _images_under(folder) if folder.is_dir() else []
            if not paths:
                raise ValueError(f"study {study!r}: {str(folder)!r} holds no images")
            images = _stack(paths, channels, args.image_size, folder)
            labels = np.full(len(paths), -1, dtype=np.int64)
        else:
            data = read_image_folder(folder, classes, **read)
            images, labels = data.images, data.labels
        studies.append(Study(study, StudyKind(spec.kind), images, labels))
    return [Experiment(name, classes, train, val, tuple(studies))]


@register_builder("npz_experiments")
def npz_experiments(**kwargs: Any) -> list[Experiment]:
    """One experiment from a MedMNIST-style ``.npz`` (arguments as
    :class:`fdbench.config.schema.NpzDataArgs`): splits ``train``/``val`` and study ``iid`` (the
    ``test`` split) read with :func:`~fdbench.data.sources.readers.read_medmnist`, then every
    declared study from the arrays ``<key>_images`` and ``<key>_labels`` (labels -1, and optional,
    for new-class kinds)."""
    args = NpzDataArgs.model_validate(kwargs)
    path = Path(args.path).expanduser()
    names = tuple(args.class_names) if args.class_names is not None else None
    train, val, test = (read_medmnist(path, s, class_names=names) for s in ("train", "val", "test"))
    name = args.name or path.stem
    studies = [Study("iid", StudyKind.IID, test.images, test.labels)]
    if args.studies:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: np.asarray(npz[k]) for k in npz.files}
    for study, spec in args.studies.items():
        key = spec.key or study
        if f"{key}_images" not in arrays:
            raise ValueError(f"study {study!r}: {path.name} has no array {key}_images")
        images = np.asarray(arrays[f"{key}_images"], dtype=np.uint8)
        images = images[..., None] if images.ndim == 3 else images
        if spec.kind in NEW_CLASS_KINDS:
            labels = np.full(images.shape[0], -1, dtype=np.int64)
        elif f"{key}_labels" in arrays:
            labels = np.asarray(arrays[f"{key}_labels"]).reshape(-1).astype(np.int64)
            if labels.size and (labels.min() < 0 or labels.max() >= len(train.class_names)):
                raise ValueError(
                    f"study {study!r}: {key}_labels must lie in [0, {len(train.class_names)})"
                )
        else:
            raise ValueError(f"study {study!r} of kind {spec.kind} needs {key}_labels")
        if images.shape[1:] != train.images.shape[1:]:
            raise ValueError(
                f"study {study!r}: images of shape {images.shape[1:]} differ from the "
                f"training images' {train.images.shape[1:]}"
            )
        studies.append(Study(study, StudyKind(spec.kind), images, labels))
    train, val = (ImageDataset(name, d.images, d.labels, d.class_names) for d in (train, val))
    return [Experiment(name, train.class_names, train, val, tuple(studies))]
