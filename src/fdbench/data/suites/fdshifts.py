"""FD-Shifts' experiments (Jaeger et al., ICLR 2023) on CIFAR-10/100, SuperCIFAR-100 and SVHN
with their corruption and new-class studies."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from fdbench.data.shifts.corruptions import CORRUPTIONS, SEVERITIES
from fdbench.data.shifts.splits import (
    CIFAR100_CLASSES,
    CIFAR100_SUPERCLASSES,
    SubclassShift,
    relabel,
    semantic_split,
    to_format,
)
from fdbench.data.sources import cache as _cache
from fdbench.data.sources.readers import (
    read_cifar10,
    read_cifar100,
    read_cifar_c,
    read_svhn,
    read_tiny_imagenet,
)
from fdbench.data.suites import register_builder
from fdbench.data.suites.fashion_mnist import SEMANTIC_FRACTION, _sub_rng, _take
from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind

#: The FD-Shifts experiments (Jaeger et al., ICLR 2023) that :func:`fdshifts_experiments` builds.
FDSHIFTS_DATASETS = ("cifar10", "cifar100", "super_cifar100", "svhn", "svhn_openset")
#: Size of the validation split: the first images of the official test set, the remaining ones
#: forming the ``iid`` study (DeVries & Taylor's split, FD-Shifts' default ``val_split=devries``).
FDSHIFTS_N_VAL = 1000
#: Side length of every FD-Shifts image; Tiny ImageNet's 64 × 64 images are resized to it.
FDSHIFTS_SIZE = 32
#: On-disk layout under the data folder: name → (folder, files it must hold, where to get it).
FDSHIFTS_SOURCES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "cifar10": (
        "cifar-10-batches-py",
        (*(f"data_batch_{i}" for i in range(1, 6)), "test_batch", "batches.meta"),
        "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
    ),
    "cifar100": (
        "cifar-100-python",
        ("train", "test", "meta"),
        "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz",
    ),
    "svhn": (
        "svhn",
        ("train_32x32.mat", "test_32x32.mat"),
        "http://ufldl.stanford.edu/housenumbers/ (train_32x32.mat, test_32x32.mat)",
    ),
    "tiny_imagenet": (
        "tiny-imagenet-200",
        ("wnids.txt", "val/val_annotations.txt", "val/images"),
        "http://cs231n.stanford.edu/tiny-imagenet-200.zip",
    ),
    "cifar10_c": (
        "CIFAR-10-C",
        ("labels.npy", *(f"{c}.npy" for c in CORRUPTIONS)),
        "https://zenodo.org/record/2535967/files/CIFAR-10-C.tar",
    ),
    "cifar100_c": (
        "CIFAR-100-C",
        ("labels.npy", *(f"{c}.npy" for c in CORRUPTIONS)),
        "https://zenodo.org/record/3555552/files/CIFAR-100-C.tar",
    ),
}


#: The CIFAR-100 sub-class held out of each super-class in FD-Shifts' super-CIFAR-100 (its
#: ``SuperCIFAR100`` dataset; "vehicles 2", and with it "tractor", is dropped).
FDSHIFTS_SUPERCIFAR_HELD_OUT = (
    "seal",
    "flatfish",
    "tulip",
    "bowl",
    "pear",
    "lamp",
    "couch",
    "beetle",
    "lion",
    "skyscraper",
    "sea",
    "cattle",
    "raccoon",
    "lobster",
    "girl",
    "lizard",
    "hamster",
    "oak_tree",
    "motorcycle",
)


#: Per experiment: the training data, the corruption data (or None) and the new-class datasets.
_FDSHIFTS_PLAN: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "cifar10": ("cifar10", "cifar10_c", ("cifar100", "svhn", "tiny_imagenet")),
    "cifar100": ("cifar100", "cifar100_c", ("cifar10", "svhn", "tiny_imagenet")),
    "super_cifar100": ("cifar100", None, ()),
    "svhn": ("svhn", None, ("cifar10", "cifar100", "tiny_imagenet")),
    "svhn_openset": ("svhn", None, ()),
}


_log = logging.getLogger(__name__)


def _missing(root: Path, source: str) -> str | None:
    """One line naming what of ``source`` is missing under ``root`` and where to get it."""
    folder, files, url = FDSHIFTS_SOURCES[source]
    path = root / folder
    if not path.is_dir():
        return f"folder {path} (from {url})"
    absent = [f for f in files if not (path / f).exists()]
    if absent:
        return f"{', '.join(str(path / f) for f in absent)} (from {url})"
    return None


def _read_test(root: Path, source: str) -> ImageDataset:
    """The official test images of a new-class dataset, in the 32 × 32 × 3 FD-Shifts format."""
    folder = root / FDSHIFTS_SOURCES[source][0]
    if source == "cifar10":
        return read_cifar10(folder, "test")
    if source == "cifar100":
        return read_cifar100(folder, "test")
    if source == "svhn":
        return read_svhn(folder, "test")
    ds = read_tiny_imagenet(folder, "val")
    images = to_format(ds.images, FDSHIFTS_SIZE, FDSHIFTS_SIZE, 3)
    return ImageDataset(ds.name, images, ds.labels, ds.class_names)


def _read_train_test(root: Path, dataset: str) -> tuple[ImageDataset, ImageDataset]:
    folder = root / FDSHIFTS_SOURCES[_FDSHIFTS_PLAN[dataset][0]][0]
    read = {"cifar10": read_cifar10, "svhn": read_svhn, "svhn_openset": read_svhn}.get(
        dataset, read_cifar100
    )
    return read(folder, "train"), read(folder, "test")


def _openset_draw(
    dataset: str, class_names: tuple[str, ...], seed: int, run_seed: int | None
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], dict[str, Any]]:
    """FD-Shifts' open-set draw of the classes ``class_names`` of ``dataset`` (paper, Appendix
    E.1: 40 % of the classes held out, each run its own draw).

    :func:`~fdbench.data.shifts.splits.semantic_split` with :data:`SEMANTIC_FRACTION`, seeded by
    ``run_seed`` (``seed`` when None) and the tag ``<dataset>_openset``. Returns ``(known,
    held_out, names, split)``: the trained and the held-out classes (sorted indices), the names
    of the trained classes and the record of the draw for ``Experiment.split`` (``dataset``,
    ``draw_seed``, ``train_classes``, ``held_out_classes``, ``held_out_names``).
    """
    draw = seed if run_seed is None else int(run_seed)
    known, held_out = semantic_split(
        len(class_names), fraction=SEMANTIC_FRACTION, seed=_sub_rng(draw, f"{dataset}_openset")
    )
    split = {
        "dataset": dataset,
        "draw_seed": draw,
        "train_classes": known.tolist(),
        "held_out_classes": held_out.tolist(),
        "held_out_names": [class_names[i] for i in held_out],
    }
    return known, held_out, tuple(class_names[i] for i in known), split


def _super_cifar100(train_set: ImageDataset) -> SubclassShift:
    """FD-Shifts' super-CIFAR-100 split of CIFAR-100 (fine labels): a :class:`SubclassShift`
    over the 19 super-classes without "vehicles 2" holding out
    :data:`FDSHIFTS_SUPERCIFAR_HELD_OUT`, fine classes found by name."""
    names = train_set.class_names
    unknown = sorted(set(CIFAR100_CLASSES) - set(names))
    if unknown or len(names) != len(CIFAR100_CLASSES):
        raise ValueError(
            f"cifar-100-python/meta must name the 100 CIFAR-100 fine classes; missing {unknown}"
        )
    index = {n: i for i, n in enumerate(names)}
    superclasses = {s: fine for s, fine in CIFAR100_SUPERCLASSES.items() if s != "vehicles_2"}
    class_to_super = np.full(len(names), -1, dtype=np.int64)
    for i, fine in enumerate(superclasses.values()):
        class_to_super[[index[f] for f in fine]] = i
    held_out = tuple(index[f] for f in FDSHIFTS_SUPERCIFAR_HELD_OUT)
    return SubclassShift(tuple(superclasses), class_to_super, held_out)


@register_builder("fdshifts_experiments")
def fdshifts_experiments(
    *,
    dataset: str,
    data_dir: str | os.PathLike | None = None,
    seed: int = 0,
    max_per_study: int | None = None,
    skip_missing: bool = False,
    run_seed: int | None = None,
) -> list[Experiment]:
    """The FD-Shifts experiment on ``dataset`` (Jaeger et al., ICLR 2023), read from disk.

    ``dataset`` is one of :data:`FDSHIFTS_DATASETS`; the data are looked for under
    ``data_dir`` (default ``$FDBENCH_DATA``, else ``~/.cache/fdbench``) in the extracted
    layouts of the official archives, :data:`FDSHIFTS_SOURCES`: ``cifar-10-batches-py/``,
    ``cifar-100-python/``, ``svhn/{train,test}_32x32.mat``, ``tiny-imagenet-200/``,
    ``CIFAR-10-C/``, ``CIFAR-100-C/``. Images are 32 × 32 × 3. Every experiment trains on the
    whole official training set; its validation split is the first :data:`FDSHIFTS_N_VAL`
    images of the official test set (of the training classes) and the ``iid`` study the rest,
    as FD-Shifts does (``val_split=devries``). Studies, as in FD-Shifts' query studies:

    - ``cifar10`` / ``cifar100``: ``iid``; ``corruption/<type>/<severity>`` for the 15
      corruptions × 5 severities of CIFAR-10-C / CIFAR-100-C (Hendrycks & Dietterich, 2019),
      their true labels; ``new_class/<name>`` with the whole test set of CIFAR-100 / CIFAR-10
      (semantic new-class shift), SVHN and Tiny ImageNet (non-semantic), labelled −1. Tiny
      ImageNet contributes its 10 000 labelled validation images (the test images carry no
      labels), resized to 32 × 32 with :func:`~fdbench.data.shifts.splits.to_format`.
    - ``super_cifar100``: the 19 CIFAR-100 super-classes without "vehicles 2", with the fine
      class :data:`FDSHIFTS_SUPERCIFAR_HELD_OUT` of each super-class held out of training;
      ``iid`` (test images of the training sub-classes) and ``subclass``: every image of the
      held-out sub-classes, from the test then the training file as in FD-Shifts, labelled with
      its super-class. Unlike FD-Shifts, whose validation split here is the first 1000 held-out
      (shifted) images, the validation split comes from the i.i.d. test images.
    - ``svhn``: ``iid``; ``new_class/{cifar10, cifar100, tiny_imagenet}`` (all non-semantic).
    - ``svhn_openset``: SVHN's semantic new-class shift (FD-Shifts' ``svhn_openset``; paper,
      Appendix E.1: "we sample 40% of classes randomly to be held back and train on the
      remaining 60% of classes (each of the 5 runs per experiment receives a new sample of
      held-out classes)"). Trained on the 6 classes left by :func:`~fdbench.data.shifts.splits.
      semantic_split` (4 of 10 held out), relabelled 0..5; validation and ``iid`` as above
      from the test images of those classes; ``new_class/semantic``: every test image of the
      held-out classes, labelled −1. The draw is a function of ``run_seed`` (of ``seed`` when
      ``run_seed`` is None) alone and recorded in ``Experiment.split``; a benchmark whose
      ``data.per_run`` is set passes each run's seed as ``run_seed``. FD-Shifts keeps all 10
      outputs and masks the held-out ones at evaluation (``holdout_classes`` in
      ``fd_shifts/analysis/__init__.py``); here the network has 6 outputs, which gives the
      same softmax over the trained classes.

    Missing data raise one ``FileNotFoundError`` naming every expected file or folder and where
    to get it. With ``skip_missing``, studies whose data are missing are left out with a logged
    warning instead (the training data are always required). ``max_per_study`` caps every test
    study at a seeded subset of that many images (the corruption studies all on one subset of
    the underlying test images); without it the studies are complete and ``seed`` is unused.
    """
    if dataset not in FDSHIFTS_DATASETS:
        raise ValueError(f"dataset must be one of {FDSHIFTS_DATASETS}; got {dataset!r}")
    if max_per_study is not None and (
        not isinstance(max_per_study, int | np.integer) or max_per_study < 1
    ):
        raise ValueError(f"max_per_study must be None or an int ≥ 1; got {max_per_study!r}")
    if not isinstance(skip_missing, bool):
        raise TypeError(f"skip_missing must be a bool; got {type(skip_missing).__name__}")
    root = _cache.data_dir(data_dir)
    base, corruption_source, new_class = _FDSHIFTS_PLAN[dataset]
    optional = [s for s in (corruption_source, *new_class) if s is not None]
    required_missing = _missing(root, base)
    missing = {s: m for s in optional if (m := _missing(root, s)) is not None}
    if required_missing or (missing and not skip_missing):
        lines = [m for m in (required_missing, *missing.values()) if m]
        raise FileNotFoundError(
            f"fdshifts_experiments(dataset={dataset!r}) needs data missing under {root}: "
            + "; ".join(lines)
            + " (set data_dir or FDBENCH_DATA to the folder holding them)"
        )
    for source, what in missing.items():
        _log.warning("fdshifts %s: leaving out the %s studies, missing %s", dataset, source, what)

    if run_seed is not None and (not isinstance(run_seed, int | np.integer) or run_seed < 0):
        raise ValueError(f"run_seed must be None or an int ≥ 0; got {run_seed!r}")
    train_set, test_set = _read_train_test(root, dataset)
    split = None
    if dataset == "svhn_openset":
        known, _, class_names, split = _openset_draw("svhn", train_set.class_names, seed, run_seed)
        tr = np.isin(train_set.labels, known)
        train_images, train_labels = train_set.images[tr], relabel(train_set.labels[tr], known)
        te = np.isin(test_set.labels, known)
        test_images, test_labels = test_set.images[te], relabel(test_set.labels[te], known)
    elif dataset == "super_cifar100":
        shift = _super_cifar100(train_set)
        class_names = shift.super_names
        tr = shift.train_mask(train_set.labels)
        train_images, train_labels = train_set.images[tr], shift.super_labels(train_set.labels[tr])
        te = shift.train_mask(test_set.labels)
        test_images, test_labels = test_set.images[te], shift.super_labels(test_set.labels[te])
    else:
        class_names = train_set.class_names
        train_images, train_labels = train_set.images, train_set.labels
        test_images, test_labels = test_set.images, test_set.labels
    if test_labels.size <= FDSHIFTS_N_VAL:
        raise ValueError(
            f"{dataset}: the test set must hold more than {FDSHIFTS_N_VAL} images of the training "
            f"classes (the first {FDSHIFTS_N_VAL} are the validation split); got {test_labels.size}"
        )
    train = ImageDataset(dataset, train_images, train_labels, class_names)
    val = ImageDataset(
        dataset, test_images[:FDSHIFTS_N_VAL], test_labels[:FDSHIFTS_N_VAL], class_names
    )
    iid_images, iid_labels = test_images[FDSHIFTS_N_VAL:], test_labels[FDSHIFTS_N_VAL:]
    keep = _take(iid_labels.size, max_per_study, _sub_rng(seed, "iid"))
    studies = [Study("iid", StudyKind.IID, iid_images[keep], iid_labels[keep])]

    if corruption_source is not None and corruption_source not in missing:
        studies += _cifar_c_studies(root, corruption_source, class_names, seed, max_per_study)
    if dataset == "super_cifar100":
        from_test = shift.held_out_mask(test_set.labels)
        from_train = shift.held_out_mask(train_set.labels)
        held = np.concatenate([test_set.images[from_test], train_set.images[from_train]])
        fine = np.concatenate([test_set.labels[from_test], train_set.labels[from_train]])
        keep = _take(fine.size, max_per_study, _sub_rng(seed, "subclass"))
        studies.append(
            Study("subclass", StudyKind.SUBCLASS, held[keep], shift.super_labels(fine[keep]))
        )
    if dataset == "svhn_openset":
        held = np.flatnonzero(np.isin(test_set.labels, split["held_out_classes"]))
        held = held[_take(held.size, max_per_study, _sub_rng(seed, "new_class/semantic"))]
        studies.append(
            Study(
                "new_class/semantic",
                StudyKind.NEW_CLASS_SEMANTIC,
                test_set.images[held],
                np.full(held.size, -1, np.int64),
            )
        )
    for source in new_class:
        if source in missing:
            continue
        images = _read_test(root, source).images
        keep = _take(images.shape[0], max_per_study, _sub_rng(seed, f"new_class/{source}"))
        # FD-Shifts: a new-class shift is semantic between CIFAR data sets, else non-semantic
        semantic = "cifar" in dataset and "cifar" in source
        kind = StudyKind.NEW_CLASS_SEMANTIC if semantic else StudyKind.NEW_CLASS_NONSEMANTIC
        studies.append(
            Study(f"new_class/{source}", kind, images[keep], np.full(keep.size, -1, np.int64))
        )
    return [Experiment(dataset, class_names, train, val, tuple(studies), split)]


def _cifar_c_studies(
    root: Path,
    source: str,
    class_names: tuple[str, ...],
    seed: int,
    cap: int | None,
) -> list[Study]:
    """``corruption/<type>/<severity>`` studies from CIFAR-10-C / CIFAR-100-C, all on one seeded
    subset (of size ``cap``) of the underlying test images."""
    folder = root / FDSHIFTS_SOURCES[source][0]
    studies = []
    keep = None
    for name in CORRUPTIONS:
        for severity in SEVERITIES:
            ds = read_cifar_c(folder, name, severity, class_names=class_names)
            if ds.images.shape[1:] != (FDSHIFTS_SIZE, FDSHIFTS_SIZE, 3):
                raise ValueError(
                    f"{folder / name}.npy must hold 32×32×3 images; got {ds.images.shape[1:]}"
                )
            if ds.labels.size and (ds.labels.min() < 0 or ds.labels.max() >= len(class_names)):
                raise ValueError(f"{folder}/labels.npy must hold labels in [0, {len(class_names)})")
            if keep is None:
                keep = _take(ds.labels.size, cap, _sub_rng(seed, "corruption_subset"))
            studies.append(
                Study(
                    f"corruption/{name}/{severity}",
                    StudyKind.CORRUPTION,
                    ds.images[keep],
                    ds.labels[keep],
                    severity=severity,
                    corruption=name,
                )
            )
    return studies
