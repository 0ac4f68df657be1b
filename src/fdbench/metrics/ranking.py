"""Failure detection as binary classification: AUROC_f, AP_f, FPR@TPR and their OOD counterparts."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

from ._core import (
    ap_error_from_cum,
    ap_success_from_cum,
    auroc_from_cum,
    fpr_at_tpr_from_cum,
    success_cumulative,
)
from ._validation import UndefinedMetricWarning, check_unit_interval
from .curves import prepare

__all__ = ["ap_f_error", "ap_f_success", "auroc_f", "auroc_out", "fpr_at_tpr", "fpr_at_tpr_out"]


def _warn_if_nan(value: float, name: str) -> float:
    if np.isnan(value):
        warnings.warn(
            f"{name}: undefined because only one class (all successes or all failures) is "
            "present; returning NaN",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    return value


def auroc_f(
    residuals: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Failure AUROC: area under the ROC curve of ``confidence`` separating successes (r = 0,
    positive) from failures (r = 1); tied confidences count 1/2 (trapezoids).

    Requires 0/1 residuals. NaN with an ``UndefinedMetricWarning`` when only one class is
    present. Equals scikit-learn's ``roc_auc_score(1 - residuals, confidence)``.
    Source: Jaeger et al., ICLR 2023 (failure detection AUROC).
    """
    p = prepare(residuals, confidence, sample_weight, binary=True)
    return _warn_if_nan(float(auroc_from_cum(p.W, p.L)[0]), "auroc_f")


def ap_f_success(
    residuals: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Average precision with successes positive and ``confidence`` as score.

    Step-wise AP = sum_t (R_t - R_{t-1}) P_t over descending thresholds, as scikit-learn's
    ``average_precision_score(1 - residuals, confidence)``. Requires 0/1 residuals; NaN with an
    ``UndefinedMetricWarning`` when there is no success.
    Source: Hendrycks & Gimpel, ICLR 2017 (AUPR-In); Jaeger et al., ICLR 2023.
    """
    p = prepare(residuals, confidence, sample_weight, binary=True)
    return _warn_if_nan(float(ap_success_from_cum(p.W, p.L)[0]), "ap_f_success")


def ap_f_error(
    residuals: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Average precision with failures positive and ``-confidence`` as score.

    As scikit-learn's ``average_precision_score(residuals, -confidence)``. Requires 0/1
    residuals; NaN with an ``UndefinedMetricWarning`` when there is no failure.
    Source: Hendrycks & Gimpel, ICLR 2017 (AUPR-Out); Jaeger et al., ICLR 2023.
    """
    p = prepare(residuals, confidence, sample_weight, binary=True)
    return _warn_if_nan(float(ap_error_from_cum(p.W, p.L)[0]), "ap_f_error")


def fpr_at_tpr(
    residuals: ArrayLike,
    confidence: ArrayLike,
    tpr: float = 0.95,
    *,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Smallest false-positive rate among thresholds whose true-positive rate is >= ``tpr``.

    Successes are positive: FPR is the fraction of failures accepted. Same points as
    scikit-learn's ``roc_curve(1 - residuals, confidence)``. Requires 0/1 residuals; NaN with an
    ``UndefinedMetricWarning`` when only one class is present.
    Source: Hendrycks & Gimpel, ICLR 2017; FPR@80TPR as in Bernhardt et al., TMLR 2022,
    Section 4 (successes positive).
    """
    x = check_unit_interval(tpr, "tpr")
    p = prepare(residuals, confidence, sample_weight, binary=True)
    tp = success_cumulative(p.ranking, p.residuals, p.weights)
    return _warn_if_nan(float(fpr_at_tpr_from_cum(p.W, p.L, x, TP=tp)[0]), "fpr_at_tpr")


def auroc_out(
    is_ood: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """OOD-detection AUROC: in-distribution (``is_ood`` = 0) positive, scored by ``confidence``.

    The classic OOD protocol, for comparison with failure detection (Hendrycks & Gimpel,
    ICLR 2017). NaN with an ``UndefinedMetricWarning`` when only one group is present.
    """
    p = prepare(is_ood, confidence, sample_weight, binary=True, residuals_name="is_ood")
    return _warn_if_nan(float(auroc_from_cum(p.W, p.L)[0]), "auroc_out")


def fpr_at_tpr_out(
    is_ood: ArrayLike,
    confidence: ArrayLike,
    tpr: float = 0.95,
    *,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Fraction of OOD samples accepted at the first threshold keeping >= ``tpr`` of the
    in-distribution samples (classic FPR@95TPR of OOD detection, Hendrycks & Gimpel, ICLR 2017).

    In-distribution samples (``is_ood`` = 0) are the positives, as in OpenOOD's unused
    ``fpr_recall``. OpenOOD's reported FPR@95 takes the OOD samples as positives: that is
    :func:`fdbench.metrics.fpr_at_tpr_ood_positive`, another number on the same scores.
    """
    x = check_unit_interval(tpr, "tpr")
    p = prepare(is_ood, confidence, sample_weight, binary=True, residuals_name="is_ood")
    tp = success_cumulative(p.ranking, p.residuals, p.weights)
    return _warn_if_nan(float(fpr_at_tpr_from_cum(p.W, p.L, x, TP=tp)[0]), "fpr_at_tpr_out")
