"""The default benchmark on Fashion-MNIST: i.i.d., corruption, sub-class and new-class studies,
and the seeded draws the other suites share."""

from __future__ import annotations

import os

import numpy as np

from fdbench.data.shifts.corruptions import CORRUPTIONS, SEVERITIES, corruption_grid
from fdbench.data.shifts.splits import (
    FASHION_MNIST_SUPERCLASSES,
    relabel,
    semantic_split,
    subclass_shift,
    to_format,
)
from fdbench.data.sources.datasets import load_dataset
from fdbench.data.suites import register_builder
from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind

#: Default sizes: (full, quick).
N_TRAIN = (None, 12_000, 1_500)  # None: all official training images of the training classes
VAL_FRACTION = 0.1


N_IID = (None, 2_000, 300)
N_PER_STUDY = (1_000, 200, 30)  # corruption and non-semantic new-class studies


N_SEMANTIC = (None, 1_000, 150)
N_SUBCLASS = (None, 1_000, 150)


NONSEMANTIC_DATASETS = ("mnist", "animal_mnist", "digits", "textures", "noise")
SEMANTIC_FRACTION = 0.4


def _sub_rng(seed: int, tag: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, *tag.encode()]))


def _take(n: int, cap: int | None, rng: np.random.Generator) -> np.ndarray:
    """Sorted seeded subset of ``range(n)`` of size ``cap`` (all if ``cap`` is None or ≥ n)."""
    if cap is None or cap >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, cap, replace=False))


def _train_val(
    name: str,
    images: np.ndarray,
    labels: np.ndarray,
    class_names: tuple[str, ...],
    cap: int | None,
    rng: np.random.Generator,
) -> tuple[ImageDataset, ImageDataset]:
    keep = _take(labels.size, cap, rng)
    perm = rng.permutation(keep)
    n_val = round(VAL_FRACTION * perm.size)
    val, train = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    return (
        ImageDataset(name, images[train], labels[train], class_names),
        ImageDataset(name, images[val], labels[val], class_names),
    )


def _known_class_task(
    name: str,
    train_set: ImageDataset,
    test_set: ImageDataset,
    known: np.ndarray,
    seed: int,
    q: int,
) -> tuple[tuple[str, ...], ImageDataset, ImageDataset, np.ndarray, np.ndarray]:
    """The task ``name`` of training on the classes ``known`` (relabelled 0..K−1 in that order).

    Returns ``(class_names, train, val, test_labels, iid)``: the names of the classes
    ``known``; the training and validation splits (:func:`_train_val`) of at most
    ``N_TRAIN[q]`` training images of those classes; the test labels relabelled (−1: another
    class); and the sorted test indices of the ``iid`` study, at most ``N_IID[q]`` test images
    of the classes ``known``. Seeded by ``seed`` with the tags ``train_val`` and ``iid``.
    """
    class_names = tuple(train_set.class_names[i] for i in known)
    tr = np.isin(train_set.labels, known)
    train, val = _train_val(
        name,
        train_set.images[tr],
        relabel(train_set.labels[tr], known),
        class_names,
        N_TRAIN[q],
        _sub_rng(seed, "train_val"),
    )
    test_labels = relabel(test_set.labels, known)
    inlier = np.flatnonzero(test_labels >= 0)
    iid = inlier[_take(inlier.size, N_IID[q], _sub_rng(seed, "iid"))]
    return class_names, train, val, test_labels, iid


def _nonsemantic_studies(
    prefix: str,
    tag: str,
    kind: StudyKind,
    fmt: tuple[int, int, int],
    cap: int,
    seed: int,
    data_dir: str | os.PathLike | None,
) -> list[Study]:
    """One study ``<prefix>/<set>`` of kind ``kind`` per set of :data:`NONSEMANTIC_DATASETS`:
    a seeded subset of at most ``cap`` of its test images (tag ``<tag>/<set>``) in the format
    ``fmt`` (height, width, channels; :func:`~fdbench.data.shifts.splits.to_format`), labelled
    −1."""
    studies = []
    for other in NONSEMANTIC_DATASETS:
        ds = load_dataset(other, "test", data_dir=data_dir)
        idx = _take(len(ds), cap, _sub_rng(seed, f"{tag}/{other}"))
        studies.append(
            Study(
                f"{prefix}/{other}",
                kind,
                to_format(ds.images[idx], *fmt),
                np.full(idx.size, -1, dtype=np.int64),
            )
        )
    return studies


@register_builder("fashion_mnist_experiments")
def fashion_mnist_experiments(
    *,
    seed: int = 0,
    quick: bool = False,
    tiny: bool = False,
    data_dir: str | os.PathLike | None = None,
) -> list[Experiment]:
    """The default benchmark: two Fashion-MNIST experiments covering every failure source.

    ``fashion_mnist``: trained on a seeded 60 % of the classes (6 of 10) with a seeded 10 %
    validation split carved from the official training set; studies ``iid`` (official test
    images of the training classes), ``corruption/<type>/<severity>`` (15 × 5, all on one
    seeded subset of the iid study, 1000 images each, 200 if ``quick``), ``new_class/semantic``
    (test images of the 4 held-out classes, label −1) and ``new_class/<dataset>`` for
    :data:`NONSEMANTIC_DATASETS` (their test images resized to 28×28 grey, label −1).

    ``super_fashion_mnist``: the super-class task of
    :data:`~fdbench.data.shifts.splits.FASHION_MNIST_SUPERCLASSES` with one seeded sub-class per
    super-class held out; studies ``iid`` and ``subclass`` (held-out sub-class test images
    labelled with their super-class).

    ``quick`` caps training at 12 000 images (before the validation split), ``iid`` at 2000 and
    the other studies at 200 (corruption, non-semantic) or 1000 (semantic, subclass) images;
    ``tiny`` (for tests of the whole pipeline) at 1500 training images, ``iid`` 300, the other
    studies 30 or 150. Everything is a deterministic function of ``seed``.
    """
    q = 2 if tiny else int(bool(quick))
    train_set = load_dataset("fashion_mnist", "train", data_dir=data_dir)
    test_set = load_dataset("fashion_mnist", "test", data_dir=data_dir)
    h, w, c = train_set.images.shape[1:]
    return [
        _new_class_experiment(train_set, test_set, seed, q, (h, w, c), data_dir),
        _subclass_experiment(train_set, test_set, seed, q),
    ]


def _new_class_experiment(train_set, test_set, seed, q, fmt, data_dir) -> Experiment:
    known, _ = semantic_split(
        len(train_set.class_names),
        fraction=SEMANTIC_FRACTION,
        seed=_sub_rng(seed, "semantic_split"),
    )
    class_names, train, val, test_labels, iid_idx = _known_class_task(
        "fashion_mnist", train_set, test_set, known, seed, q
    )
    studies = [Study("iid", StudyKind.IID, test_set.images[iid_idx], test_labels[iid_idx])]

    sub = _take(iid_idx.size, N_PER_STUDY[q], _sub_rng(seed, "corruption_subset"))
    base_images, base_labels = test_set.images[iid_idx[sub]], test_labels[iid_idx[sub]]
    grid = corruption_grid(base_images, seed=seed)
    for name in CORRUPTIONS:
        for severity in SEVERITIES:
            studies.append(
                Study(
                    f"corruption/{name}/{severity}",
                    StudyKind.CORRUPTION,
                    grid[name, severity],
                    base_labels.copy(),
                    severity=severity,
                    corruption=name,
                )
            )

    outlier = np.flatnonzero(test_labels < 0)
    sem = outlier[_take(outlier.size, N_SEMANTIC[q], _sub_rng(seed, "semantic"))]
    studies.append(
        Study(
            "new_class/semantic",
            StudyKind.NEW_CLASS_SEMANTIC,
            test_set.images[sem],
            np.full(sem.size, -1, dtype=np.int64),
        )
    )
    studies += _nonsemantic_studies(
        "new_class",
        "nonsemantic",
        StudyKind.NEW_CLASS_NONSEMANTIC,
        fmt,
        N_PER_STUDY[q],
        seed,
        data_dir,
    )
    return Experiment("fashion_mnist", class_names, train, val, tuple(studies))


def _subclass_experiment(train_set, test_set, seed, q) -> Experiment:
    shift = subclass_shift(
        FASHION_MNIST_SUPERCLASSES,
        len(train_set.class_names),
        seed=_sub_rng(seed, "subclass_shift"),
    )
    class_names = shift.super_names
    tr = shift.train_mask(train_set.labels)
    train, val = _train_val(
        "super_fashion_mnist",
        train_set.images[tr],
        shift.super_labels(train_set.labels[tr]),
        class_names,
        N_TRAIN[q],
        _sub_rng(seed, "super_train_val"),
    )
    inlier = np.flatnonzero(shift.train_mask(test_set.labels))
    iid = inlier[_take(inlier.size, N_IID[q], _sub_rng(seed, "super_iid"))]
    held = np.flatnonzero(shift.held_out_mask(test_set.labels))
    held = held[_take(held.size, N_SUBCLASS[q], _sub_rng(seed, "subclass"))]
    studies = (
        Study("iid", StudyKind.IID, test_set.images[iid], shift.super_labels(test_set.labels[iid])),
        Study(
            "subclass",
            StudyKind.SUBCLASS,
            test_set.images[held],
            shift.super_labels(test_set.labels[held]),
        ),
    )
    return Experiment("super_fashion_mnist", class_names, train, val, studies)
