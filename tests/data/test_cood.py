"""Tests for the C-OOD severity levels of Galil et al. (2023)."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.data.shifts.cood import cood_severity_levels


def test_hand_computed_example():
    # 5 classes, 2 samples each; the first sample of each class estimates, the second is test.
    labels = np.repeat(np.arange(5), 2)
    est = np.tile([True, False], 5)
    # estimation confidences: class 0: 0.9, 1: 0.1, 2: 0.5, 3: 0.3, 4: 0.7
    conf = np.array([0.9, 0.0, 0.1, 0.0, 0.5, 0.0, 0.3, 0.0, 0.7, 0.0])
    levels = cood_severity_levels(conf, labels, k=2, estimation_mask=est, percentiles=(0, 50, 100))
    # sorted classes 1 (0.1), 3 (0.3), 2 (0.5), 4 (0.7), 0 (0.9); windows of 2 → 4 windows
    # scores 0.2, 0.4, 0.6, 0.8; positions min(floor(p/100 · 4), 3) = 0, 2, 3
    assert levels.groups == ((1, 3), (2, 4), (4, 0))
    np.testing.assert_allclose(levels.scores, [0.2, 0.6, 0.8])
    assert levels.test_indices[0].tolist() == [3, 7]
    assert levels.test_indices[2].tolist() == [1, 9]
    assert levels.class_scores == {0: 0.9, 1: 0.1, 2: 0.5, 3: 0.3, 4: 0.7}


def test_default_percentiles_pick_windows_as_the_authors_code():
    # Galil et al.'s percentile_severity_alg: window int(q · W) for q = 0, 0.1, …, 1, the last
    # one moved to W − 1. Here W = 4 windows (5 classes, k = 2), so the 11 levels take windows
    # 0 0 0 1 1 2 2 2 3 3 3 (q · W = 0, .4, .8, 1.2, 1.6, 2, 2.4, 2.8, 3.2, 3.6, 4 → 3).
    labels = np.repeat(np.arange(5), 2)
    est = np.tile([True, False], 5)
    conf = np.array([0.9, 0.0, 0.1, 0.0, 0.5, 0.0, 0.3, 0.0, 0.7, 0.0])
    levels = cood_severity_levels(conf, labels, k=2, estimation_mask=est)
    windows = ((1, 3), (3, 2), (2, 4), (4, 0))
    expected = [0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 3]
    assert levels.percentiles == tuple(range(0, 101, 10))
    assert levels.groups == tuple(windows[w] for w in expected)
    np.testing.assert_allclose(levels.scores, [(0.2, 0.4, 0.6, 0.8)[w] for w in expected])
    assert np.all(np.diff(levels.scores) >= 0)


def test_levels_increase_and_test_disjoint_from_estimation():
    rng = np.random.default_rng(0)
    n_classes, per_class = 40, 30
    labels = np.repeat(np.arange(n_classes), per_class)
    class_mean = rng.uniform(0.2, 0.9, n_classes)
    conf = np.clip(class_mean[labels] + rng.normal(0, 0.05, labels.size), 0, 1)
    levels = cood_severity_levels(conf, labels, k=10, seed=1)
    assert len(levels.groups) == 11 and all(len(g) == 10 for g in levels.groups)
    assert np.all(np.diff(levels.scores) >= 0) and levels.scores[-1] > levels.scores[0]
    test_means = [conf[idx].mean() for idx in levels.test_indices]
    assert test_means[-1] > test_means[0]
    again = cood_severity_levels(conf, labels, k=10, seed=1)
    assert again.groups == levels.groups
    for idx, group in zip(levels.test_indices, levels.groups, strict=True):
        assert set(labels[idx]) == set(group)
        assert idx.size == 15 * len(group)  # half of every class is kept for testing


def test_validation():
    labels = np.repeat(np.arange(3), 4)
    conf = np.linspace(0, 1, 12)
    with pytest.raises(ValueError, match="k must be"):
        cood_severity_levels(conf, labels, k=4)
    with pytest.raises(ValueError, match="equal length"):
        cood_severity_levels(conf[:-1], labels)
    with pytest.raises(TypeError, match="labels must be integer"):
        cood_severity_levels(conf, labels.astype(float))


def test_cood_studies():
    from fdbench.data.shifts.cood import cood_studies
    from fdbench.data.types import StudyKind

    labels = np.repeat(np.arange(4), 4)
    conf = np.repeat([0.2, 0.9, 0.5, 0.7], 4).astype(float)
    images = np.arange(16, dtype=np.uint8)[:, None, None, None] * np.ones((1, 2, 2, 1), np.uint8)
    levels = cood_severity_levels(conf, labels, k=1, seed=0, percentiles=(0, 100))
    studies = cood_studies(levels, images)
    assert [s.name for s in studies] == ["cood/0", "cood/100"]
    assert all(s.kind is StudyKind.COOD and np.all(s.labels == -1) for s in studies)
    assert set(studies[0].images[:, 0, 0, 0] // 4) == {0}  # easiest: class 0 (confidence 0.2)
    assert set(studies[1].images[:, 0, 0, 0] // 4) == {1}  # hardest: class 1 (confidence 0.9)
    assert studies[1].severity == 1 and len(studies[0].labels) == 2
    with pytest.raises(ValueError, match="out of range"):
        cood_studies(levels, images[:3])
