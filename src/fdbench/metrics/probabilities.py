"""Class probabilities as input: validation, and the scoring rules of probabilities as given.

A user who has only probabilities (N × K, e.g. a float32 softmax saved by another tool) passes
them as they are: nothing is re-normalised (no ``log`` and softmax round trip, which moves
float32 values by up to ~3e-7 and splits ties at 1.0), so every quantity is computed from the
given values, converted exactly to float64.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array

__all__ = ["brier_from_probs", "check_probs", "nll_from_probs", "row_sum_tolerance"]


def row_sum_tolerance(n_classes: int) -> float:
    """How far a row of ``n_classes`` probabilities may sum from 1: ``max(1e-5, 4·K·ε32)``,
    ε32 = 2⁻²³ (a float32 softmax rounds each of its K terms and their sum)."""
    return max(1e-5, 4 * n_classes * float(np.finfo(np.float32).eps))


def check_probs(probs: ArrayLike, name: str = "probs") -> np.ndarray:
    """``probs`` as a float64 (N, K) array of the given values, validated.

    Raises ``ValueError`` naming ``name`` unless it is a non-empty N × K array (K >= 2) of
    finite values in [0, 1] whose rows sum to 1 within :func:`row_sum_tolerance`; ``TypeError``
    for values that are not real numbers.
    """
    p = as_real_array(probs, name)
    if p.ndim != 2 or p.shape[0] < 1 or p.shape[1] < 2:
        raise ValueError(f"{name}: expected a non-empty N x K array with K >= 2, got {p.shape}")
    bad = ~np.isfinite(p)
    if bad.any():
        raise ValueError(f"{name}: expected finite values, got {int(bad.sum())} NaN/inf")
    outside = (p < 0) | (p > 1)
    if outside.any():
        row = int(np.flatnonzero(outside.any(axis=1))[0])
        raise ValueError(
            f"{name}: expected probabilities in [0, 1], got {int(outside.sum())} value(s) "
            f"outside, first in row {row} (logits? pass them as logits)"
        )
    tolerance = row_sum_tolerance(p.shape[1])
    gap = np.abs(p.sum(axis=1) - 1.0)
    if (gap > tolerance).any():
        row = int(np.argmax(gap))
        raise ValueError(
            f"{name}: expected rows summing to 1 (within {tolerance:.1e}), got "
            f"{int((gap > tolerance).sum())} row(s) off, row {row} sums to {p[row].sum():.8g}"
        )
    return p


def _labels(labels: ArrayLike, p: np.ndarray) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1 or y.size != p.shape[0]:
        raise ValueError(
            f"labels: expected {p.shape[0]} labels (one per row of probs), got shape {y.shape}"
        )
    if y.dtype.kind not in "iu":
        raise TypeError(f"labels: expected integer class indices, got dtype {y.dtype}")
    if y.min() < 0 or y.max() >= p.shape[1]:
        raise ValueError(
            f"labels: expected class indices in [0, {p.shape[1]}), got range [{y.min()}, {y.max()}]"
        )
    return y.astype(np.int64)


def nll_from_probs(
    labels: ArrayLike, probs: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Negative log-likelihood ``-mean_i log p_i(y_i)`` of the probabilities as given (inf when
    a true class has probability 0), weighted by ``sample_weight``.
    Source: Gneiting & Raftery, JASA 2007."""
    p = check_probs(probs)
    y = _labels(labels, p)
    with np.errstate(divide="ignore"):
        return float(
            -np.average(
                np.log(p[np.arange(y.size), y]), weights=cast("np.ndarray | None", sample_weight)
            )
        )


def brier_from_probs(
    labels: ArrayLike, probs: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> float:
    """Brier score ``mean_i Σ_c (p_ic - [y_i = c])²`` of the probabilities as given, weighted
    by ``sample_weight``. Source: Brier, Monthly Weather Review 1950."""
    p = check_probs(probs)
    y = _labels(labels, p)
    onehot = np.zeros_like(p)
    onehot[np.arange(y.size), y] = 1.0
    return float(
        np.average(
            np.sum((p - onehot) ** 2, axis=1), weights=cast("np.ndarray | None", sample_weight)
        )
    )
