"""The embedded unknown-detection benchmark: Fashion-MNIST super-classes, near/far-OoD roles."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

from fdbench.data.shifts.splits import FASHION_MNIST_SUPERCLASSES
from fdbench.data.suites.fashion_mnist import NONSEMANTIC_DATASETS
from fdbench.data.suites.fashion_unknown import fashion_mnist_unknown_detection
from fdbench.data.types import StudyKind
from fdbench.jobs.plan import load_config
from fdbench.training.experiments import build_experiments


@pytest.fixture(scope="module")
def tiny(fetched):
    for name in ("fashion_mnist", *NONSEMANTIC_DATASETS):
        fetched(name)
    return fashion_mnist_unknown_detection(seed=0, tiny=True)[0]


def test_roles_and_superclass_split(tiny, fetched):
    kinds = {s.name: s.kind for s in tiny.studies}
    assert kinds == {
        "iid": StudyKind.IID,
        "near_ood/fashion_mnist": StudyKind.NEAR_OOD,
        **{f"far_ood/{n}": StudyKind.FAR_OOD for n in NONSEMANTIC_DATASETS},
    }
    names = fetched("fashion_mnist", "train").class_names
    inside = {names.index(n) for n in tiny.split["in_distribution"]}
    near = {names.index(n) for n in tiny.split["near_ood"]}
    assert inside.isdisjoint(near) and inside | near == set(range(10))
    for members in FASHION_MNIST_SUPERCLASSES.values():
        # 2 in-distribution classes per super-class; each near-OoD class shares one
        assert len(inside & set(members)) == 2 and len(near & set(members)) == len(members) - 2
    assert tiny.class_names == tuple(names[i] for i in sorted(inside))
    for study in tiny.studies:
        assert study.images.shape[1:] == (28, 28, 1)
        if study.kind is not StudyKind.IID:
            assert np.all(study.labels == -1)
        else:
            assert study.labels.min() >= 0 and study.labels.max() < 6


def test_near_ood_images_are_test_images_of_the_near_classes(tiny, fetched):
    test = fetched("fashion_mnist", "test")
    near = [test.class_names.index(n) for n in tiny.split["near_ood"]]
    pool = {img.tobytes() for img in test.images[np.isin(test.labels, near)]}
    study = next(s for s in tiny.studies if s.kind is StudyKind.NEAR_OOD)
    assert all(img.tobytes() in pool for img in study.images)


@pytest.mark.parametrize("name", ["unknown_detection.yaml", "unknown_detection_quick.yaml"])
def test_embedded_configs_build(name, fetched):
    for dataset in ("fashion_mnist", *NONSEMANTIC_DATASETS):
        fetched(dataset)
    config = load_config(Path(str(files("fdbench") / "configs" / name)))
    assert config.openmax is not None and config.ensembles == ["baseline"]
    assert config.architecture.dropout_placement == "every_conv"
    if "quick" in name:
        (experiment,) = build_experiments(config)
        assert {s.kind for s in experiment.studies} == {
            StudyKind.IID,
            StudyKind.NEAR_OOD,
            StudyKind.FAR_OOD,
        }
