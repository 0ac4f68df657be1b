"""Tables of per-sample losses and confidences of fitted scikit-learn estimators: classifiers
(``predict_proba``; ``correct``) and regressors (``predict`` and a loss; ``residual``), the
input of ``fdbench evaluate`` (docs/any_model.md)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fdbench.csf.probabilities import probability_csfs

__all__ = ["REGRESSION_LOSSES", "classifier_loss_table", "regressor_loss_table"]

#: A confidence computed from a fitted estimator and the inputs: ``f(estimator, X)``.
ConfidenceFunction = Callable[[Any, Any], ArrayLike]


def _absolute_error(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return np.abs(y_true - y_pred)


def _squared_error(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return (y_true - y_pred) ** 2


#: The per-sample losses of :func:`regressor_loss_table` by name: |y − ŷ| and (y − ŷ)².
REGRESSION_LOSSES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "absolute_error": _absolute_error,
    "squared_error": _squared_error,
}


def _custom(
    estimator: Any, X: Any, confidences: Mapping[str, ConfidenceFunction], n: int
) -> dict[str, np.ndarray]:
    out = {}
    for name, function in confidences.items():
        if not callable(function):
            raise TypeError(
                f"confidences[{name!r}]: expected a function f(estimator, X), got "
                f"{type(function).__name__}"
            )
        values = np.asarray(function(estimator, X), dtype=np.float64)
        if values.shape != (n,):
            raise ValueError(
                f"confidences[{name!r}]: expected one value per sample, shape ({n},); got "
                f"{values.shape}"
            )
        out[name] = values
    return out


def _frame(
    loss: str, values: np.ndarray, confidences: Mapping[str, np.ndarray], study: str
) -> pd.DataFrame:
    n = values.shape[0]
    frame = pd.DataFrame({"sample_id": np.arange(n), "study": study, loss: values})
    for name, conf in confidences.items():
        frame[name] = conf
    return frame


def classifier_loss_table(
    estimator: Any,
    X: Any,
    y: ArrayLike,
    *,
    confidences: Mapping[str, ConfidenceFunction] | None = None,
    study: str = "iid",
) -> pd.DataFrame:
    """The table of losses of a fitted classifier on ``(X, y)``: ``sample_id``, ``study``,
    ``correct`` (1 where the class of highest ``predict_proba`` is ``y``) and one column per
    confidence.

    Default confidences: those of the class probabilities as given
    (:func:`fdbench.csf.probability_csfs`: MSR, PE, DOCTOR). ``confidences`` maps further
    names to functions ``f(estimator, X)`` of one value per sample (higher = more confident),
    e.g. ``lambda est, X: est.decision_function(X).max(axis=1)``.
    """
    if not hasattr(estimator, "predict_proba") or not hasattr(estimator, "classes_"):
        raise TypeError(
            "estimator: expected a fitted classifier with predict_proba and classes_, got "
            f"{type(estimator).__name__}"
        )
    y_true = np.asarray(y)
    proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    if y_true.ndim != 1 or proba.shape[0] != y_true.shape[0]:
        raise ValueError(
            f"y: expected one label per row of X ({proba.shape[0]}), got shape {y_true.shape}"
        )
    y_pred = np.asarray(estimator.classes_)[np.argmax(proba, axis=1)]
    scores = probability_csfs(proba)
    scores.update(_custom(estimator, X, confidences or {}, y_true.shape[0]))
    return _frame("correct", (y_pred == y_true).astype(np.int64), scores, study)


def _default_regression_confidences(estimator: Any, X: Any) -> dict[str, np.ndarray]:
    """``ensemble_agreement`` (−std of the members' predictions of a bagging-type ensemble
    with ``estimators_``, e.g. a random forest) and ``predictive_std`` (−the standard
    deviation ``predict(X, return_std=True)`` gives, e.g. Gaussian-process and Bayesian
    regressors), where the estimator offers them."""
    out = {}
    members = getattr(estimator, "estimators_", None)
    if members is not None and not hasattr(estimator, "staged_predict"):
        data = np.asarray(X)
        spread = np.std([np.asarray(m.predict(data), dtype=np.float64) for m in members], axis=0)
        out["ensemble_agreement"] = -spread
    if "return_std" in inspect.signature(estimator.predict).parameters:
        _, std = estimator.predict(X, return_std=True)
        out["predictive_std"] = -np.asarray(std, dtype=np.float64)
    return out


def regressor_loss_table(
    estimator: Any,
    X: Any,
    y: ArrayLike,
    *,
    loss: str | Callable[[np.ndarray, np.ndarray], ArrayLike] = "absolute_error",
    confidences: Mapping[str, ConfidenceFunction] | None = None,
    study: str = "iid",
) -> pd.DataFrame:
    """The table of losses of a fitted regressor on ``(X, y)``: ``sample_id``, ``study``,
    ``residual`` (the per-sample ``loss`` of ``predict(X)``: ``absolute_error`` |y − ŷ|,
    ``squared_error`` (y − ŷ)², or a function ``loss(y_true, y_pred)`` of non-negative
    values) and one column per confidence.

    Default confidences, where the estimator offers them: ``ensemble_agreement`` (minus the
    standard deviation of a bagging ensemble's members) and ``predictive_std`` (minus the
    predictive standard deviation of ``predict(X, return_std=True)``). ``confidences`` maps
    further names to functions ``f(estimator, X)`` (higher = more confident). A regressor
    with neither needs ``confidences``.
    """
    if not hasattr(estimator, "predict"):
        raise TypeError(f"estimator: expected a fitted regressor, got {type(estimator).__name__}")
    if isinstance(loss, str):
        if loss not in REGRESSION_LOSSES:
            raise ValueError(f"loss: expected {' or '.join(REGRESSION_LOSSES)} or a function")
        loss_function = REGRESSION_LOSSES[loss]
    elif callable(loss):
        loss_function = loss
    else:
        raise TypeError(f"loss: expected a name or a function, got {type(loss).__name__}")
    y_true = np.asarray(y, dtype=np.float64)
    y_pred = np.asarray(estimator.predict(X), dtype=np.float64)
    if y_true.ndim != 1 or y_pred.shape != y_true.shape:
        raise ValueError(
            f"y: expected one target per row of X ({y_pred.shape[0]}), got shape {y_true.shape}"
        )
    residual = np.asarray(loss_function(y_true, y_pred), dtype=np.float64)
    if residual.shape != y_true.shape or not np.all(np.isfinite(residual) & (residual >= 0)):
        raise ValueError("loss: expected one finite value >= 0 per sample")
    scores = _default_regression_confidences(estimator, X)
    scores.update(_custom(estimator, X, confidences or {}, y_true.shape[0]))
    if not scores:
        raise ValueError(
            f"confidences: {type(estimator).__name__} has no confidence of its own (no "
            "ensemble members, no return_std); give confidences={name: f(estimator, X)}"
        )
    return _frame("residual", residual, scores, study)
