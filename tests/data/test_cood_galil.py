"""C-OOD construction of Galil et al. (Appendix L): estimation/test split, group size, levels."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.data.shifts.cood import (
    cood_estimation_split,
    cood_group_size,
    cood_severity_levels,
    cood_small_classes,
)


def test_group_size_rule():
    assert cood_group_size(1000, 12563) == 1000  # the paper: 11 564 windows of 1 000 classes
    assert cood_group_size(10, 21) == 10  # 12 windows >= 11 levels
    assert cood_group_size(10, 15) == 5  # scaled down: 15 − 11 + 1 = 5 gives 11 windows
    assert cood_group_size(10, 5) == 1  # fewer classes than levels: single classes
    with pytest.raises(ValueError, match="n_ood_classes"):
        cood_group_size(10, 0)


def test_estimation_split_sizes_disjoint_and_seeded():
    classes = np.concatenate([np.full(250, 0), np.full(40, 1), np.full(1, 2), np.full(7, 3)])
    classes = np.random.default_rng(0).permutation(classes)
    est, test = cood_estimation_split(classes, seed=5, keep_small_classes=True)
    assert not np.any(est & test)
    counts = {c: (int(est[classes == c].sum()), int(test[classes == c].sum())) for c in range(4)}
    # 150/50 of a large class (50 unused); 3:1 of a small one; a 1-sample class left out
    assert counts == {0: (150, 50), 1: (30, 10), 2: (0, 0), 3: (5, 2)}
    # by default (Galil et al., App. L.1) the classes with fewer than 200 samples are removed
    est, test = cood_estimation_split(classes, seed=5)
    assert not np.any(est & test)
    counts = {c: (int(est[classes == c].sum()), int(test[classes == c].sum())) for c in range(4)}
    assert counts == {0: (150, 50), 1: (0, 0), 2: (0, 0), 3: (0, 0)}
    np.testing.assert_array_equal(cood_small_classes(classes), [1, 2, 3])
    np.testing.assert_array_equal(cood_small_classes(classes, n_estimation=30, n_test=10), [2, 3])
    est, test = cood_estimation_split(classes, seed=5, keep_small_classes=True)
    again = cood_estimation_split(classes, seed=5, keep_small_classes=True)
    np.testing.assert_array_equal(est, again[0])
    np.testing.assert_array_equal(test, again[1])
    other = cood_estimation_split(classes, seed=6, keep_small_classes=True)
    assert not np.array_equal(est, other[0])


def test_levels_on_hand_built_class_means():
    # 14 OOD classes; class id c has estimation mean severity[c]; its test samples are far
    # off (1000 + c) so that they cannot influence the class scores
    severity = np.array([13, 2, 7, 0, 11, 5, 9, 1, 12, 3, 8, 4, 10, 6], dtype=float) / 100
    n_classes, per_class = severity.size, 4
    labels = np.repeat(np.arange(n_classes), per_class)
    est = np.tile([True, True, True, False], n_classes)
    conf = np.where(est, severity[labels], 1000.0 + labels)
    conf[est] += np.tile([-0.001, 0.0, 0.001], n_classes)  # means stay exactly severity[c]
    k = cood_group_size(4, n_classes)  # 4 ID classes: 14 − 4 + 1 = 11 windows, k = 4
    assert k == 4
    levels = cood_severity_levels(conf, labels, k=k, estimation_mask=est)
    order = np.argsort(severity)  # classes by ascending severity: 3, 7, 1, 9, 11, 5, ...
    for level in range(11):  # 11 windows and 11 percentiles: level i is window i
        assert levels.groups[level] == tuple(int(c) for c in order[level : level + 4])
        assert levels.scores[level] == pytest.approx((level + 1.5) / 100, abs=1e-15)
        expected = np.flatnonzero(~est & np.isin(labels, order[level : level + 4]))
        np.testing.assert_array_equal(levels.test_indices[level], expected)
    assert levels.class_scores[3] == pytest.approx(0.0, abs=1e-15)


def test_levels_pick_percentile_windows_of_a_longer_sorted_list():
    # 30 classes with severity = class id, k = 10: W = 21 windows; level p takes window
    # int(p/100 · 21), the last one moved to W − 1 = 20 (percentile_severity_alg)
    labels = np.repeat(np.arange(30), 2)
    conf = labels.astype(float)
    est = np.tile([True, False], 30)
    levels = cood_severity_levels(conf, labels, k=10, estimation_mask=est)
    starts = [g[0] for g in levels.groups]
    assert starts == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]


def test_test_mask_restricts_test_samples_and_must_be_disjoint():
    labels = np.repeat(np.arange(12), 3)
    conf = np.linspace(0, 1, labels.size)
    est = np.tile([True, False, False], 12)
    test = np.tile([False, True, False], 12)
    levels = cood_severity_levels(conf, labels, k=2, estimation_mask=est, test_mask=test)
    for idx in levels.test_indices:
        assert test[idx].all()
    with pytest.raises(ValueError, match="disjoint"):
        cood_severity_levels(conf, labels, k=2, estimation_mask=est, test_mask=est)
