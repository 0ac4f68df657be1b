"""Proper scoring rules and accuracies computed from labels and logits (float64 log-softmax)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array, rescale_weights

__all__ = [
    "accuracy",
    "balanced_accuracy",
    "balanced_accuracy_of_predictions",
    "brier",
    "log_softmax",
    "nll",
    "per_sample_scores",
]


def _check(labels: ArrayLike, logits: ArrayLike, sample_weight: ArrayLike | None):
    z = as_real_array(logits, "logits")
    if z.ndim != 2 or z.shape[1] < 1 or z.shape[0] < 1:
        raise ValueError(f"logits: expected a non-empty N x K array, got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError(
            f"logits: expected finite values, got {int(np.sum(~np.isfinite(z)))} NaN/inf"
        )
    y = np.asarray(labels)
    if y.ndim != 1 or y.size != z.shape[0]:
        raise ValueError(
            f"labels: expected {z.shape[0]} labels (one per row of logits), got shape {y.shape}"
        )
    if y.dtype.kind not in "iu":
        raise TypeError(f"labels: expected integer class indices, got dtype {y.dtype}")
    if y.min() < 0 or y.max() >= z.shape[1]:
        raise ValueError(
            f"labels: expected class indices in [0, {z.shape[1]}), got range [{y.min()}, {y.max()}]"
        )
    if sample_weight is None:
        return y.astype(np.int64), z, None
    w = as_real_array(sample_weight, "sample_weight")
    if w.shape != y.shape:
        raise ValueError(f"sample_weight: expected {y.size} values, got shape {w.shape}")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0) and w.max() > 0):
        raise ValueError("sample_weight: expected finite non-negative values with a positive sum")
    return y.astype(np.int64), z, rescale_weights(w)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float64: z - max(z) - log(sum(exp(z - max(z))))."""
    z = as_real_array(logits, "logits")
    shifted = z - z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def nll(labels: ArrayLike, logits: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Negative log-likelihood -mean_i log p_i(y_i), averaged over samples (not samples x
    classes). Source: Gneiting & Raftery, JASA 2007 (logarithmic score); Jaeger et al., ICLR 2023.
    """
    y, z, w = _check(labels, logits, sample_weight)
    return float(np.average(_nll_terms(y, log_softmax(z)), weights=w))


def per_sample_scores(labels: ArrayLike, logits: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's terms of :func:`nll` and :func:`brier` (whose values are their means):
    ``-log p_i(y_i)`` and ``Σ_c (p_ic - [y_i = c])²``, from one log-softmax. Row-wise
    quantities, so they may be computed on blocks of rows of the logits."""
    y, z, _ = _check(labels, logits, None)
    log_probs = log_softmax(z)
    return _nll_terms(y, log_probs), _brier_terms(y, log_probs)


def _nll_terms(y: np.ndarray, log_probs: np.ndarray) -> np.ndarray:
    return -log_probs[np.arange(y.size), y]


def brier(labels: ArrayLike, logits: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Brier score mean_i sum_c (p_ic - [y_i = c])^2 from softmax probabilities.
    Source: Brier, Monthly Weather Review 1950.
    """
    y, z, w = _check(labels, logits, sample_weight)
    return float(np.average(_brier_terms(y, log_softmax(z)), weights=w))


def _brier_terms(y: np.ndarray, log_probs: np.ndarray) -> np.ndarray:
    p = np.exp(log_probs)
    return np.einsum("ij,ij->i", p, p) - 2.0 * p[np.arange(y.size), y] + 1.0


def accuracy(
    labels: ArrayLike, logits: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Fraction of samples whose arg-max logit is the label."""
    y, z, w = _check(labels, logits, sample_weight)
    return float(np.average(z.argmax(axis=1) == y, weights=w))


def balanced_accuracy(
    labels: ArrayLike, logits: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Mean over the classes present in ``labels`` of the per-class recall of the arg-max
    prediction (scikit-learn's ``balanced_accuracy_score``). Source: Brodersen et al., ICPR 2010.
    """
    y, z, w = _check(labels, logits, sample_weight)
    return _balanced_accuracy(y, z.argmax(axis=1), w)


def balanced_accuracy_of_predictions(labels: ArrayLike, predictions: ArrayLike) -> float:
    """:func:`balanced_accuracy` of given class ``predictions`` (e.g. the arg-max of the logits
    computed beforehand), unweighted: the mean over the classes present in ``labels`` of the
    fraction of their samples predicted as their class."""
    y = np.asarray(labels)
    pred = np.asarray(predictions)
    if y.ndim != 1 or y.size == 0 or y.dtype.kind not in "iu" or y.min() < 0:
        raise ValueError("labels: expected a non-empty vector of class indices >= 0")
    if pred.shape != y.shape or pred.dtype.kind not in "iu":
        raise ValueError(f"predictions: expected {y.size} class indices, got {pred.shape}")
    return _balanced_accuracy(y.astype(np.int64, copy=False), pred, None)


def _balanced_accuracy(y: np.ndarray, predicted: np.ndarray, w: np.ndarray | None) -> float:
    per_class: np.ndarray
    hit: np.ndarray
    if w is None:  # counts: the sums of unit weights, exact as integers
        per_class = np.bincount(y).astype(np.float64)
        hit = np.bincount(y[predicted == y], minlength=per_class.size).astype(np.float64)
    else:
        per_class = np.bincount(y, weights=w)
        hit = np.bincount(y, weights=w * (predicted == y))
    present = per_class > 0
    return float(np.mean(hit[present] / per_class[present]))
