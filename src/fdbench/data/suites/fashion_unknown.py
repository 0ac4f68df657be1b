"""Kim et al.'s unknown-detection benchmark rebuilt on Fashion-MNIST's super-class structure."""

from __future__ import annotations

import os

import numpy as np

from fdbench.data.shifts.splits import FASHION_MNIST_SUPERCLASSES, kim_split
from fdbench.data.sources.datasets import load_dataset
from fdbench.data.suites import register_builder
from fdbench.data.suites.fashion_mnist import (
    N_PER_STUDY,
    N_SEMANTIC,
    NONSEMANTIC_DATASETS,
    _known_class_task,
    _nonsemantic_studies,
    _sub_rng,
    _take,
)
from fdbench.data.types import Experiment, Study, StudyKind

#: In-distribution classes per Fashion-MNIST super-class (Kim et al.: 2 of 5 per CIFAR-100
#: super-class); the other classes of each super-class are near-OoD.
IN_DISTRIBUTION_PER_SUPERCLASS = 2
#: Name of the experiment :func:`fashion_mnist_unknown_detection` builds.
EXPERIMENT_NAME = "fashion_mnist_unknown"


@register_builder("fashion_mnist_unknown_detection")
def fashion_mnist_unknown_detection(
    *,
    seed: int = 0,
    quick: bool = False,
    tiny: bool = False,
    data_dir: str | os.PathLike | None = None,
) -> list[Experiment]:
    """The embedded unknown-detection benchmark (Kim et al., 2023, Section 3, on Fashion-MNIST).

    The super-classes of :data:`~fdbench.data.shifts.splits.FASHION_MNIST_SUPERCLASSES` (tops,
    footwear, other) play CIFAR-100's: :func:`~fdbench.data.shifts.splits.kim_split` draws
    :data:`IN_DISTRIBUTION_PER_SUPERCLASS` classes of each as in-distribution (6 classes) and
    leaves the others (4 classes, each sharing a super-class with an in-distribution class) as
    near-OoD, once from ``seed`` (Kim et al. fix one split too). Studies: ``iid`` (official
    test images of the in-distribution classes, kind ``iid``), ``near_ood/fashion_mnist`` (test
    images of the near-OoD classes, label −1, kind ``near_ood``) and ``far_ood/<name>`` for
    MNIST, Animal-MNIST, scikit-learn digits, textures and noise (test images resized to
    28 × 28 grey, label −1, kind ``far_ood``). Training and validation (10 %) come from the
    official training images of the in-distribution classes. Sizes as
    :func:`~fdbench.data.suites.fashion_mnist.fashion_mnist_experiments` (``quick``: 12 000 training
    images, ``iid`` 2000, near-OoD 1000, each far-OoD set 200; ``tiny``: 1500, 300, 150, 30; full:
    all images, far-OoD sets 1000 each). The split is recorded in ``Experiment.split``.
    """
    q = 2 if tiny else int(bool(quick))
    train_set = load_dataset("fashion_mnist", "train", data_dir=data_dir)
    test_set = load_dataset("fashion_mnist", "test", data_dir=data_dir)
    known, near = kim_split(
        FASHION_MNIST_SUPERCLASSES,
        per_superclass=IN_DISTRIBUTION_PER_SUPERCLASS,
        seed=_sub_rng(seed, "kim_split"),
    )
    names = train_set.class_names
    class_names, train, val, test_labels, iid = _known_class_task(
        EXPERIMENT_NAME, train_set, test_set, known, seed, q
    )
    held = np.flatnonzero(np.isin(test_set.labels, near))
    held = held[_take(held.size, N_SEMANTIC[q], _sub_rng(seed, "near_ood"))]
    studies = [
        Study("iid", StudyKind.IID, test_set.images[iid], test_labels[iid]),
        Study(
            "near_ood/fashion_mnist",
            StudyKind.NEAR_OOD,
            test_set.images[held],
            np.full(held.size, -1, dtype=np.int64),
        ),
    ]
    fmt = train_set.images.shape[1:]
    studies += _nonsemantic_studies(
        "far_ood", "far_ood", StudyKind.FAR_OOD, fmt, N_PER_STUDY[q], seed, data_dir
    )
    superclass_of = {i: s for s, members in FASHION_MNIST_SUPERCLASSES.items() for i in members}
    split = {
        "in_distribution": [names[i] for i in known],
        "near_ood": [names[i] for i in near],
        "superclass": {names[i]: superclass_of[i] for i in range(len(names))},
        "far_ood": list(NONSEMANTIC_DATASETS),
    }
    return [Experiment(EXPERIMENT_NAME, class_names, train, val, tuple(studies), split)]
