"""Split-conformal prediction sets (LAC/THR, APS, RAPS) with their coverage and size.

Beside abstention (accept or reject one prediction), a classifier's probabilities can give a
set of labels that holds the true one with probability >= 1 − α: calibrate a score on a
calibration split, take its conformal quantile, and keep every label whose score is within it
(Angelopoulos & Bates, "A Gentle Introduction to Conformal Prediction", 2021, Section 1).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_real_array, check_labels

__all__ = [
    "CONFORMAL_METHODS",
    "conformal_quantile",
    "conformal_scores",
    "conformal_sets",
    "mean_set_size",
    "per_class_coverage",
    "set_coverage",
]

#: The score functions :func:`conformal_scores` computes.
CONFORMAL_METHODS = ("lac", "aps", "raps")


def _check_probs(probs: ArrayLike, name: str = "probs") -> np.ndarray:
    p = as_real_array(probs, name)
    if p.ndim != 2 or p.shape[0] == 0 or p.shape[1] < 2:
        raise ValueError(f"{name}: expected an (n, K) array with n >= 1, K >= 2; got {p.shape}")
    if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        raise ValueError(f"{name}: expected probabilities in [0, 1]")
    return p


def _check_alpha(alpha: float) -> float:
    a = float(alpha)
    if not 0 < a < 1:
        raise ValueError(f"alpha: expected a value in (0, 1), got {alpha!r}")
    return a


def conformal_quantile(scores: ArrayLike, alpha: float) -> float:
    """q̂ = the ⌈(n + 1)(1 − α)⌉-th smallest of the n calibration scores (``inf`` when that
    exceeds n): then P(score of a new exchangeable sample <= q̂) >= 1 − α (Gentle
    Introduction, Section 1, eq. (1); Vovk et al. 2005)."""
    s = np.sort(as_real_array(scores, "scores").ravel())
    if s.size == 0:
        raise ValueError("scores: expected at least one calibration score")
    a = _check_alpha(alpha)
    k = math.ceil((s.size + 1) * (1 - a))
    return float(s[k - 1]) if k <= s.size else np.inf


def _sorted_parts(p: np.ndarray, lam: float, k_reg: int):
    """Descending order of each row, cumulative sorted mass, and the RAPS penalty per rank."""
    order = np.argsort(-p, axis=1, kind="stable")
    sorted_p = np.take_along_axis(p, order, axis=1)
    ranks = np.arange(1, p.shape[1] + 1)
    penalty = lam * np.maximum(ranks - k_reg, 0)
    return order, sorted_p, np.cumsum(sorted_p, axis=1) + penalty, penalty


def _all_scores(
    p: np.ndarray, method: str, lam: float, k_reg: int, u: np.ndarray | None
) -> np.ndarray:
    """Score of every label of every sample, (n, K)."""
    if method == "lac":
        return 1.0 - p
    if method == "aps":
        lam, k_reg = 0.0, 0
    order, sorted_p, cum, penalty = _sorted_parts(p, lam, k_reg)
    if u is not None:
        cum = cum - u[:, None] * (sorted_p + np.diff(penalty, prepend=0.0))
    scores = np.empty_like(cum)
    np.put_along_axis(scores, order, cum, axis=1)
    return scores


def _check_method(method: str, lam: float, k_reg: int) -> None:
    if method not in CONFORMAL_METHODS:
        raise ValueError(f"method: expected one of {CONFORMAL_METHODS}, got {method!r}")
    if method == "raps":
        if not (np.isfinite(lam) and lam >= 0):
            raise ValueError(f"lam: expected a non-negative number, got {lam!r}")
        if isinstance(k_reg, bool) or not isinstance(k_reg, (int, np.integer)) or k_reg < 0:
            raise ValueError(f"k_reg: expected a non-negative integer, got {k_reg!r}")


def _uniforms(n: int, randomized: bool, seed: int | None) -> np.ndarray | None:
    return np.random.default_rng(seed).uniform(size=n) if randomized else None


def conformal_scores(
    probs: ArrayLike,
    labels: ArrayLike,
    *,
    method: str = "lac",
    lam: float = 0.01,
    k_reg: int = 5,
    randomized: bool = False,
    seed: int | None = 0,
) -> np.ndarray:
    """Conformity score of each sample's true label (lower = conforms better).

    - ``"lac"`` (LAC / THR, Sadinle, Lei & Wasserman 2019): s = 1 − p̂_y.
    - ``"aps"`` (Romano, Sesia & Candès 2020, as in the Gentle Introduction, Section 2.1):
      s = Σ of p̂_j over the labels ranked at or above y (descending probability, ties by
      index).
    - ``"raps"`` (Angelopoulos, Bates, Malik & Jordan, ICLR 2021, eq. (3)): the APS score plus
      λ·(o(y) − k_reg)^+, o(y) the 1-based rank of y.

    ``randomized`` subtracts U·(p̂_y + its rank's penalty increment), U ~ U(0, 1) per sample
    (seeded), for exact rather than conservative coverage (APS and RAPS only).
    """
    p = _check_probs(probs)
    y = check_labels(labels, p.shape[0])
    if (y < 0).any() or (y >= p.shape[1]).any():
        raise ValueError(f"labels: expected class indices in [0, {p.shape[1]})")
    _check_method(method, lam, k_reg)
    u = _uniforms(p.shape[0], randomized and method != "lac", seed)
    return _all_scores(p, method, lam, k_reg, u)[np.arange(p.shape[0]), y]


def conformal_sets(
    cal_probs: ArrayLike,
    cal_labels: ArrayLike,
    test_probs: ArrayLike,
    alpha: float,
    *,
    method: str = "lac",
    lam: float = 0.01,
    k_reg: int = 5,
    randomized: bool = False,
    seed: int | None = 0,
) -> np.ndarray:
    """Split-conformal prediction sets, a boolean (n_test, K) array: label k is in the set of
    sample i when its score (:func:`conformal_scores`, computed for every label) is <= the
    :func:`conformal_quantile` of the calibration scores at α. Marginally, P(y ∈ set) >= 1 − α
    for exchangeable calibration and test samples."""
    scores = conformal_scores(
        cal_probs, cal_labels, method=method, lam=lam, k_reg=k_reg, randomized=randomized, seed=seed
    )
    q = conformal_quantile(scores, alpha)
    p = _check_probs(test_probs, "test_probs")
    if p.shape[1] != np.shape(cal_probs)[1]:
        raise ValueError(
            f"test_probs: expected {np.shape(cal_probs)[1]} classes as cal_probs, got {p.shape[1]}"
        )
    test_seed = None if seed is None else seed + 1
    u = _uniforms(p.shape[0], randomized and method != "lac", test_seed)
    return _all_scores(p, method, lam, k_reg, u) <= q


def _check_sets(sets: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(sets)
    if s.dtype != bool or s.ndim != 2:
        raise ValueError(f"sets: expected a boolean (n, K) array, got {s.dtype} {s.shape}")
    y = check_labels(labels, s.shape[0])
    if (y < 0).any() or (y >= s.shape[1]).any():
        raise ValueError(f"labels: expected class indices in [0, {s.shape[1]})")
    return s, y


def set_coverage(sets: ArrayLike, labels: ArrayLike) -> float:
    """Marginal coverage: the fraction of samples whose set holds their true label."""
    s, y = _check_sets(sets, labels)
    return float(s[np.arange(y.size), y].mean())


def per_class_coverage(sets: ArrayLike, labels: ArrayLike) -> dict[int, float]:
    """Coverage among the samples of each true class present in ``labels``."""
    s, y = _check_sets(sets, labels)
    hit = s[np.arange(y.size), y]
    return {int(k): float(hit[y == k].mean()) for k in np.unique(y)}


def mean_set_size(sets: ArrayLike) -> float:
    """Mean number of labels per set."""
    s = np.asarray(sets)
    if s.dtype != bool or s.ndim != 2 or s.shape[0] == 0:
        raise ValueError(
            f"sets: expected a non-empty boolean (n, K) array, got {s.dtype} {s.shape}"
        )
    return float(s.sum(axis=1).mean())
