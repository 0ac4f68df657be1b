"""Class-averaged selective risk along a ranking (FD-Shifts' AURC-BA curve) in O(N) memory."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._core import Ranking

_SMALL_CODES = 1 << 16
#: Samples per class (on average) from which the exact class risks are summed a class segment
#: at a time (a few NumPy calls per class; below, the vectorised offsets cost less).
_SEGMENT_SAMPLES = 1 << 10


class Classes(NamedTuple):
    """The classes of N labels: ``codes`` (N non-negative integers), the number
    ``n_classes`` (K) of distinct classes and ``counts`` = ``np.bincount(codes)`` (the samples
    of each code; 0 for a code no label has)."""

    codes: np.ndarray
    n_classes: int
    counts: np.ndarray


def class_codes(labels: np.ndarray) -> Classes:
    """Non-negative integer class codes, the number K of distinct classes and the samples per
    code (one count of the codes, which the class-balanced metrics share).

    Codes are ``uint16`` wherever the classes fit (then a stable sort by class is a radix
    sort, linear in N); labels already in [0, 2^16) are kept as they are (codes of absent
    classes are simply unused).
    """
    if labels.size and labels.min() >= 0 and labels.max() < _SMALL_CODES:
        codes = labels.astype(np.uint16)
    else:
        classes, inverse = np.unique(labels, return_inverse=True)
        codes = inverse.astype(np.uint16 if classes.size <= _SMALL_CODES else np.intp)
    counts = np.bincount(codes)
    return Classes(codes, int(np.count_nonzero(counts)), counts)


def _segment_offsets(cumulative: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per element, the cumulative value just before its class segment (0 for the first)."""
    return np.repeat(np.where(starts > 0, cumulative[starts - 1], 0.0), sizes)


def _within_class_cumsum(
    values: np.ndarray, starts: np.ndarray, sizes: np.ndarray, *, exact: bool
) -> np.ndarray:
    """Cumulative sum restarting at every class segment (class-major order).

    A class's sums are differences of one running sum over all classes. ``exact`` (integer
    values, sums below 2^53): nothing rounds. Otherwise the rounding error of every step of
    the running sum is recovered exactly (Knuth's TwoSum) and its own running sum added back,
    so that each class's sums are accurate relative to themselves, not to the running total.
    """
    total = np.cumsum(values)
    out = total - _segment_offsets(total, starts, sizes)
    if not exact:
        previous = np.concatenate(([0.0], total[:-1]))
        added = total - previous
        error = (previous - (total - added)) + (values - added)
        np.cumsum(error, out=error)
        out += error - _segment_offsets(error, starts, sizes)
    return out


def _exact_risk_by_segment(r: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Each class's selective risk at each of its samples (class-major order, unit weights,
    0/1 residuals): the losses summed within each class segment over 1, 2, ... accepted.
    The same numbers as ``_within_class_cumsum(r, ..., exact=True)`` over
    ``arange(1, n + 1) - repeat(starts, sizes)``: every sum and count is a whole number below
    2^53, so a segment's own running sum equals the running total minus its offset, and the
    division is the same (residuals without -0.0: a later segment's offset subtraction
    makes +0.0 of it). One pass instead of five and no arrays of offsets."""
    counts = np.arange(1.0, float(sizes.max()) + 1.0)
    risk = np.empty(r.size)
    for start, size in zip(starts.tolist(), sizes.tolist(), strict=True):
        segment = risk[start : start + size]
        np.cumsum(r[start : start + size], out=segment)
        np.divide(segment, counts[:size], out=segment)
    return risk


def class_mean_selective_risk(
    ranking: Ranking,
    codes: np.ndarray,
    n_classes: int,
    residuals: np.ndarray,
    weights: np.ndarray | None,
    *,
    ranked: tuple[np.ndarray, np.ndarray] | None = None,
    counts: np.ndarray | None = None,
    binary: bool | None = None,
) -> np.ndarray:
    """Mean over the K classes of each class's selective risk, at every tie-group end (T,).

    At threshold tau the selective risk of class c is
    sum_{y_i = c} w_i r_i [c_i >= tau] / sum_{y_i = c} w_i [c_i >= tau], 0 for a class with
    nothing accepted; the result is their sum over the K classes present divided by K.

    Only the class of an added sample changes its term, so the sum is a running sum over the
    ranking of per-sample increments (new minus previous selective risk of the sample's
    class). The per-class cumulative weights and losses behind them come from one stable sort
    of the ranked class codes (class-major, ranking order within a class): O(N) memory. They
    are exact for integer weights with 0/1 residuals and accurate to a few roundings per class
    otherwise (``_within_class_cumsum``); the running sum of increments rounds like any
    cumulative sum (relative error below 1e-12 at N = 10^6, K = 1000). Weights must be
    positive.

    ``ranked`` (without weights): ``codes`` and ``residuals`` already in ranking order, which
    spares their gathers (the same values in the same places). ``counts``: ``np.bincount`` of
    the codes (:class:`Classes`), ``binary``: whether every residual is 0 or 1, where the
    caller has them (neither is computed again).
    """
    n = ranking.order.size
    ranked_codes = codes[ranking.order] if ranked is None else ranked[0]
    by_class = np.argsort(ranked_codes, kind="stable")
    sizes = np.bincount(ranked_codes) if counts is None else counts
    starts = (np.cumsum(sizes) - sizes)[sizes > 0]
    sizes = sizes[sizes > 0]
    if ranked is not None and weights is None:
        r = ranked[1][by_class]
    else:
        samples = ranking.order[by_class]
        r = residuals[samples]
    integral = weights is None or bool(np.all(weights == np.round(weights)))
    if binary is None:
        binary = bool(np.all((r == 0) | (r == 1)))
    exact = integral and binary
    by_segment = weights is None and exact and n >= _SEGMENT_SAMPLES * sizes.size
    if by_segment and not np.signbit(r).any():  # -0.0: see _exact_risk_by_segment
        risk = _exact_risk_by_segment(r, starts, sizes)
    else:
        if weights is None:
            accepted = np.arange(1.0, n + 1.0)
            accepted -= np.repeat(starts.astype(np.float64), sizes)
            losses = _within_class_cumsum(r, starts, sizes, exact=exact)
        else:
            w = weights[samples]
            losses = _within_class_cumsum(w * r, starts, sizes, exact=exact)
            accepted = _within_class_cumsum(w, starts, sizes, exact=integral)
        risk = np.divide(losses, accepted, out=losses)
    step = np.empty(n)
    step[0] = risk[0]
    np.subtract(risk[1:], risk[:-1], out=step[1:])
    step[starts] = risk[starts]
    in_order = np.empty(n)
    in_order[by_class] = step
    return ranking.at_ends(np.cumsum(in_order, out=in_order)) / n_classes
