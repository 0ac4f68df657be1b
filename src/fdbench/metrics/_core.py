"""One sort, tie groups and cumulative sums: the engine shared by every ranking-based metric.

All formulas take cumulative weights ``W`` and cumulative losses ``L`` at the ends of the tie
groups, in order of descending confidence, as ``(B, T)`` arrays (one row per weighting, e.g. one
per bootstrap resample) and return one value per row. Groups of weight zero are allowed (they
occur in bootstrap resamples) and contribute nothing.
"""

from __future__ import annotations

import math
import struct
import threading
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from ._ordered_sums import pairwise

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

    def cumulative(self, values: np.ndarray | None, out: np.ndarray | None = None) -> np.ndarray:
        """Cumulative sum of per-sample ``values`` (ones when ``None``) at the tie-group ends.

        ``out`` (N,) optionally receives the per-sample cumulative sum."""
        if values is None:
            if self.ends is None:
                return np.arange(1, self.order.size + 1, dtype=np.float64)
            return (self.ends + 1).astype(np.float64)
        if out is None:
            out = values[self.order]
        else:
            np.take(values, self.order, out=out)
        return self.at_ends(np.cumsum(out, out=out))


class ScratchPool(threading.local):
    """Scratch arrays of one thread, kept between calls (used by ``evaluate_all``).

    A fresh array is page-faulted in on first touch, and glibc hands the freed temporaries of
    a call back to the system: at N = 10^5 the faults of re-allocating them on every call
    cost as much as all the metrics together. Arrays of up to ``KEEP`` elements are kept
    (at most a few tens of MB per thread); larger ones are allocated per call (NumPy backs
    those with huge pages where it can). Views from :meth:`get` are valid until the next
    :meth:`get` of the same name in this thread: they must not leave the caller.
    """

    KEEP = 1 << 19

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def get(self, name: str, n: int, dtype: type = np.float64) -> np.ndarray:
        """An uninitialised (n,) array of ``dtype``."""
        if n > self.KEEP:
            return np.empty(n, dtype)
        kept = self._arrays.get(name)
        if kept is None or kept.size < n or kept.dtype != dtype:
            kept = self._arrays[name] = np.empty(n, dtype)
        return kept[:n]

    def hold(self, array: np.ndarray) -> None:
        """Keep ``array`` (a temporary NumPy allocated, such as an argsort) until the next
        call: the next one of its size is then allocated while it is alive and freed after,
        so that glibc does not trim the heap and fault it in again."""
        if array.size <= self.KEEP:
            self._arrays["held"] = array

    def steps(self, n: int) -> np.ndarray:
        """1.0, 2.0, ..., n (read-only)."""
        if n > self.KEEP:
            return np.arange(1.0, n + 1.0)
        kept = self._arrays.get("steps")
        if kept is None or kept.size < n:
            kept = self._arrays["steps"] = np.arange(1.0, n + 1.0)
            kept.setflags(write=False)
        return kept[:n]


def rank(
    confidence: np.ndarray,
    pool: ScratchPool | None = None,
    descending: np.ndarray | None = None,
) -> Ranking:
    """Sort ``confidence`` once (descending) and find its tie groups.

    With ``pool`` the order and the sorted confidences are written into its arrays (``order``
    then is contiguous, which makes later gathers cheaper). ``descending``: the order
    ``np.argsort(confidence)[::-1]`` when the caller has it already (the packed order of
    distinct confidences, :func:`fdbench.metrics._blockwise.packed_descending`).
    """
    if descending is not None:
        order = (
            np.empty(confidence.size, np.intp)
            if pool is None
            else pool.get("order", confidence.size, np.intp)
        )
        np.copyto(order, descending)
        c_sorted = confidence[order]
    elif pool is None:
        ascending = np.argsort(confidence)
        order = ascending[::-1]
        c_sorted = confidence[order]
    else:
        ascending = np.argsort(confidence)
        order = pool.get("order", confidence.size, np.intp)
        np.copyto(order, ascending[::-1])
        pool.hold(ascending)
        c_sorted = np.take(confidence, order, out=pool.get("sorted", confidence.size))
    change = c_sorted[1:] != c_sorted[:-1]
    if change.all():
        return Ranking(order=order, ends=None, thresholds=c_sorted)
    ends = np.append(np.flatnonzero(change), order.size - 1)
    return Ranking(order=order, ends=ends, thresholds=c_sorted[ends])


def _rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b)


def first_positive(W: np.ndarray) -> np.ndarray:
    """Per row, the first column with W > 0 (W is non-decreasing along axis 1, W[:, -1] > 0)."""
    m = min(W.shape[1], 64)
    while True:
        block = W[:, :m] > 0
        if m == W.shape[1] or block[:, -1].all():
            return block.argmax(axis=1)
        m = min(W.shape[1], 8 * m)


Work: TypeAlias = "list[np.ndarray] | tuple[np.ndarray, ...] | None"


def _scratch(W: np.ndarray, work, k: int) -> list[np.ndarray]:
    """k float64 scratch arrays shaped like ``W``: from ``work`` (reused) or new."""
    if work is not None:
        return list(work[:k])
    return [np.empty_like(W) for _ in range(k)]


def selective_risks_from_cum(
    W: np.ndarray, L: np.ndarray, out: np.ndarray | None = None, first: np.ndarray | None = None
) -> np.ndarray:
    """Selective risk L / W of every tie group; 0 in the leading groups of zero weight (which
    occur in bootstrap resamples and are no curve points). ``out`` optionally receives it;
    ``first`` is :func:`first_positive` of ``W`` if already known."""
    sr = np.empty_like(W) if out is None else out
    lead = int((first_positive(W) if first is None else first).max())
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(L, W, out=sr)
    if lead:
        sr[:, :lead][W[:, :lead] <= 0] = 0.0
    return sr


def first_loss(W: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Per row, the cumulative loss at the first group of positive weight."""
    return L[np.arange(W.shape[0]), first_positive(W)]


def aurc_from_risks(
    W: np.ndarray, risks: np.ndarray, head: np.ndarray, work: Work = None
) -> np.ndarray:
    """Trapezoidal area under a selective-type risk over coverage, end point at coverage 0.

    ``risks`` (B, T) are the risks s_g at the tie-group ends (0 in leading zero-weight groups),
    ``head`` per row s_first W_first, the risk times the weight of the first group of positive
    weight. With n_g the weight of group g, the area times the total weight is
    sum_g n_g (s_g + s_{g-1}) / 2 where the first group of positive weight pairs with itself
    (the end point repeats its risk down to coverage 0). Rearranged:
    1/2 sum_g (W_{g+1} - W_{g-1}) s_g + 1/2 s_first W_first, with W_0 = 0 and W_{T+1} = W_T.
    ``work`` (here and below) optionally holds scratch arrays shaped like ``W`` to reuse.
    """
    (coef,) = _scratch(W, work, 1)
    if W.shape[1] == 1:
        coef[:, 0] = W[:, 0]
    else:
        coef[:, 0] = W[:, 1]
        np.subtract(W[:, 2:], W[:, :-2], out=coef[:, 1:-1])
        np.subtract(W[:, -1], W[:, -2], out=coef[:, -1])
    return 0.5 * (_rowdot(coef, risks) + head) / W[:, -1]


def aurc_from_cum(
    W: np.ndarray, L: np.ndarray, work: Work = None, *, overwrite: bool = False
) -> np.ndarray:
    """AURC: :func:`aurc_from_risks` of the selective risks L / W (head: the first group's
    loss). With ``overwrite`` the selective risks are written into ``L`` (which then holds
    them, for a caller that needs L no more), one array less to stream through the cache."""
    sr, coef = _scratch(W, work, 2)
    first = first_positive(W)
    head = L[np.arange(W.shape[0]), first]
    if overwrite:
        sr = L
    selective_risks_from_cum(W, L, sr, first)
    return aurc_from_risks(W, sr, head, [coef])


def increments(X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """x_g - x_{g-1} along axis 1 with x_0 = 0 (per-group weights from cumulative ones)."""
    out = np.empty_like(X) if out is None else out
    out[:, 0] = X[:, 0]
    np.subtract(X[:, 1:], X[:, :-1], out=out[:, 1:])
    return out


def _shifted_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sum_g a_g (b_g + b_{g-1}) per row, b_0 = 0."""
    return _rowdot(a, b) + _rowdot(a[:, 1:], b[:, :-1])


def augrc_from_cum(W: np.ndarray, L: np.ndarray, work: Work = None) -> np.ndarray:
    """Trapezoidal area under generalized risk L/W_tot over coverage (end point at 0 is 0):
    sum_g n_g (L_g + L_{g-1}) / 2 / W_tot^2."""
    (n,) = _scratch(W, work, 1)
    return 0.5 * _shifted_dot(increments(W, n), L) / W[:, -1] ** 2


def _safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def auroc_from_cum(W: np.ndarray, L: np.ndarray, work: Work = None) -> np.ndarray:
    """ROC area, successes positive (0/1 losses); trapezoids (ties count 1/2); NaN if one class:
    sum_g l_g (TP_g + TP_{g-1}) / 2 / (P F) with TP = W - L."""
    loss, tp = _scratch(W, work, 2)
    F = L[:, -1]
    P = W[:, -1] - F
    area = 0.5 * _shifted_dot(increments(L, loss), np.subtract(W, L, out=tp))
    return _safe_ratio(area, P * F)


def ap_success_from_cum(W: np.ndarray, L: np.ndarray, work: Work = None) -> np.ndarray:
    """Step-wise average precision with successes positive, ranked by descending confidence:
    sum_g (TP_g - TP_{g-1}) TP_g / W_g / P."""
    tp, precision, d_tp = _scratch(W, work, 3)
    np.subtract(W, L, out=tp)
    np.maximum(W, _TINY, out=precision)
    np.divide(tp, precision, out=precision)
    return _safe_ratio(_rowdot(increments(tp, d_tp), precision), tp[:, -1])


def ap_error_from_cum(W: np.ndarray, L: np.ndarray, work: Work = None) -> np.ndarray:
    """Step-wise average precision with failures positive, ranked by ascending confidence:
    sum_g l_g (F - L_{g-1}) / (W_tot - W_{g-1}) / F."""
    loss, below, precision = _scratch(W, work, 3)
    below, precision = below[:, :-1], precision[:, :-1]
    W_tot = W[:, -1]
    F = L[:, -1]
    increments(L, loss)
    np.subtract(W_tot[:, None], W[:, :-1], out=below)
    np.maximum(below, _TINY, out=below)
    np.subtract(F[:, None], L[:, :-1], out=precision)
    np.divide(precision, below, out=precision)
    num = _rowdot(loss[:, 1:], precision) + loss[:, 0] * F / W_tot
    return _safe_ratio(num, F)


def _smallest_reaching(total: float, fraction: float) -> float:
    """The smallest float64 x >= 0 with x / total >= fraction, for total > 0 and fraction in
    (0, 1] (division rounded as in NumPy).

    x = fraction · total is within an ulp or two of it for normal numbers; otherwise (subnormal
    products) a bisection over the bit patterns of [0, total], which order like the floats.
    """
    x = fraction * total
    for _ in range(4):
        below = math.nextafter(x, -math.inf)
        if x / total >= fraction > below / total:
            return x
        x = below if below / total >= fraction else math.nextafter(x, math.inf)
    lo = 0
    hi = struct.unpack("<q", struct.pack("<d", total))[0]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if struct.unpack("<d", struct.pack("<q", mid))[0] / total >= fraction:
            hi = mid
        else:
            lo = mid
    return struct.unpack("<d", struct.pack("<q", hi))[0]


def first_reaching(cumulative: np.ndarray, fraction: float) -> np.ndarray:
    """Per row, the first column where cumulative / (last column) >= fraction (<= 1).

    Rows are non-decreasing, so a binary search for the smallest reaching value finds the same
    column as comparing every column, in O(log T) per row. Rows whose last column is <= 0
    give column 0.
    """
    idx = np.zeros(cumulative.shape[0], dtype=np.intp)
    last = cumulative.shape[1] - 1
    for row, total in enumerate(cumulative[:, -1].tolist()):
        if total > 0:
            x = _smallest_reaching(total, fraction)
            idx[row] = min(int(np.searchsorted(cumulative[row], x, side="left")), last)
    return idx


def fpr_at_tpr_from_cum(
    W: np.ndarray, L: np.ndarray, tpr: float, work: Work = None, TP: np.ndarray | None = None
) -> np.ndarray:
    """Smallest false-positive rate among thresholds with true-positive rate >= tpr.

    ``TP`` is the cumulative success weight; by default W - L, which is exact for integer
    weights. For other weights pass the cumulative sum of the success weights itself: W - L
    rounds, and can stay below the total success weight at the threshold that accepts every
    success (so that TPR 1 would never be reached there).
    """
    if TP is None:
        (TP,) = _scratch(W, work, 1)
        np.subtract(W, L, out=TP)
    idx = first_reaching(TP, tpr)
    fpr = _safe_ratio(L[np.arange(W.shape[0]), idx], L[:, -1])
    fpr[TP[:, -1] <= 0] = np.nan
    return fpr


def risk_at_coverage_from_cum(W: np.ndarray, L: np.ndarray, coverage: float) -> np.ndarray:
    """Selective risk of the largest threshold whose coverage is >= ``coverage`` (in (0, 1])."""
    rows = np.arange(W.shape[0])
    idx = first_reaching(W, coverage)
    return L[rows, idx] / W[rows, idx]


def min_risk_at_coverage_from_risks(
    W: np.ndarray, risks: np.ndarray, coverage: float
) -> np.ndarray:
    """Lowest selective risk among the thresholds whose coverage is >= ``coverage`` (in (0, 1]).

    ``risks`` are the selective risks of :func:`selective_risks_from_cum`. The thresholds with
    coverage >= x are the columns from the first one reaching x on (coverage grows along a row);
    zero-weight groups repeat the point before them and do not change the minimum.
    """
    idx = first_reaching(W, coverage)
    return np.array([row[i:].min() for row, i in zip(risks, idx.tolist(), strict=True)])


def coverage_at_risk_from_cum(
    W: np.ndarray, L: np.ndarray, risk: float, work: Work = None
) -> np.ndarray:
    """Largest coverage whose selective risk is <= ``risk`` (0 when there is none)."""
    (sr,) = _scratch(W, work, 1)
    np.maximum(W, _TINY, out=sr)
    np.divide(L, sr, out=sr)
    ok = sr <= risk
    ok &= W > 0
    np.multiply(W, ok, out=sr)
    return sr.max(axis=1) / W[:, -1]


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


def optimal_from_unit_cumulative(losses: np.ndarray, work: Work = None) -> tuple[float, float]:
    """AURC and AUGRC of the optimal CSF for unit weights, every sample its own step.

    ``losses`` are the cumulative residuals in ascending residual order.
    """
    L = losses[None, :]
    W = np.arange(1, L.shape[1] + 1, dtype=np.float64)[None, :]
    return float(aurc_from_cum(W, L, work)[0]), float(augrc_from_cum(W, L, work)[0])


def optimal_binary_unit(n_success: int, n_fail: int) -> tuple[float, float]:
    """AURC and AUGRC of the optimal CSF for 0/1 residuals with unit weights.

    The optimum accepts the S successes first, then the F failures one by one: the selective
    risk at step S + k is k / (S + k), so with unit steps (see :func:`optimal_from_counts`)
    AURC = (sum_k k / (S + k) + s_1/2 - F/(2N)) / N, s_1 = [S = 0], and AUGRC = F^2 / (2 N^2).
    The sum runs over the F failures directly: the closed form through the digamma function
    cancels catastrophically when F is small against S. It is ``np.sum(k / (k + S))`` over
    ``k = np.arange(1.0, F + 1.0)`` bit for bit, formed a cache-sized leaf of NumPy's pairwise
    summation at a time (:func:`~fdbench.metrics._ordered_sums.pairwise`): no arrays of F.
    """
    n = n_success + n_fail
    if n_fail == 0:
        return 0.0, 0.0

    def leaf(i: int, j: int) -> np.ndarray:
        k = np.arange(i + 1.0, j + 1.0)  # whole numbers below 2^53: exact
        return np.divide(k, k + n_success, out=k)

    risk_sum = pairwise(leaf, 0, n_fail)
    first = 1.0 if n_success == 0 else 0.0
    return (risk_sum + 0.5 * first - 0.5 * n_fail / n) / n, 0.5 * float(n_fail**2) / n**2


def harmonic_steps(W0: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``digamma(W0 + weights + 1.0) - digamma(W0 + 1.0)`` elementwise (the sum of 1/(W0 + j),
    j = 1..w, for whole w: :func:`optimal_from_counts`), bit for bit, with about one digamma
    per element instead of two (:func:`digamma_steps`; along the last axis ``W0`` is the
    weight before each group)."""
    return digamma_steps(W0 + weights + 1.0, W0 + 1.0)


def digamma_steps(upper: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """``digamma(upper) - digamma(lower)`` elementwise, bit for bit, where along the last axis
    a group's ``upper`` is almost always the next group's ``lower``: W0 + w of a group and the
    next group's W0 are two roundings of the same cumulative sum, equal in all but about 1 in
    10^5 groups, so a group's upper digamma is taken from the next group's lower one (the same
    float: the same number); the others (and each row's last) are computed. A digamma
    (``scipy.special.digamma``) is ~17 ns, most of the optimum's cost. ``lower`` is
    overwritten."""
    from scipy.special import digamma  # lazy: scipy costs ~0.3 s to import

    at_lower = digamma(lower)
    shared = upper[..., :-1] == lower[..., 1:]
    at_upper = lower  # its arguments are read: its memory holds the upper digammas
    at_upper[..., :-1] = at_lower[..., 1:]
    apart = np.ones(upper.shape, dtype=bool)
    apart[..., :-1] = ~shared
    at_upper[apart] = digamma(upper[apart])
    return np.subtract(at_upper, at_lower, out=at_upper)


def optimal_from_counts(
    values: np.ndarray, weights: np.ndarray, n_samples: np.ndarray | float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """AURC and AUGRC of the optimal CSF with frequency weights, one row per weighting.

    ``values`` are the distinct residuals in ascending order (K,), ``weights`` their total weight
    per row (B, K). With ``n_samples`` (per row or one number) the weights are first read in
    units of their mean over that many samples, w n / sum w, so that the result does not depend
    on the scale of the weights (weights already summing to ``n_samples``, such as bootstrap
    counts, are used as they are: the factor is exactly 1). Weight w is then read as w copies
    of the sample, each its own step; the sum of
    the selective risks (L0 + j r)/(W0 + j), j = 1..w, of a run of w copies appended after
    cumulative weight W0 and loss L0 is r w + (L0 - r W0)(psi(W0 + w + 1) - psi(W0 + 1)).
    With unit steps, AURC = (sum_j s_j + s_1/2 - s_M/2) / M and
    AUGRC = (sum_j L_j - L_M/2) / M^2 over the M expanded samples.
    """
    if n_samples is not None:
        scale = np.asarray(n_samples, dtype=np.float64) / weights.sum(axis=1)
        weights = weights * np.reshape(scale, (-1, 1))
    wr = weights * values
    M = weights.sum(axis=1)
    L_tot = wr.sum(axis=1)
    W0 = np.cumsum(weights, axis=1) - weights
    L0 = np.cumsum(wr, axis=1) - wr
    harmonic = harmonic_steps(W0, weights)
    risk_sum = (wr + (L0 - values * W0) * harmonic).sum(axis=1)
    first = values[np.argmax(weights > 0, axis=1)]
    aurc_opt = (risk_sum + 0.5 * first - 0.5 * L_tot / M) / M
    loss_sum = (weights * L0 + 0.5 * wr * (weights + 1.0)).sum(axis=1)
    augrc_opt = (loss_sum - 0.5 * L_tot) / M**2
    return aurc_opt, augrc_opt


@dataclass(frozen=True)
class FailureIndex:
    """Where the failures of 0/1 residuals sit in a :class:`Ranking`, for bulk weighting."""

    per_group: np.ndarray
    """Number of failures up to the end of each tie group (T,)."""
    groups: np.ndarray
    """Indices of the tie groups holding at least one failure."""
    tie_free: bool
    """Every tie group is one sample (a failure's group holds that failure only)."""
    positions: np.ndarray
    """Positions of the failures in the ranking's order (ascending)."""


def failure_index(ranking: Ranking, residuals: np.ndarray) -> FailureIndex:
    """Locate the failures (residual 1) of 0/1 ``residuals`` in ``ranking``."""
    r_sorted = residuals[ranking.order]
    per_sample = np.cumsum(r_sorted).astype(np.intp)
    per_group = ranking.at_ends(per_sample)
    groups = np.flatnonzero(np.diff(per_group, prepend=0) > 0)
    positions = np.flatnonzero(r_sorted)
    return FailureIndex(per_group, groups, ranking.ends is None, positions)


class Workspace:
    """Scratch arrays reused across blocks of weightings (fresh large arrays cost page faults).

    ``dtype`` is the dtype of the weights: integer bootstrap counts are accumulated in integer
    arithmetic (exact, and several times faster than a floating-point cumulative sum).
    """

    def __init__(self, rows: int, n: int, n_fail: int, dtype: np.dtype) -> None:
        self.integer = np.dtype(dtype).kind in "iu"
        self._big = [np.empty(rows * n) for _ in range(5)]
        self._small = [np.empty(rows * (n_fail + 1)) for _ in range(4)]
        self._weights = [np.empty(rows * n, dtype=dtype) for _ in range(2)]
        self._fail = np.empty(rows * n_fail, dtype=dtype)
        self.fail_cum = np.zeros((rows, n_fail + 1), dtype=dtype)
        self.fail_cum_float = np.zeros((rows, n_fail + 1))

    @staticmethod
    def _view(flat: np.ndarray, rows: int, cols: int) -> np.ndarray:
        return flat[: rows * cols].reshape(rows, cols)

    def big(self, k: int, rows: int, cols: int) -> np.ndarray:
        """Float64 scratch array k (0..4) with up to N columns."""
        return self._view(self._big[k], rows, cols)

    def small(self, k: int, rows: int, cols: int) -> np.ndarray:
        """Float64 scratch array k (0..3) with up to (number of failures + 1) columns."""
        return self._view(self._small[k], rows, cols)

    def weights(self, k: int, rows: int, cols: int) -> np.ndarray:
        """Scratch array k (0..1) of the weights' dtype with up to N columns."""
        return self._view(self._weights[k], rows, cols)

    def fail(self, rows: int, cols: int) -> np.ndarray:
        return self._view(self._fail, rows, cols)


def success_cumulative(
    ranking: Ranking, residuals: np.ndarray, weights: np.ndarray | None
) -> np.ndarray | None:
    """Cumulative success weight at the tie-group ends, one row per row of ``weights``
    ((N,) or (B, N)), for :func:`fpr_at_tpr_from_cum`; ``None`` when W - L is exact
    (no weights, or integer weights)."""
    if weights is None or weights.dtype.kind in "iu" or np.all(weights == np.round(weights)):
        return None
    ok = np.take(weights, ranking.order, axis=-1) * (1.0 - residuals[ranking.order])
    return np.atleast_2d(ranking.at_ends(np.cumsum(ok, axis=-1)))


def binary_cumulative(
    ranking: Ranking, failures: FailureIndex, weights: np.ndarray, work: Workspace
) -> tuple[np.ndarray, np.ndarray]:
    """W and L (float64) at the tie-group ends for each row of ``weights``, 0/1 residuals.

    ``weights`` (B, M) may cover more samples than the ranking's N: ``ranking.order`` indexes
    its columns.

    One cumulative sum over all samples (W) and one over the failures only (L), in the dtype
    of ``weights``: integer weights (bootstrap counts) are summed in integer arithmetic, which
    is exact in any order and several times faster than a floating-point cumulative sum. The
    results are views into ``work`` (big scratch arrays 0 and 1), valid until its next use;
    ``work`` also keeps the failures' cumulative weight (``fail_cum_float``, a leading 0) and,
    for float weights, their weights, for :func:`augrc_auroc_binary`.
    """
    rows, n = weights.shape[0], ranking.order.size
    t = ranking.n_groups
    W = work.big(0, rows, t)
    ws = work.weights(0, rows, n)
    np.take(weights, ranking.order, axis=1, out=ws, mode="clip")
    # the failures' weights from the rows just gathered (in cache, read in order)
    fail = work.fail(rows, failures.positions.size)
    np.take(ws, failures.positions, axis=1, out=fail, mode="clip")
    np.cumsum(ws, axis=1, out=ws)
    if ranking.ends is not None:
        ends = work.weights(1, rows, t)
        np.take(ws, ranking.ends, axis=1, out=ends, mode="clip")
        ws = ends
    np.copyto(W, ws)
    lf = work.fail_cum[:rows]
    np.cumsum(fail, axis=1, out=lf[:, 1:])
    lf_float = work.fail_cum_float[:rows]
    np.copyto(lf_float, lf)
    L = work.big(1, rows, t)
    np.take(lf_float, failures.per_group, axis=1, out=L, mode="clip")
    return W, L


def augrc_auroc_binary(
    W: np.ndarray, L: np.ndarray, failures: FailureIndex, work: Workspace | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """AUGRC and AUROC_f of 0/1 residuals from the tie groups holding failures only.

    With l_g, n_g the failure and total weight of group g: AUGRC W_tot^2 =
    sum_g l_g (W_tot - W_g) + 1/2 n_g l_g, and the correctly ordered (success above failure)
    weight is sum_g l_g (W_{g-1} - L_{g-1}) + 1/2 l_g (n_g - l_g), ties counting 1/2.
    Without ties, and with ``work`` just filled by :func:`binary_cumulative` for these rows,
    l_g = n_g are the failures' own weights and L_{g-1} their exclusive cumulative sum, both
    already in ``work``: only W_{g-1} is gathered.
    """
    g = failures.groups
    rows, k = W.shape[0], g.size
    if work is None:
        bufs = [np.empty((rows, k)) for _ in range(4)]
    else:
        bufs = [work.small(i, rows, k) for i in range(4)]
    w_end, l_end, w_prev, l_prev = bufs
    np.take(W, g - 1, axis=1, out=w_prev, mode="clip")
    if k and g[0] == 0:
        w_prev[:, 0] = 0.0
    if failures.tie_free and work is not None:
        loss = n = l_end
        cumulative = work.fail_cum_float[:rows]
        if work.integer:
            np.subtract(cumulative[:, 1:], cumulative[:, :-1], out=loss)
        else:
            np.copyto(loss, work.fail(rows, k))
        l_prev = cumulative[:, :-1]
    else:
        np.take(W, g, axis=1, out=w_end, mode="clip")
        np.take(L, g, axis=1, out=l_end, mode="clip")
        np.take(L, g - 1, axis=1, out=l_prev, mode="clip")
        if k and g[0] == 0:
            l_prev[:, 0] = 0.0
        loss = np.subtract(l_end, l_prev, out=l_end)
        n = np.subtract(w_end, w_prev, out=w_end)
    total = W[:, -1]
    fail = L[:, -1]
    # sum_g l_g (W_tot - W_g) = W_tot F - sum_g l_g (W_{g-1} + n_g)
    w_prev_dot = _rowdot(loss, w_prev)
    n_dot = _rowdot(loss, n)
    loss_dot = _rowdot(loss, l_prev) + 0.5 * (n_dot if n is loss else _rowdot(loss, loss))
    return augrc_auroc_from_sums(total, fail, w_prev_dot, n_dot, loss_dot)


def augrc_auroc_from_sums(
    total: np.ndarray,
    fail: np.ndarray,
    w_prev_dot: np.ndarray,
    n_dot: np.ndarray,
    loss_dot: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """AUGRC and AUROC_f from the per-row sums over the failures' groups g (weights W_tot,
    failures F): ``w_prev_dot`` = sum_g l_g W_{g-1}, ``n_dot`` = sum_g l_g n_g, ``loss_dot`` =
    sum_g l_g L_{g-1} + 1/2 sum_g l_g^2 (:func:`augrc_auroc_binary` states the identities)."""
    augrc = (total * fail - w_prev_dot - 0.5 * n_dot) / total**2
    ordered = w_prev_dot - loss_dot + 0.5 * n_dot
    return augrc, _safe_ratio(ordered, (total - fail) * fail)
