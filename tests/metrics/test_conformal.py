"""Conformal prediction sets: hand cases, coverage in simulation, and MAPIE's LAC and APS."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.metrics.conformal import (
    conformal_quantile,
    conformal_scores,
    conformal_sets,
    mean_set_size,
    per_class_coverage,
    set_coverage,
)

P = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.25, 0.25, 0.5]])


def test_quantile_by_hand():
    scores = np.arange(1.0, 10.0)  # n = 9
    # ceil(10 * 0.8) = 8th smallest
    assert conformal_quantile(scores, 0.2) == 8.0
    # ceil(10 * 0.95) = 10 > 9: infinite
    assert conformal_quantile(scores, 0.05) == np.inf


def test_scores_by_hand():
    y = np.array([1, 2, 1])
    np.testing.assert_allclose(conformal_scores(P, y, method="lac"), [0.7, 0.7, 0.75])
    # APS: mass of the labels ranked at or above y (ties by index: label 0 before 1)
    np.testing.assert_allclose(conformal_scores(P, y, method="aps"), [0.8, 0.9, 1.0])
    # RAPS, lam = 0.1, k_reg = 1: plus 0.1 * (rank - 1)
    raps = conformal_scores(P, y, method="raps", lam=0.1, k_reg=1)
    np.testing.assert_allclose(raps, [0.9, 1.0, 1.2])


def test_sets_by_hand():
    cal = np.tile(P, (3, 1))
    cal_y = np.array([0, 1, 2, 1, 2, 0, 2, 1, 0])
    # LAC calibration scores: 0.5 0.4 0.5 0.7 0.7 0.75 0.8 0.9 0.75; n = 9, alpha = 0.3:
    # ceil(10 * 0.7) = 7th smallest of (0.4 0.5 0.5 0.7 0.7 0.75 0.75 0.8 0.9) = 0.75
    sets = conformal_sets(cal, cal_y, P, 0.3, method="lac")
    expected = np.array([[True, True, False], [False, True, True], [True, True, True]])
    np.testing.assert_array_equal(sets, expected)
    assert mean_set_size(sets) == pytest.approx(7 / 3)
    assert set_coverage(sets, [0, 1, 2]) == 1.0
    assert per_class_coverage(sets, [0, 0, 1]) == {0: 0.5, 1: 1.0}


def _dirichlet_model(rng, n, k=5):
    probs = rng.dirichlet(np.full(k, 0.5), size=n)
    labels = (rng.uniform(size=(n, 1)) > np.cumsum(probs, axis=1)).sum(axis=1)
    return probs, np.minimum(labels, k - 1)


@pytest.mark.parametrize("method", ["lac", "aps", "raps"])
@pytest.mark.parametrize("randomized", [False, True])
def test_marginal_coverage_in_simulation(method, randomized):
    """300 calibration/test draws from a model whose labels follow its probabilities: mean
    coverage within 1.5 points of >= 0.9 (the mean of 300 draws of 500 test samples each has
    a standard error below 0.2 points)."""
    rng = np.random.default_rng(5)
    coverages = []
    for trial in range(300):
        probs, labels = _dirichlet_model(rng, 600)
        sets = conformal_sets(
            probs[:100], labels[:100], probs[100:], 0.1, method=method,
            randomized=randomized, seed=trial,
        )  # fmt: skip
        coverages.append(set_coverage(sets, labels[100:]))
    assert np.mean(coverages) >= 0.9 - 0.015
    if randomized or method == "lac":
        assert np.mean(coverages) <= 0.9 + 1 / 101 + 0.015


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="method"):
        conformal_scores(P, [0, 1, 2], method="nope")
    with pytest.raises(ValueError, match="probs"):
        conformal_scores(P * 3, [0, 1, 2])
    with pytest.raises(ValueError, match="labels"):
        conformal_scores(P, [0, 1, 5])
    with pytest.raises(ValueError, match="alpha"):
        conformal_sets(P, [0, 1, 2], P, 1.5)


mapie = pytest.importorskip("mapie")


class _Fixed:
    """A fitted classifier whose predict_proba returns stored probabilities (X is an index)."""

    def __init__(self, probs):
        self.probs = probs
        self.classes_ = np.arange(probs.shape[1])
        self._estimator_type = "classifier"

    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        return self.probs[np.asarray(X).ravel().astype(int)]

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, Tags, TargetTags

        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags())  # fmt: skip


def test_lac_sets_equal_mapie():
    from mapie.classification import SplitConformalClassifier

    rng = np.random.default_rng(2)
    probs, labels = _dirichlet_model(rng, 700)
    cal, test = np.arange(200), np.arange(200, 700)
    for alpha in (0.05, 0.1, 0.2):
        ours = conformal_sets(probs[cal], labels[cal], probs[test], alpha, method="lac")
        model = SplitConformalClassifier(
            _Fixed(probs), confidence_level=1 - alpha, conformity_score="lac", prefit=True
        )
        model.conformalize(cal[:, None], labels[cal])
        _, theirs = model.predict_set(test[:, None])
        np.testing.assert_array_equal(ours, theirs[:, :, 0])


def test_aps_score_equals_mapie():
    """MAPIE's APS calibration score is always randomized; its non-randomized part, the
    cumulative mass through the true label, is the APS score here."""
    from mapie.conformity_scores import APSConformityScore

    rng = np.random.default_rng(3)
    probs, labels = _dirichlet_model(rng, 300)
    theirs, _ = APSConformityScore.get_true_label_cumsum_proba(labels, probs, np.arange(5))
    np.testing.assert_allclose(conformal_scores(probs, labels, method="aps"), theirs[:, 0])
