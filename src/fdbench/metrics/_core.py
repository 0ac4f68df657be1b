"""One sort, tie groups and cumulative sums: the engine shared by every ranking-based metric.

All formulas take cumulative weights ``W`` and cumulative losses ``L`` at the ends of the tie
groups, in order of descending confidence, as ``(B, T)`` arrays (one row per weighting, e.g. one
per bootstrap resample) and return one value per row. Groups of weight zero are allowed (they
occur in bootstrap resamples) and contribute nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import digamma

_TINY = np.finfo(np.float64).tiny


@dataclass(frozen=True)
class Ranking:
    """The descending order of a confidence array and its tie groups."""

    order: np.ndarray
    """Permutation sorting the confidence in descending order."""
    ends: np.ndarray | None
    """Position (in sorted order) of the last sample of each tie group; ``None`` without ties."""
    thresholds: np.ndarray
    """The distinct confidence values, descending (one per tie group)."""

    @property
    def n_groups(self) -> int:
        return self.thresholds.size

    def at_ends(self, cumulative: np.ndarray) -> np.ndarray:
        """Select the tie-group ends of a cumulative array (last axis in sorted order)."""
        return cumulative if self.ends is None else cumulative[..., self.ends]

    def cumulative(self, values: np.ndarray | None) -> np.ndarray:
        """Cumulative sum of per-sample ``values`` (ones when ``None``) at the tie-group ends."""
        if values is None:
            if self.ends is None:
                return np.arange(1, self.order.size + 1, dtype=np.float64)
            return (self.ends + 1).astype(np.float64)
        return self.at_ends(np.cumsum(values[self.order]))


def rank(confidence: np.ndarray) -> Ranking:
    """Sort ``confidence`` once (descending) and find its tie groups."""
    order = np.argsort(confidence)[::-1]
    c_sorted = confidence[order]
    change = c_sorted[1:] != c_sorted[:-1]
    if change.all():
        return Ranking(order=order, ends=None, thresholds=c_sorted)
    ends = np.append(np.flatnonzero(change), order.size - 1)
    return Ranking(order=order, ends=ends, thresholds=c_sorted[ends])


def _rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b)


def _shift_sum(x: np.ndarray) -> np.ndarray:
    """x_g + x_{g-1} along axis 1 with x_0 = 0."""
    s = x.copy()
    s[:, 1:] += x[:, :-1]
    return s


def aurc_from_cum(W: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Trapezoidal area under selective risk over coverage, end point at coverage 0 included.

    With n_g the weight of group g and s_g = L_g / W_g, the area times the total weight is
    sum_g n_g (s_g + s_{g-1}) / 2 where the first group of positive weight pairs with itself
    (the end point repeats its risk down to coverage 0). Rearranged:
    1/2 sum_g (W_{g+1} - W_{g-1}) s_g + 1/2 L_first, with W_0 = 0 and W_{T+1} = W_T.
    """
    sr = L / np.maximum(W, _TINY)
    coef = np.empty_like(W)
    if W.shape[1] == 1:
        coef[:, 0] = W[:, 0]
    else:
        coef[:, 0] = W[:, 1]
        np.subtract(W[:, 2:], W[:, :-2], out=coef[:, 1:-1])
        coef[:, -1] = W[:, -1] - W[:, -2]
    first = np.argmax(W > 0, axis=1)
    l_first = L[np.arange(W.shape[0]), first]
    return 0.5 * (_rowdot(coef, sr) + l_first) / W[:, -1]


def augrc_from_cum(W: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Trapezoidal area under generalized risk L/W_tot over coverage (end point at 0 is 0)."""
    n = np.diff(W, axis=1, prepend=0.0)
    return 0.5 * _rowdot(n, _shift_sum(L)) / W[:, -1] ** 2


def _safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def auroc_from_cum(W: np.ndarray, L: np.ndarray) -> np.ndarray:
    """ROC area, successes positive (0/1 losses), trapezoids so that ties count 1/2; NaN if one class."""
    F = L[:, -1]
    P = W[:, -1] - F
    l = np.diff(L, axis=1, prepend=0.0)
    area = 0.5 * _rowdot(l, _shift_sum(W - L))
    return _safe_ratio(area, P * F)


def ap_success_from_cum(W: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Step-wise average precision with successes positive, ranked by descending confidence."""
    TP = W - L
    P = TP[:, -1]
    d_tp = np.diff(TP, axis=1, prepend=0.0)
    precision = TP / np.maximum(W, _TINY)
    return _safe_ratio(_rowdot(d_tp, precision), P)


def ap_error_from_cum(W: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Step-wise average precision with failures positive, ranked by ascending confidence."""
    W_tot = W[:, -1:]
    F = L[:, -1:]
    below = W_tot - np.concatenate([np.zeros_like(W_tot), W[:, :-1]], axis=1)
    fail_below = F - np.concatenate([np.zeros_like(F), L[:, :-1]], axis=1)
    l = np.diff(L, axis=1, prepend=0.0)
    precision = fail_below / np.maximum(below, _TINY)
    return _safe_ratio(_rowdot(l, precision), F[:, 0])


def fpr_at_tpr_from_cum(W: np.ndarray, L: np.ndarray, tpr: float) -> np.ndarray:
    """Smallest false-positive rate among thresholds with true-positive rate >= tpr."""
    F = L[:, -1]
    TP = W - L
    P = TP[:, -1]
    rows = np.arange(W.shape[0])
    reached = TP / np.maximum(P, _TINY)[:, None] >= tpr
    idx = np.argmax(reached, axis=1)
    fpr = _safe_ratio(L[rows, idx], F)
    fpr[P <= 0] = np.nan
    return fpr


def risk_at_coverage_from_cum(W: np.ndarray, L: np.ndarray, coverage: float) -> np.ndarray:
    """Selective risk of the largest threshold whose coverage is >= ``coverage`` (in (0, 1])."""
    rows = np.arange(W.shape[0])
    idx = np.argmax(W >= coverage * W[:, -1:], axis=1)
    return L[rows, idx] / W[rows, idx]


def coverage_at_risk_from_cum(W: np.ndarray, L: np.ndarray, risk: float) -> np.ndarray:
    """Largest coverage whose selective risk is <= ``risk`` (0 when there is none)."""
    ok = (L / np.maximum(W, _TINY) <= risk) & (W > 0)
    return np.where(ok, W, 0.0).max(axis=1) / W[:, -1]


def aurc_range_from_curve(
    coverage: np.ndarray, selective_risk: np.ndarray, low: float, high: float
) -> float:
    """Mean selective risk of the piecewise-linear curve over coverages [low, high].

    ``coverage`` is increasing and starts with the end point at 0.
    """
    inner = (coverage > low) & (coverage < high)
    xs = np.concatenate([[low], coverage[inner], [high]])
    ys = np.interp(xs, coverage, selective_risk)
    return float(np.sum(np.diff(xs) * (ys[1:] + ys[:-1])) / 2 / (high - low))


def optimal_from_sorted_unit(losses_sorted: np.ndarray) -> tuple[float, float]:
    """AURC and AUGRC of the optimal CSF for unit weights: residuals ascending, one step each."""
    L = np.cumsum(losses_sorted)[None, :]
    W = np.arange(1, L.shape[1] + 1, dtype=np.float64)[None, :]
    return float(aurc_from_cum(W, L)[0]), float(augrc_from_cum(W, L)[0])


def optimal_from_counts(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AURC and AUGRC of the optimal CSF with frequency weights, one row per weighting.

    ``values`` are the distinct residuals in ascending order (K,), ``weights`` their total weight
    per row (B, K). Weight w is read as w copies of the sample, each its own step; the sum of
    the selective risks (L0 + j r)/(W0 + j), j = 1..w, of a run of w copies appended after
    cumulative weight W0 and loss L0 is r w + (L0 - r W0)(psi(W0 + w + 1) - psi(W0 + 1)).
    With unit steps, AURC = (sum_j s_j + s_1/2 - s_M/2) / M and
    AUGRC = (sum_j L_j - L_M/2) / M^2 over the M expanded samples.
    """
    wr = weights * values
    M = weights.sum(axis=1)
    L_tot = wr.sum(axis=1)
    W0 = np.cumsum(weights, axis=1) - weights
    L0 = np.cumsum(wr, axis=1) - wr
    harmonic = digamma(W0 + weights + 1.0) - digamma(W0 + 1.0)
    risk_sum = (wr + (L0 - values * W0) * harmonic).sum(axis=1)
    first = values[np.argmax(weights > 0, axis=1)]
    aurc_opt = (risk_sum + 0.5 * first - 0.5 * L_tot / M) / M
    loss_sum = (weights * L0 + 0.5 * wr * (weights + 1.0)).sum(axis=1)
    augrc_opt = (loss_sum - 0.5 * L_tot) / M**2
    return aurc_opt, augrc_opt
