"""The suite of weighted or soft residuals from one argsort, walked in blocks: no array of N
cumulative sums.

The argsort engine (:mod:`fdbench.metrics._core`) gathers the confidences, weights and losses
through the descending order, keeps their cumulative sums ``W`` and ``L`` (and, for float
weights, the successes' ``TP``) at the ends of the tie groups as arrays of N floats and makes
one NumPy pass over them per metric: about eleven arrays of N floats alive at once. Here the
order is kept as int32 (half an array of N floats), the weights are gathered once into a copy in
that order (0/1 residuals travel in its sign bit), and one walk over blocks of :data:`BLOCK`
samples produces each block's W, L and TP and feeds every metric, so that nothing else of size
N is alive. Peak memory: 1.5 arrays of N floats (the weights' copy and the int32 order; soft
residuals without weights need neither the copy), besides the argsort's own result, which is
freed once the int32 order is made.

From :data:`~fdbench.metrics._blockwise_kernel.MIN_SAMPLES` samples on the same walk runs
compiled (:mod:`fdbench.metrics._blockwise_kernel`, numba), with the same values where the
confidences differ. Its order comes from one sort of packed keys
(:mod:`~fdbench.metrics._packed_order`) or, where the confidences take few values, by
counting (:mod:`~fdbench.metrics._counting_order`: the same order, no sort); both put the
samples of a tie group in position order, where ``np.argsort`` puts them in its sorting
network's order (not the same on every processor). A sum inside a tie group (weights that
are not whole numbers, soft residuals) may then differ in its last bits from the argsort
engine's: up to 9.3e-15 relative on 300,000 samples with tie groups of 30 to 3,000
(confidences rounded to 2 to 4 decimals); the NumPy walk under a stable ``np.argsort`` gives
the compiled walk's values bit for bit.

The result equals the argsort engine's bit for bit:

- Cumulative sums: ``np.cumsum`` adds one element after the other, so a block's sums, started
  with the previous block's last sum added to its first element, are the same numbers. The
  elementwise values (``r * w``, ``w * (1 - r)``, ``W - L``, ratios) are the same operations on
  the same operands.
- The totals (W_tot, F, TP_tot), which AP_f (error), FPR@TPR and the working points need
  before the walk, are the same sequential sums, taken while the weights are gathered.
- The dot products (AURC, AUGRC, AUROC_f, AP_f) are accumulated as ``np.einsum("ij,ij->i")``
  accumulates them (:class:`~fdbench.metrics._ordered_sums.RowDot`); minima and maxima are exact in
  any order; the first group reaching a coverage or TPR is found in the block where the
  (non-decreasing) cumulative sum first reaches it, as ``np.searchsorted`` finds it.
- The ECE's per-bin confidence sums are the same ``np.add.reduceat`` over the same array: the
  group weights times the thresholds are written, block by block, over the part of the weights'
  copy already walked (group g ends at sample >= g).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
from numpy.typing import ArrayLike

from fdbench.core.threads import beside, second_thread_allowed

from . import _blockwise_kernel as _kernel
from ._core import _TINY, _smallest_reaching, optimal_binary_unit
from ._counting_order import ValueGroups, binary_counts_by_value, count_values, few_values, place
from ._ordered_sums import RowDot
from ._packed_order import (
    descending_distinct,
    descending_distinct_numpy,
    descending_stable,
    descending_stable_unread,
)
from ._validation import _as_1d_float, rescale_weights
from ._valuesort import MAX_SAMPLES as VALUESORT_MAX_SAMPLES
from ._valuesort_kernel import COMPILED_MIN_SAMPLES as VALUESORT_MIN_SAMPLES
from .calibration import ece_mce_from_sums

#: Samples per block of the walk (a few hundred KB per array: cache-resident).
BLOCK = 1 << 15
#: Largest N the int32 order holds.
MAX_SAMPLES = int(np.iinfo(np.int32).max)
_N_BINS = 15


#: Samples from which ``evaluate_all``'s argsort engine (labels) ranks distinct confidences by
#: the compiled packed order (numba: ~0.5 s to load once per process).
RANK_PACKED_MIN_SAMPLES = 1 << 21
#: Samples from which it ranks them by the packed order's NumPy passes (below, ``np.argsort``
#: costs less than their fixed passes).
RANK_NUMPY_PACKED_MIN_SAMPLES = 1 << 16


def packed_descending(confidence: np.ndarray) -> np.ndarray | None:
    """``np.argsort(confidence)[::-1]`` of distinct float64 confidences from a sort of packed
    keys (:mod:`~fdbench.metrics._packed_order`: 1.6-2x faster than ``np.argsort`` where NumPy
    sorts values with SIMD), or ``None``: too few samples, another dtype or a tie (the caller
    arg-sorts). From :data:`RANK_PACKED_MIN_SAMPLES` samples by the compiled passes
    (:func:`~fdbench.metrics._packed_order.descending_distinct`) where they compile, else from
    :data:`RANK_NUMPY_PACKED_MIN_SAMPLES` by NumPy's
    (:func:`~fdbench.metrics._packed_order.descending_distinct_numpy`)."""
    if confidence.dtype != np.float64:
        return None
    kernels = _kernel.compiled_kernels() if confidence.size >= RANK_PACKED_MIN_SAMPLES else None
    if kernels is not None:
        return descending_distinct(np.ascontiguousarray(confidence), kernels)
    if confidence.size >= RANK_NUMPY_PACKED_MIN_SAMPLES:
        return descending_distinct_numpy(confidence)
    return None


def descending_order(confidence: np.ndarray) -> np.ndarray:
    """The argsort engine's descending order (:func:`~fdbench.metrics._core.rank`) as int32."""
    ascending = np.argsort(confidence)
    return ascending[::-1].astype(np.int32)


def compiled_inputs(
    residuals: ArrayLike,
    confidence: ArrayLike,
    sample_weight: ArrayLike | None,
    max_samples: int = MAX_SAMPLES,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, bool] | None:
    """``(residuals, confidence, weights, binary)`` as ``check_inputs`` and the 0/1 test of
    ``evaluate_all`` give them, from one compiled pass (``_blockwise_kernel._scan_inputs``),
    for ``_blockwise_kernel.MIN_SAMPLES`` to ``max_samples`` (at most :data:`MAX_SAMPLES`)
    samples. ``None`` where the pass does not apply (another size, weights that are not
    float64, kernels that do not compile here) or where an input needs ``check_inputs``,
    which then names the problem, drops zero weights or rescales weights at the ends of the
    float64 range."""
    r = _as_1d_float(residuals, "residuals")
    c = _as_1d_float(confidence, "confidence")
    if r.shape != c.shape or not _kernel.MIN_SAMPLES <= r.size <= min(max_samples, MAX_SAMPLES):
        return None
    w = None
    if sample_weight is not None:
        w = np.asarray(sample_weight)
        if w.dtype != np.float64 or w.shape != r.shape:
            return None
    kernels = _kernel.compiled_kernels()
    if kernels is None:
        return None
    found = np.empty(2)
    if not kernels.scan_inputs(r, c, np.empty(0) if w is None else w, w is not None, found):
        return None
    if w is not None and rescale_weights(np.array([found[1]]))[0] != found[1]:
        return None
    return r, c, w, bool(found[0])


def counted_binary_unit(
    residuals: ArrayLike, confidence: ArrayLike, max_samples: int = VALUESORT_MAX_SAMPLES
) -> tuple[np.ndarray, np.ndarray, dict[str, float]] | None:
    """:func:`~fdbench.metrics._valuesort.compiled_binary_unit`'s result, where the
    confidences take few values, from counts instead of a sort: one pass counts the samples
    and the failures of each distinct confidence
    (:func:`~fdbench.metrics._counting_order.binary_counts_by_value`), and the tie groups'
    cumulative W and L, in descending order, are the cumulative sums of those counts, the
    integers the value sort finds. The compiled walk's flush of every
    :data:`~fdbench.metrics._blockwise_kernel.CHUNK` groups
    (:func:`~fdbench.metrics._blockwise_kernel._walk_groups`) forms and sums each metric's
    terms from them as it does for weighted 0/1 residuals, and both equal the argsort
    engine's bit for bit, so the entries are the value sort's. ``None`` where this does not
    apply: the sizes of ``compiled_binary_unit``, a probe finding many values
    (:func:`~fdbench.metrics._counting_order.few_values`), more than
    :data:`~fdbench.metrics._counting_order.MOST_VALUES` values, kernels that do not compile
    here, or inputs that the value sort validates and refuses or passes on (soft residuals)."""
    r = np.ascontiguousarray(_as_1d_float(residuals, "residuals"))
    c = np.ascontiguousarray(_as_1d_float(confidence, "confidence"))
    n = r.size
    if r.shape != c.shape or not VALUESORT_MIN_SAMPLES <= n <= min(
        max_samples, VALUESORT_MAX_SAMPLES
    ):
        return None
    if not few_values(c):
        return None
    kernels = _kernel.compiled_kernels()
    if kernels is None:
        return None
    counted = binary_counts_by_value(r, c, kernels)
    if counted is None:
        return None
    thresholds, samples, failures = counted
    W = np.cumsum(samples).astype(np.float64)  # whole numbers below 2^53: exact
    L = np.cumsum(failures).astype(np.float64)
    n_fail = int(L[-1])
    walk = _CompiledWalk(_Totals(float(n), float(n_fail), float(n - n_fail)), True, W.size)
    weighted = np.empty(thresholds.size)
    kernels.walk_groups(
        W,
        L,
        thresholds,
        walk.params,
        walk.edges,
        np.empty((4, _kernel.GROUP_BUFFER)),
        np.empty((8, _kernel.CHUNK)),
        walk.state,
        walk.log,
        walk.ece_at,
        weighted,
    )
    kernels.sum_log(walk.log, walk.dots)
    parts = walk.entries(bool(thresholds[-1] >= 0 and thresholds[0] <= 1), weighted)
    if parts is None:
        return None
    # ties (the probe found some): the value sort's optimum, not its perfect-ranking case
    parts["aurc_opt"], parts["augrc_opt"] = optimal_binary_unit(n - n_fail, n_fail)
    return r, c, parts


def _sequential_total(values: np.ndarray, carry: float) -> float:
    """carry + values[0] + values[1] + ..., added in this order (``values`` is overwritten)."""
    values[0] += carry
    return float(np.cumsum(values, out=values)[-1])


def _integral(weights: np.ndarray) -> bool:
    """Every weight is a whole number (then W - L is the successes' weight exactly, as
    :func:`~fdbench.metrics._core.success_cumulative` decides)."""
    return all(
        bool(np.all(block == np.round(block)))
        for block in (weights[s : s + BLOCK] for s in range(0, weights.size, BLOCK))
    )


class _Totals:
    """W_tot, F and TP_tot, the last values of the argsort engine's cumulative sums."""

    def __init__(self, weight: float, loss: float = math.nan, success: float = math.nan):
        self.weight = weight
        self.loss = loss
        self.success = success


def _gather_weights(
    order: np.ndarray, r: np.ndarray, w: np.ndarray, binary: bool, success: bool
) -> tuple[np.ndarray, _Totals]:
    """The weights in ``order`` (0/1 residuals: the failures' negated) and the totals
    (TP_tot the successes' weight summed apart when ``success``, else W_tot - F)."""
    n = order.size
    out = np.empty(n)
    totals = _Totals(0.0, 0.0, 0.0)
    # a byte per sample: gathered through the order at a fraction of a float64 gather's cost
    failed = (r == 1).view(np.uint8) if binary else None
    for s in range(0, n, BLOCK):
        e = min(s + BLOCK, n)
        idx = order[s:e].astype(np.intp)
        wb = w.take(idx)
        out[s:e] = wb
        if failed is not None:
            fb = failed.take(idx).view(np.bool_)
            np.negative(wb, out=out[s:e], where=fb)
            # r * w and w * (1 - r) of 0/1 residuals: w or 0.0
            totals.loss = _sequential_total(np.where(fb, wb, 0.0), totals.loss)
            if success:
                totals.success = _sequential_total(np.where(fb, 0.0, wb), totals.success)
        totals.weight = _sequential_total(wb, totals.weight)
    if binary and not success:
        totals.success = totals.weight - totals.loss
    return out, totals


class _Walk:
    """Accumulators of one walk over the tie groups in descending order, fed a block of
    groups at a time; W_tot (and for 0/1 residuals F and TP_tot) known beforehand."""

    def __init__(self, n: int, totals: _Totals, binary: bool, success: bool, ece: bool) -> None:
        self.totals = totals
        self.binary = binary
        self.success = success
        self.groups = 0
        # W, L, TP of groups g0 - 2, g0 - 1, g0 .. g1 - 1 (W_{-1} = L_{-1} = 0); risks from g0 - 1
        size = min(BLOCK, n) + 2
        self.Wx = np.zeros(size)
        self.Lx = np.zeros(size)
        self.Tx = np.zeros(size)
        self.Rx = np.zeros(size - 1)
        self.aurc = RowDot()
        self.augrc = (RowDot(), RowDot())
        self.auroc = (RowDot(), RowDot())
        self.ap_success = RowDot()
        self.ap_error = RowDot()
        self.head = math.nan
        self.reach_w = _smallest_reaching(totals.weight, 0.95)
        self.risk_at = math.nan
        self.risk_mins: list[float] = []
        self.covered = 0.0
        self.tp_reach: dict[float, float] = {}
        if binary and totals.success > 0:
            self.tp_reach = {t: _smallest_reaching(totals.success, t) for t in (0.95, 0.80)}
        self.tp_loss: dict[float, float] = {}
        self.edges = (np.arange(_N_BINS + 1) / _N_BINS).tolist()[1:-1] if ece else []
        self.ece_at: dict[int, tuple[int, float, float]] = {}

    def buffers(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where the next m groups' W, L and TP go before :meth:`feed`."""
        return self.Wx[2 : 2 + m], self.Lx[2 : 2 + m], self.Tx[2 : 2 + m]

    def feed(self, m: int, tau: np.ndarray, weighted: np.ndarray | None) -> None:
        """Account for the m groups (thresholds ``tau``) written to :meth:`buffers`; with
        ``weighted``, write their weight times threshold to it at the groups' indices."""
        g0 = self.groups
        skip = 1 if g0 == 0 else 0
        Wx, Lx, Rx = self.Wx[: m + 2], self.Lx[: m + 2], self.Rx[: m + 1]
        W, L = Wx[2:], Lx[2:]
        risks = np.divide(L, W, out=Rx[1:])
        if g0 == 0:
            self.head = float(L[0])
        # AURC's coefficients W_{g+1} - W_{g-1} of groups g0 - 1 .. g1 - 2 (the last at finish)
        self.aurc.feed(Wx[2 + skip :] - Wx[skip:m], Rx[skip:m])
        n = W - Wx[1:-1]
        self.augrc[0].feed(n, L)
        self.augrc[1].feed(n[skip:], Lx[1 + skip : -1])
        if self.binary:
            self._feed_binary(m, skip)
            if weighted is not None:
                np.multiply(n, tau, out=weighted[g0 : g0 + m])
                self._ece_bounds(m, tau)
        if self.risk_mins:
            self.risk_mins.append(float(risks.min()))
        elif W[-1] >= self.reach_w:
            j = int(np.searchsorted(W, self.reach_w, side="left"))
            self.risk_at = float(L[j] / W[j])
            self.risk_mins.append(float(risks[j:].min()))
        sr = risks if W[0] >= _TINY else L / np.maximum(W, _TINY)
        acceptable = sr <= 0.05
        if acceptable.any():
            self.covered = float(W[m - 1 - int(np.argmax(acceptable[::-1]))])
        self.groups = g0 + m
        for buf in (self.Wx, self.Lx, self.Tx):
            buf[:2] = buf[m : m + 2]
        self.Rx[0] = Rx[m]

    def _feed_binary(self, m: int, skip: int) -> None:
        Wx, Lx = self.Wx[: m + 2], self.Lx[: m + 2]
        W, L = Wx[2:], Lx[2:]
        loss = L - Lx[1:-1]
        tpx = Wx[1:] - Lx[1:]
        tp = tpx[1:]
        self.auroc[0].feed(loss, tp)
        self.auroc[1].feed(loss[skip:], tpx[skip:m])
        self.ap_success.feed(tp - tpx[:-1], tp / np.maximum(W, _TINY))
        below = self.totals.weight - Wx[1 + skip : -1]
        np.maximum(below, _TINY, out=below)
        precision = self.totals.loss - Lx[1 + skip : -1]
        np.divide(precision, below, out=precision)
        self.ap_error.feed(loss[skip:], precision)
        success = self.Tx[2 : 2 + m] if self.success else tp
        for tpr, x in self.tp_reach.items():
            if tpr not in self.tp_loss and success[-1] >= x:
                self.tp_loss[tpr] = float(L[int(np.searchsorted(success, x, side="left"))])

    def _ece_bounds(self, m: int, tau: np.ndarray) -> None:
        """For each inner bin edge e: the number of groups above e and W, L at the last."""
        for k, edge in enumerate(self.edges):
            if k not in self.ece_at and tau[-1] <= edge:
                above = int(np.count_nonzero(tau > edge))
                if above:
                    at = (float(self.Wx[1 + above]), float(self.Lx[1 + above]))
                else:
                    at = (float(self.Wx[1]), float(self.Lx[1]))
                self.ece_at[k] = (self.groups + above, *at)

    def finish(self) -> None:
        """Feed the last group's AURC term (coefficient W_{T-1} - W_{T-2})."""
        self.aurc.feed(np.array([self.Wx[1] - self.Wx[0]]), self.Rx[:1].copy())


def _ece_mce(
    groups: int,
    totals: _Totals,
    ece_at: dict[int, tuple[int, float, float]],
    weighted: np.ndarray,
) -> tuple[float, float]:
    """ECE and MCE of :func:`~fdbench.metrics.calibration.bin_sums_sorted` (15 bins) from the
    walk's bin bounds ``ece_at`` (inner edge -> the number of groups above it and W, L at the
    last of them) and the group terms n_g tau_g in ``weighted``."""
    t, total, fails = groups, totals.weight, totals.loss
    at = [ece_at.get(k, (t, total, fails)) for k in range(_N_BINS - 1)]
    bounds = np.array([t, *(a[0] for a in at), 0])
    w_at = np.array([total, *(a[1] for a in at), 0.0])
    l_at = np.array([fails, *(a[2] for a in at), 0.0])
    count = w_at[:-1] - w_at[1:]
    fail = l_at[:-1] - l_at[1:]
    conf = np.zeros(_N_BINS)
    filled = np.flatnonzero(bounds[:-1] > bounds[1:])
    starts = bounds[1:][filled]
    conf[filled] = np.add.reduceat(weighted[:t], starts[::-1])[::-1]
    ece_value, mce_value = ece_mce_from_sums(count, count - fail, conf)
    return float(ece_value), float(mce_value)


def _entries(
    dots: list[float],
    head: float,
    totals: _Totals,
    fails: float,
    tp_loss: dict[float, float],
    binary: bool,
) -> dict[str, float]:
    """AURC, AUGRC and, for 0/1 residuals, AUROC_f, AP_f and FPR@TPR from the walk's dot
    products (in the order of :mod:`~fdbench.metrics._blockwise_kernel`'s rows: AURC, AUGRC,
    AUGRC's previous-loss terms, AUROC_f, its previous-group terms, AP_f success, AP_f
    error), the first group's loss ``head`` and the loss at the first group reaching each TPR
    (``tp_loss``, the total ``fails`` where none does)."""
    total = totals.weight
    out: dict[str, float] = {}
    out["aurc"] = 0.5 * (dots[_kernel.AURC] + head) / total
    out["augrc"] = 0.5 * (dots[_kernel.AUGRC] + dots[_kernel.AUGRC_PREV]) / (total * total)
    if binary:
        positives = (total - fails) * fails
        area = 0.5 * (dots[_kernel.AUROC] + dots[_kernel.AUROC_PREV])
        out["auroc_f"] = area / positives if positives > 0 else math.nan
        ok = total - fails
        out["ap_f_success"] = dots[_kernel.AP_SUCCESS] / ok if ok > 0 else math.nan
        ap_err = dots[_kernel.AP_ERROR] + head * fails / total
        out["ap_f_error"] = ap_err / fails if fails > 0 else math.nan
        for tpr in (0.95, 0.80):
            defined = totals.success > 0 and fails > 0
            value = tp_loss.get(tpr, fails) / fails if defined else math.nan
            out[f"fpr@{round(tpr * 100)}tpr"] = value
    return out


def _compiled_suite(
    r: np.ndarray,
    c: np.ndarray,
    w: np.ndarray | None,
    binary: bool,
    optimum: Callable[[], tuple[float, float]] | None = None,
) -> dict[str, float] | None:
    """:func:`blockwise_suite` by the compiled walk of
    :mod:`~fdbench.metrics._blockwise_kernel` in the stable descending order (the same values
    bit for bit, that module says why; with ties, those of the order that keeps each tie
    group's samples in position order: the module docstring), or ``None`` where it does not
    apply: numba's sums differ from this NumPy's ``einsum``, or whole-number weights whose
    total exceeds 2^53 (W - L inexact). The order comes by counting where the confidences take
    few values (:mod:`~fdbench.metrics._counting_order`), else from a sort of packed keys
    (:mod:`~fdbench.metrics._packed_order`). ``optimum`` runs beside the rest
    (:func:`fdbench.core.threads.beside`): from the start where counting is tried, else once
    the packed keys are freed."""
    kernels = _kernel.compiled_kernels()
    if kernels is None:
        return None
    c = np.ascontiguousarray(c)
    few = few_values(c)
    # counting keeps no packed keys: the optimum's temporaries fit beside it at once; that of
    # weighted 0/1 residuals (two dot products) has none, and that of soft residuals (a
    # sorted copy; with weights an order and a sort of keys of their own) fits beside the
    # keys up to OPTIMUM_AT_ONCE_MAX_SAMPLES: all are started before the sort, so that the
    # second thread is free for the walk's second segment, or (weighted soft residuals, the
    # longest optimum) works through the sort too
    small = c.size <= OPTIMUM_AT_ONCE_MAX_SAMPLES
    unit = w is None and not binary and small
    at_once = few or (binary and w is not None) or (not binary and small)
    pending = beside(optimum) if optimum is not None and at_once else None
    try:
        counted = count_values(c, kernels) if few else None
        if counted is not None:
            out = _compiled_walk(r, c, w, binary, kernels, None, counted)
        else:
            if pending is not None and few:
                pending.result()  # done, its temporaries freed, before the keys are made
            order, unread = descending_stable_unread(c, kernels)
            if pending is None and optimum is not None:
                pending = beside(optimum)
            elif pending is not None and unit:
                pending.result()  # a few ms at most: then the walk takes both threads
            free = second_thread_allowed() and (pending is None or pending.done())
            try:
                out = _compiled_walk(r, c, w, binary, kernels, order, None, unread, free)
            except _Unordered:
                del order
                order = descending_stable(c, kernels)
                out = _compiled_walk(r, c, w, binary, kernels, order, split_walk=free)
    finally:
        optimal = pending.result() if pending is not None else None
    if out is not None and optimal is not None:
        out["aurc_opt"], out["augrc_opt"] = optimal
    return out


class _Unordered(Exception):
    """The order of :func:`~fdbench.metrics._packed_order.descending_stable_unread` was not
    descending."""


def _compiled_walk(
    r: np.ndarray,
    c: np.ndarray,
    w: np.ndarray | None,
    binary: bool,
    kernels: SimpleNamespace,
    order: np.ndarray | None,
    counted: ValueGroups | None = None,
    unread: bool = False,
    split_walk: bool = False,
) -> dict[str, float] | None:
    """:func:`_compiled_suite` from the stable descending ``order`` on, or from the tie groups
    ``counted`` (:func:`~fdbench.metrics._counting_order.count_values`), in whose order the
    weights (0/1 residuals: the failures' negated) are placed without a gather and the walk
    reads the groups' thresholds instead of the confidences; the order itself is made only
    where the walk gathers soft residuals. ``unread``: runs of ``order`` were left unread
    (:func:`~fdbench.metrics._packed_order.descending_stable_unread`), and
    :class:`_Unordered` is raised where the walk finds a confidence above the one before.
    ``split_walk``: the second thread is free; weighted 0/1 residuals and soft residuals
    without weights in ``order`` are then walked in two segments at once from
    :data:`SPLIT_MIN_SAMPLES` on
    (:func:`~fdbench.metrics._blockwise_kernel._walk`, roles 1 and 2; the same values)."""
    n = c.size
    mode = _kernel.SOFT if w is None else _kernel.BINARY if binary else _kernel.SOFT_WEIGHTED
    failed = (r == 1).view(np.uint8) if binary and w is not None else None
    sums = np.empty(4)
    splits = split_walk and counted is None and mode != _kernel.SOFT_WEIGHTED
    split = _split_group(n) if splits else 0
    # what the second segment reads besides the walk's arguments (weighted 0/1 residuals)
    weights, flags, checkpoints = np.empty(0), np.empty(0, dtype=np.uint8), np.empty((0, 3))
    if counted is not None:
        order, placed = place(
            counted,
            kernels,
            order=mode != _kernel.BINARY,
            weights=None if w is None else np.ascontiguousarray(w),
            failed=failed,
        )
        del failed
        wo = np.empty(0) if placed is None else placed
        if placed is not None:
            kernels.signed_totals(placed, binary, sums)
    elif w is not None:
        assert order is not None
        wo = np.empty(n + 1)  # one more: the second segment's ECE terms end one further on
        failed_out = np.empty(n if binary else 0, dtype=np.uint8)
        flags = np.empty(0, dtype=np.uint8) if failed is None else failed
        weights = np.ascontiguousarray(w)
        checkpoints = np.empty((n // _kernel.GATHER + 1 if split else 0, 3))
        kernels.gather_weights(order, weights, flags, binary, wo, failed_out, sums, checkpoints)
        del failed, failed_out
    else:
        wo = np.empty(0)
    success = False
    if w is None:
        totals = _Totals(float(n))
    else:
        totals = _Totals(float(sums[0]), float(sums[1]), float(sums[2]))
        success = binary and sums[3] == 0.0
        if binary and not success:
            if totals.weight > _kernel.MAX_EXACT_TOTAL:
                return None
            totals.success = totals.weight - totals.loss
    walk = _CompiledWalk(totals, binary, n)
    walk.state[_kernel.RISING] = 1.0 if unread else 0.0
    if counted is not None:
        ends, thresholds = counted.ends, counted.thresholds
        low, high = thresholds[-1], thresholds[0]
    else:
        assert order is not None
        ends, thresholds = np.empty(0, dtype=np.int64), np.empty(0)
        low, high = c[order[-1]], c[order[0]]
    args = (
        np.empty(0, dtype=np.int32) if order is None else order,
        c,
        ends,
        thresholds,
        np.ascontiguousarray(r),
        wo,
        mode,
        success,
        walk.params,
        walk.edges,
    )

    if split:
        second = walk.state.copy()
        sources = (weights, flags, checkpoints)
        later = beside(_walk_segment, kernels, args, walk, second, split, 2, sources)
        _walk_segment(kernels, args, walk, walk.state, split, 1)
        shift = later.result()
        if shift >= 0:
            _join_segments(walk.state, second)
            if mode == _kernel.BINARY:  # the second segment's ECE terms to their groups
                groups = int(walk.state[_kernel.GROUPS])
                kernels.move_left(wo, split, split + shift, groups - split)
    else:
        _walk_segment(kernels, args, walk, walk.state, 0, 0)
    if walk.state[_kernel.RISING] > 0:
        raise _Unordered
    del order, args, weights, flags, checkpoints
    kernels.sum_log(walk.log, walk.dots)
    return walk.entries(binary and low >= 0 and high <= 1, wo)


def _walk_segment(
    kernels: SimpleNamespace,
    args: tuple,
    walk: _CompiledWalk,
    state: np.ndarray,
    split: int,
    role: int,
    sources: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> int:
    """The compiled walk (``args``: its arguments up to the ECE's edges) in ``role`` 0, 1 or
    2 with buffers of its own, into ``state`` and ``walk``'s log and bin bounds (rows apart
    in two segments); ``sources``: the weights, failures' flags and checkpoints role 2
    reads."""
    if sources is None:
        sources = (np.empty(0), np.empty(0, dtype=np.uint8), np.empty((0, 3)))
    buffers = (
        np.empty((4, _kernel.GROUP_BUFFER)),
        np.empty((8, _kernel.CHUNK)),
        np.empty((2, _kernel.GATHER + 1)),
    )
    return int(kernels.walk(*args, *buffers, state, walk.log, walk.ece_at, split, role, *sources))


#: Most soft residuals whose optimum is computed during the packed sort of the confidences
#: (peak memory 2.5x the confidences at 10^6 without weights, 3.8x with weights).
OPTIMUM_AT_ONCE_MAX_SAMPLES = 1 << 20

#: Fewest samples (weighted 0/1 or soft residuals without weights) whose walk is split in
#: two segments on two threads, and the share of the groups the first segment walks (the
#: second also reads the confidences before its first group, to count the groups).
SPLIT_MIN_SAMPLES = 1 << 18
_SPLIT_SHARE = 0.58


def _split_group(n: int) -> int:
    """The group at which the walk of ``n`` samples is split (a multiple of the chunk), or 0
    where it is not."""
    if n < max(SPLIT_MIN_SAMPLES, 2 * _kernel.CHUNK):
        return 0
    return max(1, round(n * _SPLIT_SHARE / _kernel.CHUNK)) * _kernel.CHUNK


def _join_segments(first: np.ndarray, second: np.ndarray) -> None:
    """The walk's state after both segments, in ``first``: what the groups after the split
    found where the groups before it had not (the first group reaching 95 % of the weight,
    or a TPR), the working point's minimum over both, the last group of risk <= 0.05 where
    the second found one, and the counts, the edge reached and the losses at the end from
    the second. Each is the value of the walk in one segment: the running sums are the same
    and W, TP only grow, so a search done in the first stays done in the second."""
    k = _kernel
    if first[k.FOUND_W]:
        a, b = first[k.WORKING], second[k.WORKING]
        first[k.WORKING] = a if a != a else b if b != b else min(a, b)
    elif second[k.FOUND_W]:
        first[[k.FOUND_W, k.RISK_AT, k.WORKING]] = second[[k.FOUND_W, k.RISK_AT, k.WORKING]]
    for found, slot in ((k.FOUND_95, k.LOSS_95), (k.FOUND_80, k.LOSS_80)):
        if not first[found] and second[found]:
            first[[found, slot]] = second[[found, slot]]
    if second[k.COVERED] != 0.0:
        first[k.COVERED] = second[k.COVERED]
    first[[k.GROUPS, k.EDGE, k.FAILS]] = second[[k.GROUPS, k.EDGE, k.FAILS]]
    if first[k.RISING] != 0.0:
        first[k.RISING] = max(first[k.RISING], second[k.RISING])


class _CompiledWalk:
    """What the compiled walk (:func:`~fdbench.metrics._blockwise_kernel._walk` or
    :func:`~fdbench.metrics._blockwise_kernel._walk_groups`) reads and fills for the totals
    W_tot, F and TP_tot: ``params``, the ECE's inner ``edges``, ``state``, the chunk sums'
    ``log`` (added into ``dots`` by the kernels' ``sum_log``) and ``ece_at``;
    :meth:`entries` makes the suite's entries of them."""

    def __init__(self, totals: _Totals, binary: bool, groups: int) -> None:
        self.totals = totals
        self.binary = binary
        tp_reach = binary and totals.success > 0
        reach = [_smallest_reaching(totals.success, t) if tp_reach else 0.0 for t in (0.95, 0.80)]
        self.params = np.array(
            [totals.weight, totals.loss, _smallest_reaching(totals.weight, 0.95), *reach, tp_reach]
        )
        self.edges = np.array((np.arange(_N_BINS + 1) / _N_BINS).tolist()[1:-1])
        self.state = np.zeros(_kernel.STATE_SIZE)
        unset = [_kernel.HEAD, _kernel.RISK_AT, _kernel.WORKING, _kernel.LOSS_95, _kernel.LOSS_80]
        self.state[unset] = math.nan
        self.state[_kernel.EDGE] = self.edges.size - 1
        self.dots = np.zeros(7)
        self.log = np.zeros((groups // _kernel.CHUNK + 2, 7))
        self.ece_at = np.empty((self.edges.size, 3))

    def entries(self, ece: bool, weighted: np.ndarray) -> dict[str, float] | None:
        """The entries of :func:`blockwise_suite` but the optimum's (``ece``: whether the
        confidences lie in [0, 1]; ``weighted``: the group terms n_g * tau_g the walk wrote),
        or ``None`` where 95 % of the weight was never reached (a sum rounded short)."""
        state, totals, binary = self.state, self.totals, self.binary
        if not state[_kernel.FOUND_W]:
            return None
        fails = float(state[_kernel.FAILS])
        tp_loss = {
            tpr: float(state[slot])
            for tpr, slot, found in (
                (0.95, _kernel.LOSS_95, _kernel.FOUND_95),
                (0.80, _kernel.LOSS_80, _kernel.FOUND_80),
            )
            if state[found]
        }
        out = _entries(
            self.dots.tolist(), float(state[_kernel.HEAD]), totals, fails, tp_loss, binary
        )
        if binary and ece:
            set_from = int(state[_kernel.EDGE]) + 1
            bounds = {
                k: (int(self.ece_at[k, 0]), float(self.ece_at[k, 1]), float(self.ece_at[k, 2]))
                for k in range(set_from, self.edges.size)
            }
            out["ece"], out["mce"] = _ece_mce(int(state[_kernel.GROUPS]), totals, bounds, weighted)
        elif binary:
            out["ece"] = out["mce"] = math.nan
        out["risk@95cov"] = float(state[_kernel.WORKING])
        out["selective_risk@95cov"] = float(state[_kernel.RISK_AT])
        out["coverage@risk5"] = float(state[_kernel.COVERED]) / totals.weight
        out["mean_residual"] = fails / totals.weight
        return out


def blockwise_suite(
    residuals: np.ndarray,
    confidence: np.ndarray,
    weights: np.ndarray | None,
    binary: bool,
    optimum: Callable[[], tuple[float, float]] | None = None,
) -> dict[str, float]:
    """The ranking, curve and calibration entries of ``evaluate_all`` for weighted 0/1 or
    soft residuals (no labels), equal to the argsort engine's bit for bit (compiled, with
    ties: to the engine's under a stable ``np.argsort``, see the module docstring): ``aurc``,
    ``augrc``, ``risk@95cov``, ``selective_risk@95cov``, ``coverage@risk5``,
    ``mean_residual`` and, for 0/1 residuals (``binary``, with ``weights``), ``auroc_f``,
    ``ap_f_success``, ``ap_f_error``, ``fpr@95tpr``, ``fpr@80tpr``, ``ece`` and ``mce``.

    ``optimum`` (the optimal CSF's AURC and AUGRC, by the caller's function) adds
    ``aurc_opt`` and ``augrc_opt`` where the compiled walk runs: computed beside it on a
    second thread where :func:`fdbench.core.threads.beside` allows (its value is the same;
    its temporaries then live beside the walk's int32 order, not beside the packed sort's
    keys). Without them the caller computes the optimum after this returns, when the NumPy
    walk's order and blocks are freed."""
    r, c, w = residuals, confidence, weights
    n = c.size
    if n >= _kernel.MIN_SAMPLES:
        compiled = _compiled_suite(r, c, w, binary, optimum)
        if compiled is not None:
            return compiled
    order = descending_order(c)
    success = binary and w is not None and not _integral(w)
    if w is None:
        wo, totals = None, _Totals(float(n))
    else:
        wo, totals = _gather_weights(order, r, w, binary, success)
    ece = binary and wo is not None and c[order[-1]] >= 0 and c[order[0]] <= 1
    walk = _Walk(n, totals, binary, success, ece)
    cx = np.empty(min(BLOCK, n) + 1)
    samples = [np.empty(min(BLOCK, n)) for _ in range(3 if success else 2)]
    carry_w = carry_l = carry_t = 0.0
    for s in range(0, n, BLOCK):
        e = min(s + BLOCK, n)
        m = e - s
        idx = order[s : min(e + 1, n)].astype(np.intp)
        cb = c.take(idx, out=cx[: idx.size])
        if e == n:
            cx[m] = math.nan
            cb = cx[: m + 1]
        change = cb[1:] != cb[:-1]
        ends = None if change.all() else np.flatnonzero(change)
        k = m if ends is None else ends.size
        groups = walk.buffers(k)
        if ends is None:
            Ws, Ls, Ts = groups
        else:
            Ws, Ls = samples[0][:m], samples[1][:m]
            Ts = samples[2][:m] if success else groups[2]
        if w is None:
            Ws[:] = np.arange(s + 1.0, e + 1.0)
            r.take(idx[:m], out=Ls)
        elif binary:
            assert wo is not None
            wv = wo[s:e]
            np.abs(wv, out=Ws)
            np.negative(wv, out=Ls)
            np.maximum(Ls, 0.0, out=Ls)
            if success:
                np.maximum(wv, 0.0, out=Ts)
                carry_t = _sequential_total(Ts, carry_t)
        else:
            assert wo is not None
            Ws[:] = wo[s:e]
            r.take(idx[:m], out=Ls)
            Ls *= Ws
        if w is not None:
            carry_w = _sequential_total(Ws, carry_w)
        carry_l = _sequential_total(Ls, carry_l)
        if ends is None:
            tau = cb[:m]
        else:
            for source, target in zip((Ws, Ls, Ts)[: 3 if success else 2], groups, strict=False):
                np.take(source, ends, out=target)
            tau = cb[ends]
        if k:
            walk.feed(k, tau, wo if ece else None)
    walk.finish()
    del order
    dots = [
        walk.aurc.total(),
        walk.augrc[0].total(),
        walk.augrc[1].total(),
        walk.auroc[0].total(),
        walk.auroc[1].total(),
        walk.ap_success.total(),
        walk.ap_error.total(),
    ]
    out = _entries(dots, walk.head, totals, carry_l, walk.tp_loss, binary)
    if ece:
        assert wo is not None
        out["ece"], out["mce"] = _ece_mce(walk.groups, totals, walk.ece_at, wo)
    elif binary:
        out["ece"] = out["mce"] = math.nan
    out["risk@95cov"] = float(np.min(walk.risk_mins))
    out["selective_risk@95cov"] = walk.risk_at
    out["coverage@risk5"] = walk.covered / totals.weight
    out["mean_residual"] = carry_l / totals.weight
    return out


def unit_optimum(residuals: np.ndarray) -> tuple[float, float]:
    """AURC and AUGRC of the optimal CSF for residuals without weights, as
    ``optimal_from_unit_cumulative(np.cumsum(np.sort(residuals)))`` computes them
    (:func:`~fdbench.metrics._core.optimal_from_unit_cumulative`), with one array of N floats:
    every sample is its own step (W_g = g + 1), so AURC's coefficients are 2 but the last (1)
    and AUGRC's weights are 1."""
    losses = np.sort(residuals)
    n = losses.size
    total = float(n)
    kernels = _kernel.compiled_kernels() if n >= _kernel.MIN_SAMPLES else None
    if kernels is not None:
        sums = np.empty(4)
        kernels.unit_optimum(losses, np.empty((2, _kernel.CHUNK)), sums)
        aurc_sum, augrc_sum, shifted_sum, head = sums.tolist()
        return 0.5 * (aurc_sum + head) / total, 0.5 * (augrc_sum + shifted_sum) / (total * total)
    aurc, augrc, shifted = RowDot(), RowDot(), RowDot()
    carry = 0.0
    for s in range(0, n, BLOCK):
        e = min(s + BLOCK, n)
        L = losses[s:e]
        before = carry
        carry = _sequential_total(L, carry)
        coef = np.full(e - s, 2.0)
        if e == n:
            coef[-1] = 1.0
        aurc.feed(coef, L / np.arange(s + 1.0, e + 1.0))
        ones = np.ones(e - s)
        augrc.feed(ones, L)
        if s:
            previous = np.empty(e - s)
            previous[0] = before
            previous[1:] = L[:-1]
            shifted.feed(ones, previous)
        else:
            shifted.feed(ones[1:], L[:-1])
    aurc_opt = 0.5 * (aurc.total() + float(losses[0])) / total
    augrc_opt = 0.5 * (augrc.total() + shifted.total()) / (total * total)
    return aurc_opt, augrc_opt
