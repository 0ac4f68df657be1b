"""Calibration of confidences in [0, 1]: reliability bins, ECE and MCE."""

from __future__ import annotations

import bisect
import operator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._core import increments
from ._validation import check_inputs

__all__ = ["ReliabilityBins", "ece", "mce", "reliability_bins"]


@dataclass(frozen=True)
class ReliabilityBins:
    """Equal-width bins on [0, 1]: edges (M + 1), and per bin the total weight, the accuracy
    (1 - mean residual) and the mean confidence (NaN for empty bins)."""

    edges: np.ndarray
    weights: np.ndarray
    accuracy: np.ndarray
    confidence: np.ndarray


def _check_n_bins(n_bins: int) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)):
        raise TypeError(f"n_bins: expected a positive integer, got {type(n_bins).__name__}")
    if n_bins < 1:
        raise ValueError(f"n_bins: expected a positive integer, got {n_bins}")
    return int(n_bins)


def bin_indices(confidence: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin j (0-based) holds j/M < c <= (j+1)/M; c = 0 goes to the first bin.

    ceil(c M) - 1, corrected against the exact edges j/M where c M was rounded across an
    integer (cheaper than a binary search per sample).
    """
    edges = np.arange(n_bins + 1) / n_bins
    idx = np.ceil(confidence * n_bins).astype(np.intp)
    idx -= 1
    np.clip(idx, 0, n_bins - 1, out=idx)
    idx[(confidence <= edges[idx]) & (idx > 0)] -= 1
    idx[confidence > edges[idx + 1]] += 1
    return idx


def bin_sums(
    residuals: np.ndarray, confidence: np.ndarray, weights: np.ndarray | None, n_bins: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin total weight, weighted number of successes and weighted sum of confidence."""
    idx = bin_indices(confidence, n_bins)
    count = np.bincount(idx, weights=weights, minlength=n_bins)
    fail = np.bincount(
        idx, weights=residuals if weights is None else residuals * weights, minlength=n_bins
    )
    conf = np.bincount(
        idx, weights=confidence if weights is None else confidence * weights, minlength=n_bins
    )
    return count, count - fail, conf


def bin_sums_sorted(
    thresholds: np.ndarray, W: np.ndarray, L: np.ndarray, n_bins: int, *, unit: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`bin_sums` from a ranking: the distinct confidences in descending order and the
    cumulative weight ``W`` and loss ``L`` at the end of each tie group.

    Bin j collects the groups whose confidence lies in (j/M, (j+1)/M] (bin 0 also 0): a binary
    search per edge, sums of the cumulative arrays per bin, one pass over the groups for the
    confidence. ``unit``: every group is one sample of weight 1 (no ties, no weights).
    """
    edges = (np.arange(n_bins + 1) / n_bins).tolist()
    above = [bisect.bisect_left(thresholds, -e, key=operator.neg) for e in edges[1:-1]]
    bounds = np.array([thresholds.size, *above, 0])
    w_at = np.concatenate([[0.0], W])[bounds]
    l_at = np.concatenate([[0.0], L])[bounds]
    count = w_at[:-1] - w_at[1:]
    fail = l_at[:-1] - l_at[1:]
    weighted = thresholds if unit else increments(W[None, :])[0] * thresholds
    conf = np.zeros(n_bins)
    filled = np.flatnonzero(bounds[:-1] > bounds[1:])
    starts = bounds[1:][filled]
    conf[filled] = np.add.reduceat(weighted, starts[::-1])[::-1]
    return count, count - fail, conf


def ece_mce_from_sums(
    count: np.ndarray, correct: np.ndarray, conf: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """ECE and MCE from per-bin sums (last axis = bins)."""
    gap = np.abs(correct - conf)
    ece_value = gap.sum(axis=-1) / count.sum(axis=-1)
    per_bin = np.where(count > 0, gap / np.where(count > 0, count, 1.0), -np.inf)
    return ece_value, per_bin.max(axis=-1)


def _prepare(residuals, confidence, sample_weight, n_bins):
    m = _check_n_bins(n_bins)
    r, c, w, _ = check_inputs(residuals, confidence, sample_weight, binary=True)
    if c.min() < 0 or c.max() > 1:
        raise ValueError(
            "confidence: expected values in [0, 1] for calibration metrics, got range "
            f"[{c.min():g}, {c.max():g}] (Platt-scale other confidence scores first)"
        )
    return bin_sums(r, c, w, m)


def reliability_bins(
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    n_bins: int = 15,
    sample_weight: ArrayLike | None = None,
) -> ReliabilityBins:
    """Reliability diagram data: M equal-width bins (j-1)/M < c <= j/M, first bin closed at 0."""
    count, correct, conf = _prepare(residuals, confidence, sample_weight, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ReliabilityBins(
            edges=np.arange(len(count) + 1) / len(count),
            weights=count,
            accuracy=np.where(count > 0, correct / count, np.nan),
            confidence=np.where(count > 0, conf / count, np.nan),
        )


def ece(
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    n_bins: int = 15,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Expected calibration error with M equal-width bins on [0, 1].

    ECE = sum_j |B_j| / N |acc(B_j) - conf(B_j)| with bins (j-1)/M < c <= j/M (first bin closed
    at 0), acc = 1 - mean residual. Requires 0/1 residuals and confidences in [0, 1].
    Source: Naeini, Cooper & Hauskrecht, AAAI 2015; Guo et al., ICML 2017.
    """
    count, correct, conf = _prepare(residuals, confidence, sample_weight, n_bins)
    return float(ece_mce_from_sums(count, correct, conf)[0])


def mce(
    residuals: ArrayLike,
    confidence: ArrayLike,
    *,
    n_bins: int = 15,
    sample_weight: ArrayLike | None = None,
) -> float:
    """Maximum calibration error: max_j |acc(B_j) - conf(B_j)| over non-empty bins (bins as
    in :func:`ece`). Source: Naeini, Cooper & Hauskrecht, AAAI 2015.
    """
    count, correct, conf = _prepare(residuals, confidence, sample_weight, n_bins)
    return float(ece_mce_from_sums(count, correct, conf)[1])
