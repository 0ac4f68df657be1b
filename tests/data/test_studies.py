"""Tests for the default Fashion-MNIST benchmark studies."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.data.shifts.corruptions import CORRUPTIONS
from fdbench.data.shifts.splits import FASHION_MNIST_SUPERCLASSES
from fdbench.data.suites.fashion_mnist import fashion_mnist_experiments
from fdbench.data.types import Study, StudyKind


@pytest.fixture(scope="module")
def quick(fetched):
    for name in ("fashion_mnist", "mnist", "animal_mnist"):
        fetched(name)
    return fashion_mnist_experiments(seed=0, quick=True)


def _original_labels(images, dataset):
    """For every image, the set of official labels of the byte-identical official images
    (Fashion-MNIST has a few exact duplicates; an empty set means not an official image)."""
    lookup: dict[bytes, set[int]] = {}
    for img, lab in zip(dataset.images, dataset.labels, strict=True):
        lookup.setdefault(img.tobytes(), set()).add(int(lab))
    return [lookup.get(img.tobytes(), set()) for img in images]


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
    known = np.array([train_set.class_names.index(n) for n in exp.class_names])
    held = set(range(10)) - set(known.tolist())
    # every training and validation image is an official training image of the class it is
    # labelled with, a known class; none is only an image of a held-out class
    for part in (exp.train, exp.val):
        for orig, label in zip(_original_labels(part.images, train_set), part.labels, strict=True):
            assert known[label] in orig
    studies = {s.name: s for s in exp.studies}
    for orig in _original_labels(studies["new_class/semantic"].images, test_set):
        assert orig and orig <= held
    assert held == set().union(*_original_labels(studies["new_class/semantic"].images, test_set))
    iid = studies["iid"]
    for orig, label in zip(_original_labels(iid.images, test_set), iid.labels, strict=True):
        assert known[label] in orig
    # sub-class experiment: the held-out sub-classes (one per super-class) fill the study and
    # appear nowhere in training or validation, where every image keeps its super-class label
    supers = list(FASHION_MNIST_SUPERCLASSES.values())
    sub = {s.name: s for s in sup.studies}["subclass"]
    sub_orig = _original_labels(sub.images, test_set)
    held_sub = set().union(*sub_orig)
    assert len(held_sub) == 3 and all(len(held_sub & set(v)) == 1 for v in supers)
    for orig, label in zip(sub_orig, sub.labels, strict=True):
        assert orig and orig <= set(supers[label])
    for part in (sup.train, sup.val):
        for orig, label in zip(_original_labels(part.images, train_set), part.labels, strict=True):
            assert orig & (set(supers[label]) - held_sub)


def test_reproducible_and_seed_dependent(quick):
    again = fashion_mnist_experiments(seed=0, quick=True)
    for a, b in zip(again, quick, strict=True):
        assert a.class_names == b.class_names
        assert [s.name for s in a.studies] == [s.name for s in b.studies]
        pairs = ((a.train, b.train), (a.val, b.val), *zip(a.studies, b.studies, strict=True))
        for part_a, part_b in pairs:
            np.testing.assert_array_equal(part_a.images, part_b.images)
            np.testing.assert_array_equal(part_a.labels, part_b.labels)
    other = fashion_mnist_experiments(seed=1, quick=True)
    assert other[0].class_names != quick[0].class_names or not np.array_equal(
        other[0].train.labels, quick[0].train.labels
    )


def test_study_validation():
    with pytest.raises(TypeError, match="kind must be a StudyKind"):
        Study("x", "iid", np.zeros((1, 2, 2, 1), np.uint8), np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="labels must have shape"):
        Study("x", StudyKind.IID, np.zeros((1, 2, 2, 1), np.uint8), np.zeros(2, np.int64))
