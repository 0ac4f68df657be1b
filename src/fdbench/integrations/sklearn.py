"""scikit-learn style displays of risk-coverage curves and AURC/AUGRC scorers for model selection.

The displays follow ``sklearn.metrics.RocCurveDisplay``: a constructor taking the curve, the
class methods ``from_predictions`` and ``from_estimator``, ``plot(ax=None, *, name=None,
**kwargs)`` returning the display, and the attributes ``line_``, ``ax_`` and ``figure_`` after
plotting. Their points are those of :func:`fdbench.metrics.risk_coverage_curve`. They need
matplotlib only; scikit-learn is imported by the scorer factories alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from fdbench import metrics as M

__all__ = [
    "GeneralizedRiskDisplay",
    "RiskCoverageDisplay",
    "augrc_score",
    "aurc_score",
    "make_augrc_scorer",
    "make_aurc_scorer",
]


def _residuals(y_true: ArrayLike, y_pred: ArrayLike) -> np.ndarray:
    """0/1 residuals: 1 where the prediction differs from the true label."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.ndim != 1 or y_pred.shape != y_true.shape:
        raise ValueError(
            f"y_pred: expected a 1-D array of the shape of y_true {y_true.shape}, got "
            f"{y_pred.shape}"
        )
    return (y_true != y_pred).astype(np.float64)


def _estimator_outputs(
    estimator: Any, X: ArrayLike, csf: Callable[[np.ndarray], ArrayLike] | None
) -> tuple[np.ndarray, np.ndarray]:
    """(predictions, confidence) of a fitted classifier: the class of highest
    ``predict_proba`` and ``csf(probabilities)`` (the maximum probability by default)."""
    if not hasattr(estimator, "predict_proba") or not hasattr(estimator, "classes_"):
        raise TypeError(
            "estimator: expected a fitted classifier with predict_proba and classes_, got "
            f"{type(estimator).__name__}"
        )
    proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    y_pred = np.asarray(estimator.classes_)[np.argmax(proba, axis=1)]
    confidence = proba.max(axis=1) if csf is None else np.asarray(csf(proba), dtype=np.float64)
    return y_pred, confidence


_Display = TypeVar("_Display", bound="_CurveDisplay")


class _CurveDisplay:
    """One curve of the risk-coverage family: its construction from predictions or from a
    fitted classifier, and its plot. A subclass names its risk (``_ylabel``), its area
    (``_area_name``, ``_area_score``) and builds itself from a curve (:meth:`_from_curve`)."""

    _area_name = ""
    _ylabel = ""
    _area_score: Callable[..., float]

    def __init__(
        self,
        coverages: ArrayLike,
        risks: ArrayLike,
        thresholds: ArrayLike | None,
        area: float | None,
        name: str | None,
    ) -> None:
        self.coverages = np.asarray(coverages, dtype=np.float64)
        self._risks = np.asarray(risks, dtype=np.float64)
        if self.coverages.ndim != 1 or self._risks.shape != self.coverages.shape:
            raise ValueError(
                f"coverages and risks: expected 1-D arrays of one length, got shapes "
                f"{self.coverages.shape} and {self._risks.shape}"
            )
        self.thresholds = None if thresholds is None else np.asarray(thresholds)
        self.name = name
        self._area = area

    @classmethod
    def _from_curve(
        cls: type[_Display], curve: M.RiskCoverageCurve, area: float, name: str | None
    ) -> _Display:
        """The display of the points of ``curve`` with its area ``area``."""
        raise NotImplementedError

    @classmethod
    def from_predictions(
        cls: type[_Display],
        y_true: ArrayLike,
        y_pred: ArrayLike,
        confidence: ArrayLike,
        *,
        sample_weight: ArrayLike | None = None,
        name: str | None = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> _Display:
        """Plot the curve of predictions ``y_pred`` of labels ``y_true`` scored by
        ``confidence`` (higher = more confident); a failure is ``y_pred != y_true``."""
        residuals = _residuals(y_true, y_pred)
        curve = M.risk_coverage_curve(residuals, confidence, sample_weight=sample_weight)
        area = cls._area_score(residuals, confidence, sample_weight=sample_weight)
        return cls._from_curve(curve, area, name).plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls: type[_Display],
        estimator: Any,
        X: ArrayLike,
        y: ArrayLike,
        *,
        csf: Callable[[np.ndarray], ArrayLike] | None = None,
        sample_weight: ArrayLike | None = None,
        name: str | None = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> _Display:
        """Plot the curve of a fitted classifier with ``predict_proba`` on ``(X, y)``: the
        prediction is the class of highest probability, the confidence the maximum probability
        (softmax response) or ``csf(probabilities)``. ``name`` defaults to the estimator's
        class name."""
        y_pred, confidence = _estimator_outputs(estimator, X, csf)
        return cls.from_predictions(
            y,
            y_pred,
            confidence,
            sample_weight=sample_weight,
            name=type(estimator).__name__ if name is None else name,
            ax=ax,
            **kwargs,
        )

    def plot(self, ax: Any = None, *, name: str | None = None, **kwargs: Any) -> Any:
        """Draw the curve on ``ax`` (a new figure's axes by default); ``kwargs`` go to
        ``ax.plot`` (a ``label`` given there replaces the default "name (AREA = value)").
        Returns the display, with ``line_``, ``ax_`` and ``figure_`` set."""
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots()
        name = self.name if name is None else name
        parts = []
        if name is not None:
            parts.append(name)
        if self._area is not None:
            value = f"{self._area_name} = {self._area:.4f}"
            parts.append(f"({value})" if name is not None else value)
        line_kwargs = {"label": " ".join(parts)} if parts else {}
        line_kwargs.update(kwargs)
        (self.line_,) = ax.plot(self.coverages, self._risks, **line_kwargs)
        ax.set(xlabel="Coverage", ylabel=self._ylabel, xlim=(-0.01, 1.01))
        if "label" in line_kwargs:
            ax.legend(loc="upper left")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


class RiskCoverageDisplay(_CurveDisplay):
    """Risk-coverage curve: selective risk over coverage, one point per distinct confidence
    and the end point at coverage 0 (:func:`fdbench.metrics.risk_coverage_curve`).

    Attributes: ``coverages``, ``selective_risks``, ``thresholds``, ``aurc``, ``name``; after
    :meth:`plot` also ``line_``, ``ax_``, ``figure_``. Source: Geifman & El-Yaniv, NeurIPS 2017.
    """

    _area_name = "AURC"
    _ylabel = "Selective risk"
    _area_score = staticmethod(M.aurc)

    def __init__(
        self,
        *,
        coverages: ArrayLike,
        selective_risks: ArrayLike,
        thresholds: ArrayLike | None = None,
        aurc: float | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(coverages, selective_risks, thresholds, aurc, name)
        self.selective_risks = self._risks
        self.aurc = aurc

    @classmethod
    def _from_curve(
        cls, curve: M.RiskCoverageCurve, area: float, name: str | None
    ) -> RiskCoverageDisplay:
        return cls(
            coverages=curve.coverages,
            selective_risks=curve.selective_risks,
            thresholds=curve.thresholds,
            aurc=area,
            name=name,
        )


class GeneralizedRiskDisplay(_CurveDisplay):
    """Generalized risk-coverage curve: generalized risk (joint probability of failure and
    acceptance) over coverage, ending at (0, 0); its area is AUGRC
    (:func:`fdbench.metrics.risk_coverage_curve`, :func:`fdbench.metrics.augrc`).

    Attributes: ``coverages``, ``generalized_risks``, ``thresholds``, ``augrc``, ``name``;
    after :meth:`plot` also ``line_``, ``ax_``, ``figure_``. Source: Traub et al.,
    "Overcoming common flaws in the evaluation of selective classification systems",
    NeurIPS 2024.
    """

    _area_name = "AUGRC"
    _ylabel = "Generalized risk"
    _area_score = staticmethod(M.augrc)

    def __init__(
        self,
        *,
        coverages: ArrayLike,
        generalized_risks: ArrayLike,
        thresholds: ArrayLike | None = None,
        augrc: float | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(coverages, generalized_risks, thresholds, augrc, name)
        self.generalized_risks = self._risks
        self.augrc = augrc

    @classmethod
    def _from_curve(
        cls, curve: M.RiskCoverageCurve, area: float, name: str | None
    ) -> GeneralizedRiskDisplay:
        return cls(
            coverages=curve.coverages,
            generalized_risks=curve.generalized_risks,
            thresholds=curve.thresholds,
            augrc=area,
            name=name,
        )


def _proba_residuals_confidence(
    y_true: ArrayLike, y_proba: ArrayLike, labels: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray]:
    """Residuals and softmax-response confidence of class probabilities ``y_proba`` whose
    columns are ``labels`` (default: the sorted labels of ``y_true``, as
    ``sklearn.metrics.log_loss`` assumes); a 1-D ``y_proba`` is the probability of the second
    of two labels."""
    y_true = np.asarray(y_true)
    proba = np.asarray(y_proba, dtype=np.float64)
    classes = np.unique(y_true) if labels is None else np.asarray(labels)
    if proba.ndim == 1:
        proba = np.column_stack([1.0 - proba, proba])
    if proba.ndim != 2 or proba.shape[0] != y_true.shape[0] or proba.shape[1] != classes.size:
        raise ValueError(
            f"y_proba: expected shape ({y_true.shape[0]}, {classes.size}) (one column per "
            f"label {classes.tolist()}; pass labels= when y_true lacks a class), got "
            f"{proba.shape}"
        )
    y_pred = classes[np.argmax(proba, axis=1)]
    return _residuals(y_true, y_pred), proba.max(axis=1)


def aurc_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """AURC of the arg-max prediction of class probabilities scored by their maximum (softmax
    response), :func:`fdbench.metrics.aurc`. Columns of ``y_proba`` are ``labels`` (default:
    the sorted labels of ``y_true``); lower is better."""
    residuals, confidence = _proba_residuals_confidence(y_true, y_proba, labels)
    return M.aurc(residuals, confidence, sample_weight=sample_weight)


def augrc_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """AUGRC of the arg-max prediction of class probabilities scored by their maximum,
    :func:`fdbench.metrics.augrc` (inputs as :func:`aurc_score`); lower is better."""
    residuals, confidence = _proba_residuals_confidence(y_true, y_proba, labels)
    return M.augrc(residuals, confidence, sample_weight=sample_weight)


def make_aurc_scorer(**kwargs: Any) -> Any:
    """A scikit-learn scorer of :func:`aurc_score` on ``predict_proba``: ``make_scorer(
    aurc_score, greater_is_better=False, response_method="predict_proba", **kwargs)``, so
    ``GridSearchCV`` maximises -AURC (scikit-learn >= 1.4). ``kwargs`` (e.g. ``labels``) go to
    :func:`aurc_score`."""
    from sklearn.metrics import make_scorer

    return make_scorer(
        aurc_score, greater_is_better=False, response_method="predict_proba", **kwargs
    )


def make_augrc_scorer(**kwargs: Any) -> Any:
    """A scikit-learn scorer of :func:`augrc_score`, as :func:`make_aurc_scorer`."""
    from sklearn.metrics import make_scorer

    return make_scorer(
        augrc_score, greater_is_better=False, response_method="predict_proba", **kwargs
    )
