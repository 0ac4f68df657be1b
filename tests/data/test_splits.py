"""Tests for the class splits that create sub-class and new-class shifts."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.data.shifts.splits import (
    CIFAR100_CLASSES,
    FASHION_MNIST_SUPERCLASSES,
    cifar100_superclasses,
    kim_split,
    relabel,
    semantic_split,
    subclass_shift,
    to_format,
)


def test_cifar100_superclasses():
    assert len(CIFAR100_CLASSES) == 100 and CIFAR100_CLASSES[0] == "apple"
    full = cifar100_superclasses(drop=())
    assert len(full) == 20 and sorted(c for v in full.values() for c in v) == list(range(100))
    fd_shifts = cifar100_superclasses()
    assert len(fd_shifts) == 19 and "vehicles_2" not in fd_shifts
    assert CIFAR100_CLASSES.index("whale") in fd_shifts["aquatic_mammals"]


def test_subclass_shift_holds_out_one_per_superclass():
    shift = subclass_shift(FASHION_MNIST_SUPERCLASSES, 10, seed=3)
    assert len(shift.held_out) == 3
    for i, classes in enumerate(FASHION_MNIST_SUPERCLASSES.values()):
        assert shift.held_out[i] in classes
    labels = np.arange(10)
    assert not np.any(shift.train_mask(labels) & shift.held_out_mask(labels))
    assert np.all(shift.train_mask(labels) | shift.held_out_mask(labels))
    assert shift.super_labels(np.array([0, 5, 8])).tolist() == [0, 1, 2]
    assert subclass_shift(FASHION_MNIST_SUPERCLASSES, 10, seed=3).held_out == shift.held_out
    seen = {subclass_shift(FASHION_MNIST_SUPERCLASSES, 10, seed=s).held_out for s in range(20)}
    assert len(seen) > 3


def test_subclass_shift_validation():
    with pytest.raises(ValueError, match="at least 2"):
        subclass_shift({"a": (0,), "b": (1, 2)}, 3, seed=0)
    with pytest.raises(ValueError, match="one super-class"):
        subclass_shift({"a": (0, 1), "b": (1, 2)}, 3, seed=0)
    with pytest.raises(ValueError, match="below n_classes"):
        subclass_shift({"a": (0, 1), "b": (2, 3)}, 3, seed=0)


def test_semantic_split_and_relabel():
    known, held = semantic_split(10, fraction=0.4, seed=0)
    assert held.size == 4 and known.size == 6
    assert sorted([*known, *held]) == list(range(10))
    np.testing.assert_array_equal(semantic_split(10, seed=0)[1], held)
    labels = np.arange(10)
    new = relabel(labels, known)
    assert np.all(new[held] == -1) and new[known].tolist() == list(range(6))
    with pytest.raises(ValueError, match="fraction"):
        semantic_split(10, fraction=1.0, seed=0)


def test_kim_split_cifar40_60():
    inside, near = kim_split(cifar100_superclasses(drop=()), per_superclass=2, seed=0)
    assert inside.size == 40 and near.size == 60
    assert not set(inside) & set(near) and set(inside) | set(near) == set(range(100))
    for classes in cifar100_superclasses(drop=()).values():
        assert len(set(classes) & set(inside)) == 2


def test_splits_reproducible_from_seed_and_seed_dependent():
    supers = cifar100_superclasses(drop=())
    for seed in (0, 7):
        first = (*kim_split(supers, seed=seed), *semantic_split(100, seed=seed))
        second = (*kim_split(supers, seed=seed), *semantic_split(100, seed=seed))
        for a, b in zip(first, second, strict=True):
            np.testing.assert_array_equal(a, b)
        assert (
            subclass_shift(supers, 100, seed=seed).held_out
            == subclass_shift(supers, 100, seed=seed).held_out
        )
    assert len({tuple(kim_split(supers, seed=s)[0]) for s in range(5)}) == 5
    assert len({tuple(semantic_split(100, seed=s)[1]) for s in range(5)}) == 5
    assert len({subclass_shift(supers, 100, seed=s).held_out for s in range(5)}) == 5


def test_to_format():
    grey = np.zeros((2, 8, 8, 1), np.uint8)
    grey[:, 2:6, 2:6] = 200
    rgb = to_format(grey, 28, 28, 3)
    assert rgb.shape == (2, 28, 28, 3) and np.all(rgb[..., 0] == rgb[..., 2])
    assert rgb[0, 14, 14, 0] == 200 and rgb[0, 0, 0, 0] == 0
    colour = np.zeros((1, 4, 4, 3), np.uint8)
    colour[..., 1] = 255
    assert to_format(colour, 4, 4, 1)[0, 0, 0, 0] == round(0.587 * 255)
    with pytest.raises(ValueError, match="channels"):
        to_format(grey, 8, 8, 2)
