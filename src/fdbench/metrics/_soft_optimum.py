"""AURC and AUGRC of the optimal CSF for soft residuals with weights, in blocks: the values of
:func:`fdbench.metrics.selective._optimum` without its arrays of N.

There, ``np.unique(r, return_inverse=True)`` gives the K distinct residuals (an argsort, a
sorted copy, the inverse and its cumulative sum: about four arrays of N), ``np.bincount`` each
one's total weight, and :func:`~fdbench.metrics._core.optimal_from_counts` about ten arrays of
K (the scaled weights, their products with the residuals, two cumulative sums, the digamma
terms): 11 times the residuals' memory at 10^7, where K is N for continuous residuals. Here
the residuals are ranked once (the stable ascending order, int32: by counting where they take
few values, else from a sort of packed keys) with K found on the way, the weights are gathered
into that order once (1.5 times the residuals' memory with the order; a random gather at 10^7
costs ~0.1 s, so it is not repeated), and the groups of equal residuals are formed from them a
block at a time, twice: to sum their weights, and to form each sum's terms.

The values are the same bit for bit:

- A group's weight is ``np.bincount``'s sum: its samples' weights added one after the other in
  position order from 0.0. In the stable order a group's samples come in position order, and
  a group cut by a block goes on from its partial sum (added first: 0.0 + s = s).
- Each of ``optimal_from_counts``' reductions over the K groups (the total weight, M, L_tot,
  the sums of the AURC and AUGRC terms) is NumPy's pairwise summation, which splits a run of
  values at fixed places: :func:`~fdbench.metrics._ordered_sums.pairwise_rows` sums the same
  runs with ``np.add.reduce`` (the four sums of terms in one pass, row by row). The cumulative
  sums are sequential, continued across blocks; every other term is the same IEEE operation on
  the same operands, formed per group by a compiled loop (:func:`_terms`: numba without
  fast-math, so nothing is reordered or fused; ``tests/metrics/test_blockwise.py`` checks its
  machine code holds no FMA), and the digamma steps are ``scipy.special.digamma``'s: above
  10 compiled with the term they multiply (:mod:`~fdbench.metrics._digamma`, checked against
  SciPy once per process), at 10 or below SciPy's own
  (:func:`~fdbench.metrics._core.digamma_steps`).
- The group's value is its residual. ``np.unique`` keeps the first of a group in its own
  (unstable) sort, which matters only between -0.0 and 0.0: residuals with a -0.0 are left
  to :func:`~fdbench.metrics.selective._optimum`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from types import SimpleNamespace

import numpy as np

from fdbench.core.threads import beside

from ._blockwise_kernel import MIN_SAMPLES, compiled_kernels
from ._core import digamma_steps
from ._counting_order import count_values, few_values, place
from ._digamma import ABOVE, compiled_step_terms
from ._ordered_sums import pairwise, pairwise_leaves, pairwise_tree
from ._packed_order import descending_distinct, descending_stable
from .selective import _optimum

#: Most samples the int32 order holds.
MAX_SAMPLES = int(np.iinfo(np.int32).max)

#: Samples per block of the walk over the ranked residuals, and groups per leaf of the sums.
BLOCK = 1 << 16


class _Groups:
    """The groups of equal residuals in ascending order, with their total weights, a range
    of groups at a time (:meth:`take` or :meth:`take_weights`, called for consecutive ranges;
    the residuals gathered by the compiled ``gather``, which reads the int32 order as it is;
    the weights ``ordered`` already: w at the order's samples)."""

    def __init__(
        self,
        r: np.ndarray,
        ordered: np.ndarray,
        order: np.ndarray,
        distinct: bool,
        gather: Callable[..., None],
    ) -> None:
        self._r, self._w, self._order, self._gather = r, ordered, order, gather
        self._distinct = distinct  # every group one sample: its weight is its total
        self._next = 0  # the next sample of the order to read
        self._values = np.empty(0)
        self._sums = np.empty(0)
        self._open: tuple[float, float] | None = None  # the group a block ended in: value, sum

    def take_weights(self, count: int) -> np.ndarray:
        """The total weights of the next ``count`` groups."""
        if not self._distinct:
            return self.take(count)[1]
        weights = self._w[self._next : self._next + count]  # one sample: 0.0 + w is w
        self._next += count
        return weights

    def take(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The values and total weights of the next ``count`` groups."""
        if self._distinct:
            return self._ordered(self._r, self._next, count), self.take_weights(count)
        values, sums = [self._values], [self._sums]
        have = self._values.size
        while have < count:
            v, s = self._block()
            values.append(v)
            sums.append(s)
            have += v.size
        v, s = np.concatenate(values), np.concatenate(sums)
        self._values, self._sums = v[count:], s[count:]
        return v[:count], s[:count]

    def _block(self) -> tuple[np.ndarray, np.ndarray]:
        """The groups completed by the next block of samples (the last one too, at the end)."""
        n = self._order.size
        start, stop = self._next, min(self._next + BLOCK, n)
        self._next = stop
        rb = self._ordered(self._r, start, stop - start)
        wb = self._w[start:stop]
        if self._open is not None:  # the open group's partial sum goes first
            rb = np.concatenate([[self._open[0]], rb])
            wb = np.concatenate([[self._open[1]], wb])
        change = rb[1:] != rb[:-1]
        sums = np.bincount(np.concatenate([[0], np.cumsum(change)]), weights=wb)
        values = rb[np.concatenate([[0], np.flatnonzero(change) + 1])]
        if stop == n:
            self._open = None
            return values, sums
        self._open = (float(values[-1]), float(sums[-1]))
        return values[:-1], sums[:-1]

    def _ordered(self, x: np.ndarray, start: int, count: int) -> np.ndarray:
        """x at samples start .. start + count - 1 of the order."""
        out = np.empty(count)
        self._gather(self._order, x, start, out)
        return out


def _ascending(r: np.ndarray, kernels: SimpleNamespace) -> tuple[np.ndarray, int]:
    """The stable ascending order of the residuals (a view of int32) and the number of
    distinct residuals: by counting where they take few values
    (:mod:`~fdbench.metrics._counting_order`), else from the packed order of distinct
    residuals (all N differ), else from the stable packed order and a count of its groups."""
    if few_values(r):
        counted = count_values(r, kernels)
        if counted is not None:
            order, _ = place(counted, kernels, order=True)
            assert order is not None
            return order[::-1], counted.ends.size
    distinct = descending_distinct(r, kernels)
    if distinct is not None:
        return distinct[::-1], r.size
    order = descending_stable(r, kernels)[::-1]
    return order, _count_groups(r, order)


def _count_groups(r: np.ndarray, order: np.ndarray) -> int:
    """The number of distinct residuals, from the ranked residuals a block at a time."""
    count = 0
    previous = None
    for start in range(0, order.size, BLOCK):
        rb = r[order[start : start + BLOCK].astype(np.intp)]
        count += int(np.count_nonzero(rb[1:] != rb[:-1]))
        if previous is None or rb[0] != previous:
            count += 1
        previous = rb[-1]
    return count


def weighted_soft_optimum(r: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """``_optimum(r, w, binary=False)`` for validated soft residuals and weights > 0: in
    blocks (:func:`blocked_optimum`) from the compiled walk's
    :data:`~fdbench.metrics._blockwise_kernel.MIN_SAMPLES` on (the packed order's kernels are
    loaded there anyway), else, or where that does not apply, by ``_optimum`` itself."""
    kernels = compiled_kernels() if MIN_SAMPLES <= r.size <= MAX_SAMPLES else None
    if kernels is not None:
        blocked = blocked_optimum(r, w, kernels)
        if blocked is not None:
            return blocked
    return _optimum(r, w, binary=False)


def blocked_optimum(
    r: np.ndarray, w: np.ndarray, kernels: SimpleNamespace
) -> tuple[float, float] | None:
    """``_optimum(r, w, binary=False)`` (validated soft residuals, weights > 0, at most 2^31
    samples) bit for bit, with the int32 order and blocks of :data:`BLOCK` besides; ``None``
    where a residual is -0.0 (see the module docstring)."""
    if np.signbit(r).any():
        return None
    order, k = _ascending(np.ascontiguousarray(r), kernels)
    ordered = np.empty(r.size)  # the weights in the order, gathered once for both walks
    kernels.gather(order, np.ascontiguousarray(w), 0, ordered)
    groups = _Groups(r, ordered, order, k == r.size, kernels.gather)
    raw_total = pairwise(lambda i, j: groups.take_weights(j - i), 0, k)
    scale = np.float64(r.size) / np.float64(raw_total)
    groups = _Groups(r, ordered, order, k == r.size, kernels.gather)
    carry = np.array([0.0, 0.0, np.nan])  # W and L before the next group, the first value
    compiled = _compiled_terms()
    step_terms = compiled_step_terms()

    def leaf_sums() -> Iterator[np.ndarray]:
        """Each run's four sums of terms, in order; a run's digamma steps and sums are taken
        on the second thread while the next run's terms are formed (smaller runs than the
        pairwise sums' lose that gain; two runs' buffers, ~7 MB, are then alive: peak memory
        2.4x the confidences at 10^6, 1.56x at 10^7)."""
        pending: Future[np.ndarray] | None = None
        for i, j in pairwise_leaves(0, k):
            values, raw = groups.take(j - i)
            out = np.empty((4, j - i))
            upper, lower = np.empty(j - i), np.empty(j - i)
            compiled(values, raw, scale, carry, out, upper, lower)
            formed = beside(_finish_terms, out, upper, lower, step_terms)
            if pending is not None:
                yield pending.result()
            pending = formed
        assert pending is not None
        yield pending.result()

    sums = pairwise_tree(leaf_sums(), k)
    M, L_tot, risk_sum, loss_sum = (np.array([x]) for x in sums.tolist())
    # optimal_from_counts' values[argmax(weights > 0)]: the smallest where no weight is > 0
    first = carry[2] if carry[2] == carry[2] else float(r[order[0]])
    aurc_opt = (risk_sum + 0.5 * first - 0.5 * L_tot / M) / M
    augrc_opt = (loss_sum - 0.5 * L_tot) / M**2
    return float(aurc_opt[0]), float(augrc_opt[0])


def _finish_terms(
    out: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
    step_terms: Callable[[np.ndarray, np.ndarray, np.ndarray], int] | None,
) -> np.ndarray:
    """The sums of a run's four rows of terms (:func:`_terms`), row 2 first made
    w r + (L0 - r W0) h with the digamma steps h of ``upper`` and ``lower``: by the compiled
    ``step_terms`` (:func:`~fdbench.metrics._digamma.compiled_step_terms`) where ``lower`` is
    above 10, by SciPy's digamma for the groups it leaves (the same values)."""
    n = out.shape[1]
    left = n if step_terms is None else step_terms(out, upper, lower)
    if left:
        at = slice(None) if left == n else np.flatnonzero(~(lower > ABOVE))
        harmonic = digamma_steps(upper[at], lower[at])
        out[2, at] = np.add(out[1, at], np.multiply(out[2, at], harmonic, out=harmonic))
    return np.add.reduce(out, axis=1)


def _terms(
    values: np.ndarray,
    raw: np.ndarray,
    scale: float,
    carry: np.ndarray,
    out: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
) -> None:
    """The terms of ``optimal_from_counts``' four sums for the next groups (their residuals
    ``values`` and raw total weights ``raw``), each the same IEEE operation on the same
    operands as its NumPy expression there: out[0] = the scaled weights w = raw * scale,
    out[1] = w r, out[3] = w L0 + 0.5 (w r) (w + 1), and out[2] = L0 - r W0, which the caller
    turns into w r + (L0 - r W0) h with the digamma steps h of ``upper`` = W0 + w + 1 and
    ``lower`` = W0 + 1. W and L (carry[0], carry[1]) are the running sums ``np.cumsum``
    takes (one addition after another, from the groups before), W0 = W - w and L0 = L - w r;
    carry[2] becomes the residual of the first group of weight > 0 (NaN until then)."""
    W = carry[0]
    L = carry[1]
    first = carry[2]
    for k in range(values.shape[0]):
        r = values[k]
        w = raw[k] * scale
        wr = w * r
        W = W + w
        L = L + wr
        W0 = W - w
        L0 = L - wr
        out[0, k] = w
        out[1, k] = wr
        out[2, k] = L0 - r * W0
        out[3, k] = w * L0 + 0.5 * wr * (w + 1.0)
        upper[k] = W0 + w + 1.0
        lower[k] = W0 + 1.0
        if first != first and w > 0.0:
            first = r
    carry[0] = W
    carry[1] = L
    carry[2] = first


@functools.cache
def _compiled_terms() -> Callable[..., None]:
    """:func:`_terms` compiled by numba (loaded with the block walk's kernels, whose
    presence :func:`weighted_soft_optimum` checks first)."""
    from numba import njit

    compiled: Callable[..., None] = njit(cache=True, error_model="numpy", nogil=True)(_terms)
    return compiled
