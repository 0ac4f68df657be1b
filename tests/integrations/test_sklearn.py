"""Risk-coverage displays draw fdbench's curve points; AURC/AUGRC scorers work in GridSearchCV."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from fdbench import metrics as M
from fdbench.integrations.sklearn import (
    GeneralizedRiskDisplay,
    RiskCoverageDisplay,
    augrc_score,
    aurc_score,
    make_augrc_scorer,
    make_aurc_scorer,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _predictions(seed: int = 0, n: int = 400):
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 4, n)
    y_pred = np.where(rng.random(n) < 0.7, y_true, rng.integers(0, 4, n))
    confidence = np.round(rng.random(n) + 0.3 * (y_pred == y_true), 2)  # with ties
    return y_true, y_pred, confidence


def test_risk_coverage_display_points_equal_the_curve():
    y_true, y_pred, confidence = _predictions()
    residuals = (y_true != y_pred).astype(float)
    curve = M.risk_coverage_curve(residuals, confidence)
    fig, ax = plt.subplots()
    display = RiskCoverageDisplay.from_predictions(
        y_true, y_pred, confidence, name="MSR", ax=ax, color="red", linestyle="--"
    )
    assert display.ax_ is ax and display.figure_ is fig
    np.testing.assert_array_equal(display.coverages, curve.coverages)
    np.testing.assert_array_equal(display.selective_risks, curve.selective_risks)
    np.testing.assert_array_equal(display.thresholds, curve.thresholds)
    x, y = display.line_.get_data()
    np.testing.assert_array_equal(x, curve.coverages)
    np.testing.assert_array_equal(y, curve.selective_risks)
    assert display.aurc == M.aurc(residuals, confidence)
    assert display.line_.get_label() == f"MSR (AURC = {display.aurc:.4f})"
    assert display.line_.get_color() == "red" and display.line_.get_linestyle() == "--"
    assert ax.get_xlabel() == "Coverage" and ax.get_ylabel() == "Selective risk"
    # plot() returns the display and draws again on another ax, under another name
    _, ax2 = plt.subplots()
    assert display.plot(ax=ax2, name="other") is display
    assert display.ax_ is ax2 and display.line_.get_label().startswith("other (AURC")


def test_generalized_risk_display_points_equal_the_curve():
    y_true, y_pred, confidence = _predictions(1)
    residuals = (y_true != y_pred).astype(float)
    weights = np.random.default_rng(2).integers(0, 3, y_true.size).astype(float)
    curve = M.risk_coverage_curve(residuals, confidence, sample_weight=weights)
    display = GeneralizedRiskDisplay.from_predictions(
        y_true, y_pred, confidence, sample_weight=weights
    )
    x, y = display.line_.get_data()
    np.testing.assert_array_equal(x, curve.coverages)
    np.testing.assert_array_equal(y, curve.generalized_risks)
    np.testing.assert_array_equal(display.generalized_risks, curve.generalized_risks)
    assert display.augrc == M.augrc(residuals, confidence, sample_weight=weights)
    assert display.line_.get_label() == f"AUGRC = {display.augrc:.4f}"
    assert display.ax_.get_ylabel() == "Generalized risk"
    bare = GeneralizedRiskDisplay(coverages=[1.0, 0.0], generalized_risks=[0.2, 0.0]).plot()
    assert bare.line_.get_label().startswith("_")  # no name, no area: no legend entry


def test_from_estimator_uses_predict_proba_and_classes():
    pytest.importorskip("sklearn")
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    X, y = load_digits(return_X_y=True)
    labels = np.array(list("abcdefghij"))[y]  # string classes: predictions come from classes_
    model = LogisticRegression(max_iter=200).fit(X[:1000], labels[:1000])
    proba = model.predict_proba(X[1000:])
    residuals = (model.classes_[proba.argmax(axis=1)] != labels[1000:]).astype(float)
    curve = M.risk_coverage_curve(residuals, proba.max(axis=1))
    display = RiskCoverageDisplay.from_estimator(model, X[1000:], labels[1000:])
    np.testing.assert_array_equal(display.line_.get_data()[1], curve.selective_risks)
    assert display.name == "LogisticRegression"
    entropy = GeneralizedRiskDisplay.from_estimator(
        model, X[1000:], labels[1000:], csf=lambda p: (p * np.log(p)).sum(axis=1), name="PE"
    )
    pe = (proba * np.log(proba)).sum(axis=1)
    np.testing.assert_array_equal(
        entropy.generalized_risks, M.risk_coverage_curve(residuals, pe).generalized_risks
    )
    with pytest.raises(TypeError, match="predict_proba"):
        RiskCoverageDisplay.from_estimator(object(), X, y)


def test_bad_predictions_are_named():
    with pytest.raises(ValueError, match="y_pred"):
        RiskCoverageDisplay.from_predictions([0, 1, 1], [0, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="confidence"):
        RiskCoverageDisplay.from_predictions([0, 1], [0, 0], [0.1, np.nan])


def test_score_functions():
    y_true = np.array([0, 0, 1, 2, 2, 1])
    proba = np.array(
        [
            [0.9, 0.05, 0.05],
            [0.2, 0.7, 0.1],
            [0.1, 0.8, 0.1],
            [0.3, 0.3, 0.4],
            [0.6, 0.2, 0.2],
            [0.1, 0.5, 0.4],
        ]
    )
    # predictions 0 1 1 2 0 1: failures at samples 1 and 4 (confidences 0.7 and 0.6)
    residuals = np.array([0, 1, 0, 0, 1, 0], dtype=float)
    assert aurc_score(y_true, proba) == M.aurc(residuals, proba.max(axis=1))
    assert augrc_score(y_true, proba) == M.augrc(residuals, proba.max(axis=1))
    # binary: a 1-D column is the probability of the greater label
    p = np.array([0.9, 0.2, 0.6, 0.4])
    assert aurc_score(["n", "n", "y", "y"], p) == M.aurc([1, 0, 0, 1], [0.9, 0.8, 0.6, 0.6])
    with pytest.raises(ValueError, match="labels="):
        aurc_score([0, 0, 1], proba[:3])


def test_scorers_in_grid_search_on_digits():
    pytest.importorskip("sklearn")
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    grid = {"C": [1e-3, 1e-1, 10.0]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        LogisticRegression(max_iter=300),
        grid,
        scoring={"aurc": make_aurc_scorer(), "augrc": make_augrc_scorer()},
        refit="aurc",
        cv=cv,
    ).fit(X, y)
    scores = search.cv_results_["mean_test_aurc"]
    assert np.all(scores <= 0)  # greater_is_better=False: scikit-learn maximises -AURC
    # the scores are -AURC of each fold, recomputed here
    folds = list(cv.split(X, y))
    for i, c in enumerate(grid["C"]):
        expected = []
        for train, test in folds:
            model = LogisticRegression(max_iter=300, C=c).fit(X[train], y[train])
            expected.append(-aurc_score(y[test], model.predict_proba(X[test])))
        assert scores[i] == pytest.approx(np.mean(expected), abs=1e-12)
    assert search.best_params_ == {"C": grid["C"][int(np.argmax(scores))]}
    assert search.best_params_["C"] != 1e-3  # the under-fitted model has the worst AURC
    assert np.all(search.cv_results_["mean_test_augrc"] <= 0)
