"""The suite of 0/1 residuals without weights from a value sort: no permutation, no gather.

The argsort engine (:mod:`fdbench.metrics._core`) sorts the indices of the confidences and
gathers the residuals through that order. For 0/1 residuals without weights nothing but the
values is needed: the confidences are sorted by value (``np.sort``, several times faster than
``np.argsort``), the failures' confidences sorted apart, and each failure is placed in its tie
group with a binary search inside a block of groups that fits in the cache. The tie groups are
then walked in blocks of :data:`BLOCK` groups, producing the cumulative weight W (the group's
last position + 1) and loss L (failures at or above it) of each group, exactly the integers the
argsort engine holds, and every metric is accumulated from them.

The result equals the argsort engine's bit for bit. The metrics whose sums are integers (AUGRC,
AUROC_f, the ECE bin counts) are exact in any order. The others (AURC, AP_f, the ECE bin
confidences) are sums of rounded terms; they are accumulated in the same order as the argsort
engine's NumPy calls (:mod:`~fdbench.metrics._ordered_sums`): :class:`RowDot` reproduces
``np.einsum("ij,ij->i")``, which adds the products in chunks of NumPy's default buffer size
(8,192 elements, whatever :func:`numpy.setbufsize` says) and the chunks one after another, and
:func:`pairwise` reproduces the pairwise summation of ``np.add.reduce`` (and of each segment
of ``np.add.reduceat``, which adds the segment's first element to the pairwise sum of the
rest).
Memory: the sorted confidences (N floats), the failures' (F floats; the compiled passes sort
the smaller class, at most N/2) and, with ties, the ends of the tie groups (T int32) besides
arrays of :data:`BLOCK` elements.

From :data:`~fdbench.metrics._valuesort_kernel.COMPILED_MIN_SAMPLES` samples on
(:func:`compiled_binary_unit`, taken by ``evaluate_all`` before ``check_inputs``) the passes
after the two sorts are compiled (:mod:`fdbench.metrics._valuesort_kernel`: the input checks
and the failures' extraction in one pass, the tie groups by a scan, the walk with the failures
placed by a merge and the sums of rounded terms in ``np.einsum``'s order), with the same
values bit for bit; below it numba's first call (~2.3 s) would outweigh the gain.
"""

from __future__ import annotations

import bisect
import functools
import math
import operator
from collections.abc import Callable
from types import SimpleNamespace
from typing import NamedTuple, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from fdbench.core.threads import beside, second_thread_allowed

from . import _valuesort_kernel as kernel
from ._core import _smallest_reaching, optimal_binary_unit
from ._ordered_sums import RowDot, pairwise
from ._packed_order import DESCENDING, UNSORTED
from ._validation import _as_1d_float
from ._valuesort_kernel import COMPILED_MIN_SAMPLES, compiled
from .calibration import ece_mce_from_sums

#: Tie groups per block of the walk (a few hundred KB per array: cache-resident).
BLOCK = 1 << 16
#: Largest N for which the integer sums of AUGRC and AUROC (< N^2) stay exact in float64.
MAX_SAMPLES = 1 << 26
#: The share of the groups the calling thread's segment of the walk gives up to the other's,
#: for the ECE's bin sums it computes after its segment (about a fifth of the walk's time).
ALONGSIDE_SHARE = 0.1

_T = TypeVar("_T")


def _descending(values: np.ndarray) -> np.ndarray:
    """A contiguous copy of ``values`` sorted in descending order (negation is exact)."""
    d = np.negative(values)
    d.sort()
    return np.negative(d, out=d)


def _group_ends(d: np.ndarray) -> np.ndarray | None:
    """Positions of the last sample of each tie group of descending ``d`` (int32 where they
    fit); ``None`` when no two values are equal."""
    n = d.size
    if n == 1:
        return None
    steps = [(p, min(p + BLOCK, n - 1)) for p in range(0, n - 1, BLOCK)]
    changes = sum(int(np.count_nonzero(d[p + 1 : q + 1] != d[p:q])) for p, q in steps)
    if changes == n - 1:
        return None
    dtype = np.int32 if n < 2**31 else np.intp
    ends = np.empty(changes + 1, dtype=dtype)
    at = 0
    for p, q in steps:
        block = np.flatnonzero(d[p + 1 : q + 1] != d[p:q])
        block += p
        ends[at : at + block.size] = block
        at += block.size
    ends[-1] = n - 1
    return ends


def _first_at_least(values: np.ndarray, x: float) -> int:
    """First index with ``values`` >= x (non-decreasing ``values``), or ``values.size``."""
    return int(np.searchsorted(values, x, side="left"))


def binary_unit_suite(residuals: np.ndarray, confidence: np.ndarray) -> dict[str, float]:
    """The ranking, curve and calibration entries of ``evaluate_all`` for 0/1 ``residuals``
    without weights (N <= :data:`MAX_SAMPLES`), equal to the argsort engine's bit for bit:
    ``aurc``, ``augrc``, ``aurc_opt``, ``augrc_opt``, ``auroc_f``, ``ap_f_success``,
    ``ap_f_error``, ``fpr@95tpr``, ``fpr@80tpr``, ``ece``, ``mce``, ``risk@95cov``,
    ``selective_risk@95cov``, ``coverage@risk5`` and ``mean_residual``.
    """
    failed = residuals == 1
    c_fail = confidence[failed]
    del failed
    c_fail.sort()
    d = _descending(confidence)
    ends = _group_ends(d)
    n_groups = d.size if ends is None else ends.size
    walk = _walk(d, ends, c_fail, n_groups)
    return _suite(d, ends, c_fail, c_fail.size, walk, n_groups)


def compiled_binary_unit(
    residuals: ArrayLike, confidence: ArrayLike, max_samples: int = MAX_SAMPLES
) -> tuple[np.ndarray, np.ndarray, dict[str, float]] | None:
    """``(residuals, confidence, binary_unit_suite(residuals, confidence))`` as float64 arrays,
    by the compiled passes (:mod:`fdbench.metrics._valuesort_kernel`), which also validate
    the inputs in one pass; ``None`` where they do not apply (fewer than
    :data:`~fdbench.metrics._valuesort_kernel.COMPILED_MIN_SAMPLES` or more than
    ``max_samples`` (at most :data:`MAX_SAMPLES`) samples, numba missing, a residual other
    than 0/1, or an input that ``check_inputs`` refuses, which then names the problem).

    The smaller class is sorted apart and placed in the tie groups: the failures, or the
    successes where they are fewer (a group's loss is then its size less its successes), so
    that the second sort is of at most N/2 values."""
    r = _as_1d_float(residuals, "residuals")
    c = _as_1d_float(confidence, "confidence")
    if r.shape != c.shape or not COMPILED_MIN_SAMPLES <= r.size <= min(max_samples, MAX_SAMPLES):
        return None
    if not compiled.cache_info().currsize and not bool(np.all((r == 0) | (r == 1))):
        return None  # numba not loaded yet: not for residuals that will not take this path
    K = compiled()
    if K is None or BLOCK % kernel.CHUNK:
        return None
    # confidences already in order need no sort (a pass that stops at once on unsorted data)
    shape = K.monotone(c) if c.flags.c_contiguous else UNSORTED
    probe = r[:: max(1, r.size // 64)]  # soft residuals are not worth a sort on the side
    threaded = second_thread_allowed() and bool(np.all((probe == 0) | (probe == 1)))
    # the sort on the second thread counts the value changes too, while this one extracts
    sorting = beside(_sorted_changes, c, K) if threaded and shape == UNSORTED else None
    if sorting is None:  # the failures to the front of a buffer, the successes from its back
        buffer = np.empty(c.size)
        n_fail = K.binary_failures(r, c, buffer)
        if n_fail > c.size - n_fail:
            c_minor = buffer[n_fail:][::-1].copy()
        else:
            c_minor = buffer[: max(n_fail, 0)].copy()
        del buffer
    else:  # the sort's copy of N is alive: the failures counted first, then the class taken
        n_fail = K.count_failures(r, c)
        n_minor = min(n_fail, c.size - n_fail)
        c_minor = np.empty(max(n_minor, 0) + 1)
        if n_fail >= 0:
            K.extract_class(r, c, 0.0 if n_minor < n_fail else 1.0, c_minor)
        c_minor = c_minor[:-1]
    if n_fail < 0:
        if sorting is not None:
            sorting.result()
        return None
    optimum = optimal_binary_unit(c.size - n_fail, n_fail)  # while the sort runs beside
    if shape == UNSORTED:
        c_minor.sort()
        if sorting is None:
            ascending, changes = _sorted_changes(c, K)
        else:
            ascending, changes = sorting.result()
    else:
        if shape == DESCENDING:  # the class was taken in sample order
            c_minor = c_minor[::-1].copy()
            ascending = c[::-1].copy()
        else:
            ascending = c
        changes = K.count_changes(ascending)
    d = ascending[::-1]
    ends = None
    if changes < d.size - 1:
        ends = np.empty(changes + 1, dtype=np.int32)
        K.fill_group_ends(d, ends)
    n_groups = d.size if ends is None else ends.size
    ece = functools.partial(_ece_mce, d, ends, c_minor, n_fail, n_groups, K.group_terms)
    walk, ece_mce = _walk_compiled(K, ascending, ends, c_minor, n_fail, n_groups, ece)
    suite = _suite(d, ends, c_minor, n_fail, walk, n_groups, ece_mce=ece_mce, optimum=optimum)
    return r, c, suite


def _sorted_changes(c: np.ndarray, K: SimpleNamespace) -> tuple[np.ndarray, int]:
    """The confidences sorted, and the number of value changes between neighbours. Where
    every confidence is a float32 value (softmax outputs of float32 models, cast to float64
    for the definitions) other than -0.0, they are sorted as float32 in the upper half of
    the result and widened in place: the same array bit for bit, since the sorted order of
    values is unique and equal values have equal bits (6.1 against 9.3 ms at 10^6)."""
    ascending = np.empty(c.size)
    if c.size and K.narrow(c, ascending):
        ascending.view(np.float32)[c.size :].sort()
        return ascending, int(K.widen(ascending))
    ascending[:] = c  # np.sort(c): a copy sorted in place
    ascending.sort()
    return ascending, int(K.count_changes(ascending))


def _are_failures(c_minor: np.ndarray, n_fail: int) -> bool:
    """Whether the class placed in the tie groups, ``c_minor``, is the failures (else the
    successes: they are taken only where strictly fewer, so that a class of ``n_fail`` values
    is the failures)."""
    return c_minor.size == n_fail


class _Walk(NamedTuple):
    """What the walk over the tie groups accumulates (see :func:`_walk`)."""

    aurc_dot: float
    ap_ok_dot: float
    ap_err_dot: float
    head: float
    augrc_sum: float
    auroc_sum: float
    tp_loss: dict[float, float]
    working_point: float
    risk_at: float
    covered: float


def _reach_tp(n_ok: int) -> dict[float, float]:
    return {tpr: _smallest_reaching(float(n_ok), tpr) if n_ok else 0.0 for tpr in (0.95, 0.80)}


def _walk(d: np.ndarray, ends: np.ndarray | None, c_fail: np.ndarray, n_groups: int) -> _Walk:
    """The tie groups of descending ``d`` walked in blocks by NumPy: the sums of AURC's and
    AP_f's rounded terms, L of the first group, the integer sums of AUGRC and AUROC_f, the
    losses at 95 % and 80 % TPR, the working point, the selective risk at 95 % coverage and
    the largest coverage of risk <= 0.05."""
    n = d.size
    n_fail = c_fail.size
    total, fails = float(n), float(n_fail)
    aurc_dot, ap_ok_dot, ap_err_dot = RowDot(), RowDot(), RowDot()
    augrc_sum = auroc_sum = 0.0
    reach_w = _smallest_reaching(total, 0.95)
    reach_tp = _reach_tp(n - n_fail)
    tp_loss: dict[float, float] = {}
    working_point = math.inf
    risk_at = math.nan
    found_w = False
    covered = 0.0
    head = 0.0
    w_prev = l_prev = 0.0
    hi = n_fail
    Wx = np.empty(min(BLOCK, n_groups) + 2)
    Lx = np.empty(Wx.size - 1)
    for g0 in range(0, n_groups, BLOCK):
        g1 = min(g0 + BLOCK, n_groups)
        m = g1 - g0
        # Wx: W of groups g0 - 1 .. g1 (W_{-1} = 0, W after the last = W_T);
        # Lx: L of groups g0 - 1 .. g1 - 1
        Wx[0], Lx[0] = w_prev, l_prev
        W = Wx[1 : m + 1]
        if ends is None:
            tau = d[g0:g1]
            W[:] = np.arange(g0 + 1.0, g1 + 1.0)
            Wx[m + 1] = float(g1 + 1) if g1 < n_groups else total
        else:
            block_ends = ends[g0:g1]
            tau = d[block_ends]
            np.add(block_ends, 1.0, out=W)
            Wx[m + 1] = float(ends[g1]) + 1.0 if g1 < n_groups else total
        lo = int(np.searchsorted(c_fail[:hi], tau[-1], side="left"))
        keys = np.negative(c_fail[lo:hi][::-1])
        where = np.searchsorted(np.negative(tau), keys, side="left")
        hi = lo
        L = Lx[1 : m + 1]
        np.add(np.cumsum(np.bincount(where, minlength=m)), l_prev, out=L)
        if g0 == 0:
            head = float(L[0])
        tpx = Wx[: m + 1] - Lx[: m + 1]
        tp = tpx[1:]
        # sum_g n_g (L_g + L_{g-1}) = sum over failures f of (2N - W_{g_f - 1} - W_{g_f}) and
        # sum_g l_g (TP_g + TP_{g-1}) = sum_f (TP_{g_f} + TP_{g_f - 1}): integers, exact
        augrc_sum += float(np.sum(2.0 * total - Wx[where] - Wx[where + 1]))
        auroc_sum += float(np.sum(tpx[where + 1] + tpx[where]))

        risks = L / W
        aurc_dot.feed(Wx[2 : m + 2] - Wx[:m], risks)
        ap_ok_dot.feed(tp - tpx[:-1], tp / W)
        # (F - L_{g-1}) / max(N - W_{g-1}, tiny) for g >= 1, where N - W_{g-1} >= 1
        skip = 1 if g0 == 0 else 0
        loss = L[skip:] - Lx[skip:m]
        ap_err_dot.feed(loss, (fails - Lx[skip:m]) / (total - Wx[skip:m]))

        for tpr, x in reach_tp.items():
            if tpr not in tp_loss and tp[-1] >= x:
                tp_loss[tpr] = float(L[_first_at_least(tp, x)])
        if found_w:
            working_point = min(working_point, float(risks.min()))
        elif W[-1] >= reach_w:
            j = _first_at_least(W, reach_w)
            found_w = True
            risk_at = float(L[j] / W[j])
            working_point = float(risks[j:].min())
        acceptable = risks <= 0.05
        if acceptable.any():
            covered = float(W[m - 1 - int(np.argmax(acceptable[::-1]))])
        w_prev, l_prev = float(W[-1]), float(L[-1])
    return _Walk(
        aurc_dot.total(),
        ap_ok_dot.total(),
        ap_err_dot.total(),
        head,
        augrc_sum,
        auroc_sum,
        tp_loss,
        working_point,
        risk_at,
        covered,
    )


def _walk_compiled(
    K: SimpleNamespace,
    ascending: np.ndarray,
    ends: np.ndarray | None,
    c_minor: np.ndarray,
    n_fail: int,
    n_groups: int,
    alongside: Callable[[], _T],
) -> tuple[_Walk, _T]:
    """:func:`_walk` by the compiled pass
    (:func:`~fdbench.metrics._valuesort_kernel._walk_block`) per block of :data:`BLOCK` groups,
    the sums of rounded terms in the order of :class:`RowDot` too.

    Each block logs its chunks' sums (:func:`~fdbench.metrics._valuesort_kernel._chunk_sums`),
    added in chunk order at the end, so that the groups can be walked in two segments at once:
    from two blocks of groups on, where this process may use a second CPU
    (:func:`fdbench.core.threads.second_thread_allowed`), the groups from the einsum chunk
    nearest a share of 0.5 - :data:`ALONGSIDE_SHARE` on run on another thread, started from
    the W, L and unplaced failures of the group before it (found by a binary search among the
    failures), and the segments' integer sums (exact), minima, first and last groups are
    combined; every value is the sequential walk's bit for bit. ``alongside`` (the ECE's bin
    sums, which need no walk) runs in the calling thread after its shorter segment; its value
    is returned with the walk's."""
    n = ascending.size
    total = float(n)
    reach = _reach_tp(n - n_fail)
    flip = int(not _are_failures(c_minor, n_fail))
    sums = np.array(
        [total, float(n_fail), _smallest_reaching(total, 0.95), reach[0.95], reach[0.80]]
    )
    group_ends = np.empty(0, dtype=np.int32) if ends is None else ends
    log = np.empty((-(-n_groups // kernel.CHUNK), 3))
    share = int(n_groups * (0.5 - ALONGSIDE_SHARE))
    split = max(kernel.CHUNK, share // kernel.CHUNK * kernel.CHUNK)  # to a chunk, not empty
    if n_groups < 2 * BLOCK or not second_thread_allowed():
        split = n_groups
    segments = [(0, split), (split, n_groups)] if split < n_groups else [(0, n_groups)]
    states = [_segment_state(ascending, ends, c_minor, n_fail, g, sums[2]) for g, _ in segments]

    def walk(segment: int) -> None:
        g_start, g_stop = segments[segment]
        rows = np.empty((6, min(BLOCK, g_stop - g_start) + 2))
        for g0 in range(g_start, g_stop, BLOCK):
            g1 = min(g0 + BLOCK, g_stop)
            K.walk_block(
                ascending,
                group_ends,
                c_minor,
                flip,
                g0,
                g1,
                n_groups,
                sums,
                states[segment],
                rows,
                log,
            )

    if len(segments) == 2:
        second = beside(walk, 1)
        walk(0)
        alongside_value = alongside()
        second.result()
    else:
        walk(0)
        alongside_value = alongside()
    dots = [0.0, 0.0, 0.0]
    for chunk in log.tolist():
        dots = [dot + term for dot, term in zip(dots, chunk, strict=True)]
    first, last = states[0], states[-1]
    tp = {}
    for tpr, slot in ((0.95, kernel.TP95), (0.80, kernel.TP80)):
        found = [float(state[slot]) for state in states if state[slot] == state[slot]]
        tp[tpr] = found[0] if found else math.nan
    reached = [state for state in states if state[kernel.RISK_AT] == state[kernel.RISK_AT]]
    covered = float(last[kernel.COVERED])
    return _Walk(
        dots[0],
        dots[1],
        dots[2],
        float(first[kernel.HEAD]),
        float(sum(float(state[kernel.AUGRC]) for state in states)),
        float(sum(float(state[kernel.AUROC]) for state in states)),
        tp,
        float(min(state[kernel.WORKING] for state in states)),
        float(reached[0][kernel.RISK_AT]) if reached else math.nan,
        covered if covered >= 0 else float(first[kernel.COVERED]),
    ), alongside_value


def _segment_state(
    ascending: np.ndarray,
    ends: np.ndarray | None,
    c_minor: np.ndarray,
    n_fail: int,
    g: int,
    reach_w: float,
) -> np.ndarray:
    """The walk's state before group ``g``: W and L of group g - 1, the class not yet placed
    (``c_minor``: the failures, or the successes where it holds fewer than ``n_fail``; those
    below its threshold), whether 95 % coverage is reached; the searches unset (NaN, +inf)
    and, after group 0, the last group of risk <= 0.05 unset (-1)."""
    state = np.zeros(kernel.STATE_SIZE)
    state[[kernel.TP95, kernel.TP80, kernel.RISK_AT]] = math.nan
    state[kernel.WORKING] = math.inf
    state[kernel.HI] = c_minor.size
    if g == 0:
        return state
    last = int(ends[g - 1]) if ends is not None else g - 1
    tau = ascending[ascending.size - 1 - last]
    unplaced = int(np.searchsorted(c_minor, tau, side="left"))
    placed = c_minor.size - unplaced
    state[kernel.W_PREV] = float(last + 1)
    state[kernel.L_PREV] = float(placed if _are_failures(c_minor, n_fail) else last + 1 - placed)
    state[kernel.HI] = unplaced
    state[kernel.FOUND_W] = 1.0 if last + 1 >= reach_w else 0.0
    state[kernel.COVERED] = -1.0
    return state


def _suite(
    d: np.ndarray,
    ends: np.ndarray | None,
    c_minor: np.ndarray,
    n_fail: int,
    walk: _Walk,
    n_groups: int,
    *,
    ece_mce: tuple[float, float] | None = None,
    optimum: tuple[float, float] | None = None,
) -> dict[str, float]:
    """The entries of :func:`binary_unit_suite` from the walk over the tie groups
    (``c_minor``: the ascending confidences of the failures, or of the successes where it
    holds fewer than ``n_fail``; ``ece_mce`` and ``optimum``: :func:`_ece_mce`'s and
    :func:`~fdbench.metrics._core.optimal_binary_unit`'s values where the caller has them)."""
    n = d.size
    n_ok = n - n_fail
    total, fails = float(n), float(n_fail)
    out: dict[str, float] = {}
    out["aurc"] = 0.5 * (walk.aurc_dot + walk.head) / total
    out["augrc"] = 0.5 * walk.augrc_sum / total**2
    if n_ok == 0 or n_fail == 0:
        perfect = ends is None
    elif _are_failures(c_minor, n_fail):  # the failures all below the n_ok-th confidence
        perfect = ends is None and c_minor[-1] < d[n_ok - 1]
    else:  # the successes all above the (n_ok + 1)-th
        perfect = ends is None and c_minor[0] > d[n_ok]
    if perfect:
        out["aurc_opt"], out["augrc_opt"] = out["aurc"], out["augrc"]
    else:
        out["aurc_opt"], out["augrc_opt"] = optimum or optimal_binary_unit(n_ok, n_fail)
    positives = (total - fails) * fails
    out["auroc_f"] = 0.5 * walk.auroc_sum / positives if positives > 0 else math.nan
    out["ap_f_success"] = walk.ap_ok_dot / (total - fails) if n_ok else math.nan
    first_loss = walk.head
    ap_err = walk.ap_err_dot + first_loss * fails / total
    out["ap_f_error"] = ap_err / fails if n_fail else math.nan
    for tpr in (0.95, 0.80):
        key = f"fpr@{round(tpr * 100)}tpr"
        out[key] = walk.tp_loss[tpr] / fails if n_ok and n_fail else math.nan
    if ece_mce is None:
        ece_mce = _ece_mce(d, ends, c_minor, n_fail, n_groups)
    out["ece"], out["mce"] = ece_mce
    out["risk@95cov"] = walk.working_point
    out["selective_risk@95cov"] = walk.risk_at
    out["coverage@risk5"] = walk.covered / total
    out["mean_residual"] = fails / total
    return out


def _ece_mce(
    d: np.ndarray,
    ends: np.ndarray | None,
    c_minor: np.ndarray,
    n_fail: int,
    n_groups: int,
    group_terms: Callable[..., None] | None = None,
) -> tuple[float, float]:
    """ECE and MCE with 15 bins as :func:`~fdbench.metrics.calibration.bin_sums_sorted`
    computes them (NaN outside [0, 1]). With ties, each bin's confidence sum adds the groups'
    n_g * tau_g; ``group_terms`` (compiled, :mod:`~fdbench.metrics._valuesort_kernel`)
    writes them in one pass instead of NumPy's four. ``c_minor``: as :func:`_suite` takes
    it."""
    if not (d[-1] >= 0 and d[0] <= 1):
        return math.nan, math.nan
    n_bins = 15
    n = d.size
    edges = (np.arange(n_bins + 1) / n_bins).tolist()
    inner = edges[1:-1]
    positions = [bisect.bisect_left(d, -e, key=operator.neg) for e in inner]
    if ends is None:
        above = positions
    else:
        above = [bisect.bisect_left(ends, p) for p in positions]  # no copy of int32 ends
    bounds = np.array([n_groups, *above, 0])
    w_at = np.array([n, *positions, 0], dtype=np.float64)
    above_e = [c_minor.size - int(np.searchsorted(c_minor, e, side="right")) for e in inner]
    if _are_failures(c_minor, n_fail):
        fails_above = above_e
    else:  # the successes above e: the failures are the rest of the samples above e
        fails_above = [p - k for p, k in zip(positions, above_e, strict=True)]
    l_at = np.array([n_fail, *fails_above, 0], dtype=np.float64)
    count = w_at[:-1] - w_at[1:]
    fail = l_at[:-1] - l_at[1:]

    def weighted(i: int, j: int) -> np.ndarray:
        if ends is None:  # a reversed view: a 1-D reduction adds in the view's order
            return d[i:j]
        if group_terms is not None:
            terms = np.empty(j - i)
            group_terms(d[::-1], ends, i, terms)
            return terms
        sizes = np.diff(ends[i - 1 : j]) if i else np.diff(ends[:j], prepend=-1)
        return np.multiply(sizes, d[ends[i:j]], dtype=np.float64)  # exact integer sizes

    conf = np.zeros(n_bins)
    for j in np.flatnonzero(bounds[:-1] > bounds[1:]).tolist():
        start, stop = int(bounds[j + 1]), int(bounds[j])
        value = float(weighted(start, start + 1)[0])
        if stop - start > 1:
            value = value + pairwise(weighted, start + 1, stop - start - 1)
        conf[j] = value
    ece_value, mce_value = ece_mce_from_sums(count, count - fail, conf)
    return float(ece_value), float(mce_value)
