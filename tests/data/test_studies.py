"""Tests for the default Fashion-MNIST benchmark studies."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.data.corruptions import CORRUPTIONS
from fdbench.data.splits import FASHION_MNIST_SUPERCLASSES
from fdbench.data.studies import Study, StudyKind, fashion_mnist_experiments


@pytest.fixture(scope="module")
def quick(fetched):
    for name in ("fashion_mnist", "mnist", "animal_mnist"):
        fetched(name)
    return fashion_mnist_experiments(seed=0, quick=True)


def _original_labels(images, dataset):
    lookup = {
        img.tobytes(): int(lab) for img, lab in zip(dataset.images, dataset.labels, strict=True)
    }
    return np.array([lookup.get(img.tobytes(), -99) for img in images])


def test_structure(quick):
    exp, sup = quick
    assert exp.name == "fashion_mnist" and sup.name == "super_fashion_mnist"
    assert len(exp.class_names) == 6 and sup.class_names == tuple(FASHION_MNIST_SUPERCLASSES)
    names = [s.name for s in exp.studies]
    assert names[0] == "iid" and len(names) == len(set(names)) == 1 + 75 + 1 + 5
    for s in exp.studies:
        assert s.images.shape[1:] == (28, 28, 1) and s.images.dtype == np.uint8
        if s.kind is StudyKind.CORRUPTION:
            assert (
                s.corruption in CORRUPTIONS and s.name == f"corruption/{s.corruption}/{s.severity}"
            )
            assert len(s.labels) == 200 and s.labels.min() >= 0
        elif s.kind in (StudyKind.NEW_CLASS_SEMANTIC, StudyKind.NEW_CLASS_NONSEMANTIC):
            assert np.all(s.labels == -1)
    assert {s.name for s in sup.studies} == {"iid", "subclass"}
    assert len(exp.train) + len(exp.val) == 12_000 and len(exp.val) == 1_200


def test_no_class_leaks(quick, fetched):
    exp, sup = quick
    train_set, test_set = fetched("fashion_mnist", "train"), fetched("fashion_mnist", "test")
    known = [train_set.class_names.index(n) for n in exp.class_names]
    train_orig = _original_labels(exp.train.images[:500], train_set)
    assert set(train_orig) <= set(known)
    np.testing.assert_array_equal(np.array(known)[exp.train.labels[:500]], train_orig)
    studies = {s.name: s for s in exp.studies}
    sem_orig = _original_labels(studies["new_class/semantic"].images, test_set)
    assert set(sem_orig).isdisjoint(known) and -99 not in set(sem_orig)
    iid_orig = _original_labels(studies["iid"].images, test_set)
    np.testing.assert_array_equal(np.array(known)[studies["iid"].labels], iid_orig)
    # sub-class experiment: held-out classes absent from training, present in the study
    sup_studies = {s.name: s for s in sup.studies}
    sub_orig = set(_original_labels(sup_studies["subclass"].images, test_set))
    train_sup = set(_original_labels(sup.train.images[:2000], train_set))
    assert len(sub_orig) == 3 and sub_orig.isdisjoint(train_sup)
    for fine in sub_orig:
        sup_index = next(i for i, v in enumerate(FASHION_MNIST_SUPERCLASSES.values()) if fine in v)
        assert sup_index in set(sup_studies["subclass"].labels)


def test_reproducible_and_seed_dependent(quick):
    again = fashion_mnist_experiments(seed=0, quick=True)
    assert again[0].class_names == quick[0].class_names
    np.testing.assert_array_equal(again[0].studies[5].images, quick[0].studies[5].images)
    other = fashion_mnist_experiments(seed=1, quick=True)
    assert other[0].class_names != quick[0].class_names or not np.array_equal(
        other[0].train.labels, quick[0].train.labels
    )


def test_study_validation():
    with pytest.raises(TypeError, match="kind must be a StudyKind"):
        Study("x", "iid", np.zeros((1, 2, 2, 1), np.uint8), np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="labels must have shape"):
        Study("x", StudyKind.IID, np.zeros((1, 2, 2, 1), np.uint8), np.zeros(2, np.int64))
