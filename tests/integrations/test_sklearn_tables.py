"""Tables of losses of fitted scikit-learn estimators."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import BayesianRidge, LinearRegression, LogisticRegression

from fdbench.csf.probabilities import probability_csfs
from fdbench.evaluation.loss_tables import evaluate_loss_table, loss_table
from fdbench.evaluation.tables import evaluate_table
from fdbench.integrations.sklearn_tables import classifier_loss_table, regressor_loss_table


def test_classifier_table_gives_the_metrics_of_its_labels_and_predictions():
    X, y = load_iris(return_X_y=True)
    model = LogisticRegression(max_iter=200, C=0.05).fit(X[::2], y[::2])
    table = classifier_loss_table(
        model, X[1::2], y[1::2], confidences={"neg": lambda e, X: -X[:, 0]}
    )
    proba = model.predict_proba(X[1::2])
    prediction = model.classes_[proba.argmax(axis=1)]
    np.testing.assert_array_equal(table["correct"], prediction == y[1::2])
    assert list(table.columns) == ["sample_id", "study", "correct", "MSR", "PE", "DOCTOR", "neg"]
    by_labels = pd.DataFrame({"study": "iid", "label": y[1::2], "prediction": prediction})
    by_labels = by_labels.assign(**probability_csfs(proba), neg=-X[1::2, 0])
    theirs = evaluate_table(by_labels).set_index(["csf", "metric"])["value"]
    ours = evaluate_loss_table(loss_table(table)).set_index(["csf", "metric"])["value"]
    np.testing.assert_array_equal(ours, theirs.loc[ours.index])


def test_regressor_tables():
    X, y = load_diabetes(return_X_y=True)
    forest = RandomForestRegressor(n_estimators=10, random_state=0).fit(X[:300], y[:300])
    table = regressor_loss_table(forest, X[300:], y[300:], loss="squared_error")
    np.testing.assert_allclose(table["residual"], (y[300:] - forest.predict(X[300:])) ** 2)
    members = np.std([m.predict(X[300:]) for m in forest.estimators_], axis=0)
    np.testing.assert_allclose(table["ensemble_agreement"], -members)
    bayes = BayesianRidge().fit(X[:300], y[:300])
    table = regressor_loss_table(bayes, X[300:], y[300:], loss=lambda t, p: np.abs(t - p) / 3)
    _, std = bayes.predict(X[300:], return_std=True)
    np.testing.assert_allclose(table["predictive_std"], -std)
    assert list(table.columns) == ["sample_id", "study", "residual", "predictive_std"]
    with pytest.raises(ValueError, match="confidences"):
        regressor_loss_table(LinearRegression().fit(X, y), X, y)
    with pytest.raises(ValueError, match="loss"):
        regressor_loss_table(forest, X, y, loss=lambda t, p: t - p)
    with pytest.raises(TypeError, match="classifier"):
        classifier_loss_table(forest, X, y)
