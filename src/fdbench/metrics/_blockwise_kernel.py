"""The block walk of weighted or soft residuals compiled (numba): two passes over the order
instead of a dozen NumPy passes per block.

:mod:`fdbench.metrics._blockwise` walks the descending order in blocks with NumPy: per block a
gather of the indices, the confidences and the residuals, three or four ``np.cumsum``, a pass
per metric and per dot product. On large inputs those passes cost more than the argsort. Here,
after the same argsort and the same int32 order, one compiled pass gathers the weights in
that order (0/1 residuals in the sign bit, as the NumPy walk keeps them) and takes the totals,
and a second gathers the confidences (and the residuals) a block at a time and walks the
samples once: the cumulative sums W, L and TP of every tie group are written to a buffer of
:data:`CHUNK` groups, from which each metric's terms are formed and summed. Memory: the int32
order, the weights' copy and two bytes per sample for the failures' flags and their copy in
order (1.75 arrays of N floats; soft residuals without weights need the order alone), besides
buffers of a few hundred KB.

The result equals the NumPy walk's (and so the argsort engine's) bit for bit, given the same
order; the caller's order (packed, :mod:`~fdbench.metrics._packed_order`, or counted,
:mod:`~fdbench.metrics._counting_order`) is ``np.argsort``'s where the confidences differ and
keeps a tie group's samples in position order
(:mod:`fdbench.metrics._blockwise` says what that changes):

- Cumulative sums: each is one running float64 sum ``s = s + x`` over the samples in order,
  started at 0.0, which is what ``np.cumsum`` computes (it adds one element after the other);
  the addends are the same numbers (``r * w``, the weight or 0.0 of a 0/1 residual).
- Every per-group value (``W_g - W_{g-1}``, ``L_g / W_g``, ``max(W_g, tiny)``, the AP
  precisions ...) is the same IEEE operation on the same operands; numba compiles without
  fast-math, so no operation is reordered, contracted into a fused multiply-add or flushed
  to zero (``tests/metrics/test_blockwise.py`` checks the machine code holds no FMA).
- The dot products (AURC, AUGRC, AUROC_f, AP_f) are summed as ``np.einsum("ij,ij->i")`` sums a
  row (:func:`einsum_chunk_sum`, the order of ``_curve_kernel._aurc_sum``): in chunks of
  :data:`CHUNK` products, each from zero, the chunk sums added in turn. That order depends on
  NumPy's build; it is checked once per process against ``einsum`` and the NumPy walk's
  :class:`~fdbench.metrics._ordered_sums.RowDot` (:func:`dot_order_holds`), and where it differs
  the NumPy walk is taken.
- Weighted 0/1 residuals and soft residuals without weights (the second thread free: their
  optimum is done by then) are walked in two segments at once from a chunk's first group on
  (:func:`_walk`, roles 1 and 2): each chunk's sums are logged by chunk and added in chunk
  order at the end (:func:`_sum_log`, the same running sum), the second segment starts from
  the same running sums (those the weights' gather noted every :data:`GATHER` samples,
  continued over at most that many samples in the same order; of soft residuals their sum
  in order), and what each segment found is joined as one walk would have found it
  (``fdbench.metrics._blockwise._join_segments``). 10^6 samples: the walk 18 -> 10 ms.
- Minima, the first group reaching a coverage or a TPR, and the ECE's bin bounds are exact
  comparisons; the first group at which a cumulative sum reaches a value is the one
  ``np.searchsorted`` finds in the NumPy walk, since the sum is non-decreasing. W - L, the
  successes' weight for whole-number weights, is non-decreasing only while the sums are exact
  (total weight <= 2^53): beyond, the NumPy walk is taken.
- The ECE's per-bin confidence sums are left to the NumPy walk's ``np.add.reduceat`` over the
  same group terms, written to the part of the weights' copy already walked.

numba is imported, and the kernels compiled or loaded from the cache next to this module
(``cache=True``), on the first call of :func:`compiled_kernels` (about 1-3 s per process); the
walk takes this path only from :data:`MIN_SAMPLES` samples on, where the time it saves per call
repays that start within a process of a few tens of calls.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace

import numpy as np

from . import _counting_order, _packed_order
from ._ordered_sums import EINSUM_BUFFER, einsum_chunk_sum, einsum_chunk_sum3

#: Products per chunk of ``np.einsum("ij,ij->i")`` on a long row, and groups per buffer.
CHUNK = EINSUM_BUFFER
#: Fewest samples for which the walk takes the compiled path: from here on it saves ~15 ms or
#: more per call, repaying numba's ~1 s start in a process that evaluates some tens of CSFs
#: (one call at 10^7); see benchmarks/RESULTS.md.
MIN_SAMPLES = 1 << 18
#: Largest total weight for which W - L of whole-number weights is exact.
MAX_EXACT_TOTAL = float(2**53)
#: Samples per gather of the confidences.
GATHER = 4096
#: Columns of the walk's group buffer: a chunk, the group before it, one read ahead and the
#: groups of one gather beyond.
GROUP_BUFFER = CHUNK + GATHER + 2
_TINY = float(np.finfo(np.float64).tiny)

#: Rows of the product buffer: the dot products of the walk.
AURC, AUGRC, AUGRC_PREV, AUROC, AUROC_PREV, AP_SUCCESS, AP_ERROR = range(7)
_N_DOTS = 7
#: Row of the product buffer with the selective risks.
RISKS = 7

#: Modes of the walk: soft residuals without weights, soft residuals with weights, weighted
#: 0/1 residuals.
SOFT, SOFT_WEIGHTED, BINARY = range(3)

#: Slots of the walk's state (floats; flags 0/1, counts as whole numbers).
(
    HEAD,
    RISK_AT,
    WORKING,
    COVERED,
    LOSS_95,
    LOSS_80,
    FAILS,
    FOUND_W,
    FOUND_95,
    FOUND_80,
    GROUPS,
    EDGE,
    RISING,
) = range(13)
STATE_SIZE = 13

#: Samples that :func:`_scan_inputs` checks between two tests of what it found.
SCAN_BLOCK = 4096


def _scan_inputs(
    r: np.ndarray, c: np.ndarray, w: np.ndarray, weighted: bool, out: np.ndarray
) -> bool:
    """Whether every confidence is finite, every residual finite and >= 0 and, when
    ``weighted``, every weight finite and > 0 (``check_inputs`` accepts these as they are);
    then out = (1.0 when every residual is 0 or 1 else 0.0, the largest weight). One pass
    over the arrays instead of ``check_inputs``' and the 0/1 test's temporaries, a block of
    :data:`SCAN_BLOCK` at a time without branches inside a block (vectorised). The largest
    weight is found as the largest bit pattern, an integer maximum (which vectorises, where
    a float maximum must keep NaN's order): positive finite floats order as their patterns,
    and a block holding any other weight is refused."""
    n = r.shape[0]
    binary = True
    bits = w.view(np.uint64)
    largest = np.uint64(0)
    for start in range(0, n, SCAN_BLOCK):
        stop = min(start + SCAN_BLOCK, n)
        valid = True
        zero_one = True
        for i in range(start, stop):
            x = r[i]
            valid = valid & (math.isfinite(c[i]) & math.isfinite(x) & (x >= 0.0))
            zero_one = zero_one & ((x == 0.0) | (x == 1.0))
        if weighted:
            for i in range(start, stop):
                v = w[i]
                valid = valid & (math.isfinite(v) & (v > 0.0))
                largest = max(largest, bits[i])
        if not valid:
            return False
        binary = binary & zero_one
    out[0] = 1.0 if binary else 0.0
    out[1:2].view(np.uint64)[0] = largest
    return True


def _gather_weights(
    order: np.ndarray,
    w: np.ndarray,
    failed: np.ndarray,
    binary: bool,
    out: np.ndarray,
    failed_out: np.ndarray,
    totals: np.ndarray,
    checkpoints: np.ndarray,
) -> None:
    """out[i] = w[order[i]], negated for a failure (``failed`` bytes, 0/1 residuals; gathered
    into ``failed_out``); totals = (W_tot, F, the successes' weight, 1.0 when every weight is
    a whole number else 0.0), each a sequential sum in order, and, where ``checkpoints`` has
    rows, row b of it = the first three before sample b * :data:`GATHER` (where the second
    segment of the walk starts its sums, :func:`_walk`). The gathers are loops of their own
    (vectorised: the processor's gather instructions), the sums a third loop over what they
    gathered."""
    n = order.shape[0]
    for i in range(n):
        out[i] = w[np.uint64(order[i])]
    if binary:
        for i in range(n):
            failed_out[i] = failed[np.uint64(order[i])]
    total = 0.0
    fails = 0.0
    ok = 0.0
    integral = True
    marks = checkpoints.shape[0] > 0
    for start in range(0, n, GATHER):
        if marks:
            checkpoints[start // GATHER, 0] = total
            checkpoints[start // GATHER, 1] = fails
            checkpoints[start // GATHER, 2] = ok
        for i in range(start, min(start + GATHER, n)):
            x = out[i]
            f = binary and failed_out[i] != 0
            if binary:
                out[i] = -x if f else x
            total, fails, ok, integral = add_weight(total, fails, ok, integral, x, f)
    totals[0] = total
    totals[1] = fails
    totals[2] = ok
    totals[3] = 1.0 if integral else 0.0


def _gather(order: np.ndarray, x: np.ndarray, start: int, out: np.ndarray) -> None:
    """out[k] = x[order[start + k]] for k < len(out) (an int32 order read as it is: no
    conversion to NumPy's index type; each index taken as unsigned, so that no test for a
    negative index wraps the load and the loop vectorises: ~30 % faster)."""
    for k in range(out.shape[0]):
        out[k] = x[np.uint64(order[start + k])]


def _add_weight(
    total: float, fails: float, ok: float, integral: bool, x: float, failed: bool
) -> tuple[float, float, float, bool]:
    """The running sums W_tot, F and TP_tot and whether every weight is a whole number, after
    the weight ``x`` of a failure (``failed``) or a success, added in order."""
    return (
        total + x,
        fails + (x if failed else 0.0),
        ok + (0.0 if failed else x),
        integral & (np.floor(x) == x),
    )


def _signed_totals(wo: np.ndarray, binary: bool, totals: np.ndarray) -> None:
    """:func:`_gather_weights`' totals of weights already in order, a failure's negated
    (``binary``; weights are > 0): the same sums in the same order."""
    total = 0.0
    fails = 0.0
    ok = 0.0
    integral = True
    for i in range(wo.shape[0]):
        v = wo[i]
        f = binary and v < 0.0
        total, fails, ok, integral = add_weight(total, fails, ok, integral, abs(v), f)
    totals[0] = total
    totals[1] = fails
    totals[2] = ok
    totals[3] = 1.0 if integral else 0.0


def _row_dot(a: np.ndarray, b: np.ndarray, products: np.ndarray) -> float:
    """``np.einsum("ij,ij->i", a[None], b[None])[0]`` as the walk forms it: the products a
    chunk at a time, :func:`einsum_chunk_sum` of each, added in turn from 0.0."""
    n = a.shape[0]
    out = 0.0
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        for k in range(m):
            products[k] = a[start + k] * b[start + k]
        out = out + chunk_sum(products, 0, m)
    return out


def _terms(G: np.ndarray, P: np.ndarray, filled: int, last: bool, binary: bool, params) -> None:
    """Write the dot products' terms of the groups in ``G`` to the rows of ``P`` (row
    :data:`RISKS`: the selective risks L_g / W_g of groups g0 ..): see :func:`_flush`."""
    total, fails = params[0], params[1]
    groups_a = filled - 1 if last else CHUNK
    groups_b = filled - 2 if last else CHUNK
    for j in range(1, groups_a + 1):
        w_j = G[0, j]
        w_p = G[0, j - 1]
        l_j = G[1, j]
        risk = l_j / w_j
        P[RISKS, j - 1] = risk
        w_next = G[0, j + 1] if j + 1 < filled else w_j
        P[AURC, j - 1] = (w_next - w_p) * risk
        P[AUGRC, j - 1] = (w_j - w_p) * l_j
    for j in range(2, groups_b + 2):
        P[AUGRC_PREV, j - 2] = (G[0, j] - G[0, j - 1]) * G[1, j - 1]
    if not binary:
        return
    for j in range(1, groups_a + 1):
        w_j = G[0, j]
        l_j = G[1, j]
        l_p = G[1, j - 1]
        tp = w_j - l_j
        tp_p = G[0, j - 1] - l_p
        P[AUROC, j - 1] = (l_j - l_p) * tp
        P[AP_SUCCESS, j - 1] = (tp - tp_p) * (tp / (w_j if w_j >= _TINY else _TINY))
    for j in range(2, groups_b + 2):
        w_p = G[0, j - 1]
        l_p = G[1, j - 1]
        loss = G[1, j] - l_p
        P[AUROC_PREV, j - 2] = loss * (w_p - l_p)
        below = total - w_p
        P[AP_ERROR, j - 2] = loss * ((fails - l_p) / (below if below >= _TINY else _TINY))


def _flush(
    G: np.ndarray,
    P: np.ndarray,
    filled: int,
    last: bool,
    binary: bool,
    success: bool,
    params: np.ndarray,
    edges: np.ndarray,
    state: np.ndarray,
    log: np.ndarray,
    ece_at: np.ndarray,
    weighted: np.ndarray,
    shift: int,
) -> None:
    """Account for the groups in the buffer ``G`` (rows W, L, TP, threshold; column j is
    group g0 - 1 + j, column 0 the group before the buffer's first): groups 1 .. CHUNK of a
    full buffer (``filled`` = CHUNK + 2, column CHUNK + 1 read ahead), or 1 .. filled - 1 at
    the ``last`` call. Each dot product gets one chunk of terms: the terms of groups
    g0 .. (AUGRC, AUROC_f, AP_f success), of groups g0 + 1 .. (the terms with a previous
    group's value, which start at group 1) and AURC's terms of groups g0 .. (coefficient
    W_{g+1} - W_{g-1}, W_T = W_{T-1}). The chunk's sums go to row g0 / CHUNK of ``log``
    (which :func:`_sum_log` adds in row order, as one running sum would have), the ECE's
    group terms of weighted 0/1 residuals to weighted[g + ``shift``]."""
    reach_w, x95, x80 = params[2], params[3], params[4]
    groups_a = filled - 1 if last else CHUNK
    groups_b = filled - 2 if last else CHUNK
    g0 = int(state[GROUPS])
    terms(G, P, filled, last, binary, params)
    if g0 == 0:
        state[HEAD] = G[1, 1]
    j = 1
    if state[FOUND_W] == 0.0:
        while j <= groups_a and G[0, j] < reach_w:
            j += 1
        if j <= groups_a:
            state[FOUND_W] = 1.0
            state[RISK_AT] = G[1, j] / G[0, j]
            state[WORKING] = P[RISKS, j - 1]
            j += 1
    working = state[WORKING]
    if state[FOUND_W] != 0.0 and working == working:
        for k in range(j - 1, groups_a):
            risk = P[RISKS, k]
            if not risk >= working:
                working = risk
                if risk != risk:
                    break
        state[WORKING] = working
    for j in range(groups_a, 0, -1):
        w_j = G[0, j]
        sr = P[RISKS, j - 1] if w_j >= _TINY else G[1, j] / _TINY
        if sr <= 0.05:
            state[COVERED] = w_j
            break
    if binary:
        if params[5] != 0.0:
            row = 2 if success else -1
            for found, x, slot in ((FOUND_95, x95, LOSS_95), (FOUND_80, x80, LOSS_80)):
                if state[found] == 0.0:
                    for j in range(1, groups_a + 1):
                        reached = G[row, j] if row >= 0 else G[0, j] - G[1, j]
                        if reached >= x:
                            state[found] = 1.0
                            state[slot] = G[1, j]
                            break
        edge = int(state[EDGE])
        for j in range(1, groups_a + 1):
            tau = G[3, j]
            weighted[g0 + j - 1 + shift] = (G[0, j] - G[0, j - 1]) * tau
            while edge >= 0 and tau <= edges[edge]:
                ece_at[edge, 0] = g0 + j - 1
                ece_at[edge, 1] = G[0, j - 1]
                ece_at[edge, 2] = G[1, j - 1]
                edge -= 1
        state[EDGE] = edge
    chunk = log[g0 // CHUNK]
    if groups_a == groups_b:  # every row a full chunk: three rows at a time, interleaved
        for d in range(0, _N_DOTS - 1 if binary else 3, 3):
            a, b, c = chunk_sum3(P[d], P[d + 1], P[d + 2], 0, groups_a)
            chunk[d] = a
            chunk[d + 1] = b
            chunk[d + 2] = c
        if binary:
            chunk[AP_ERROR] = chunk_sum(P[AP_ERROR], 0, groups_a)
    else:
        for d in range(_N_DOTS if binary else 3):
            previous = d == AUGRC_PREV or d == AUROC_PREV or d == AP_ERROR
            m = groups_b if previous else groups_a
            if m > 0:
                chunk[d] = chunk_sum(P[d], 0, m)
    state[GROUPS] = g0 + groups_a


def _fill_thresholds(
    ends: np.ndarray, thresholds: np.ndarray, start: int, m: int, n: int, cb: np.ndarray, g: int
) -> int:
    """cb[k] = the threshold of the group of sample start + k, k = 0 .. m (NaN past the last
    sample), from the groups' ``ends`` in the order; ``g`` is the group of sample ``start``,
    and the group of sample start + m is returned."""
    i = start
    stop = start + m
    while i < stop:
        e = min(ends[g], stop)
        v = thresholds[g]
        for j in range(i, e):
            cb[j - start] = v
        i = e
        if e == ends[g]:
            g += 1
    cb[m] = thresholds[g] if stop < n else np.nan
    return g


def _gather_block(
    order: np.ndarray,
    c: np.ndarray,
    r: np.ndarray,
    binary: bool,
    start: int,
    m: int,
    cb: np.ndarray,
    rb: np.ndarray,
    check: bool,
) -> bool:
    """cb[k] = c[order[start + k]] for k = 0 .. m (NaN past the last sample) and, unless
    ``binary``, rb[k] = r[order[start + k]] for k < m; where ``check``, whether a confidence
    gathered is above the one before it."""
    n = c.shape[0]
    for k in range(m):
        o = order[start + k]
        cb[k] = c[np.uint64(o)]
        if not binary:
            rb[k] = r[np.uint64(o)]
    cb[m] = c[order[start + m]] if start + m < n else np.nan
    rising = False
    if check:
        for k in range(m):  # no branch: vectorised
            rising = rising | (cb[k + 1] > cb[k])
    return rising


def _walk(
    order: np.ndarray,
    c: np.ndarray,
    ends: np.ndarray,
    thresholds: np.ndarray,
    r: np.ndarray,
    wo: np.ndarray,
    mode: int,
    success: bool,
    params: np.ndarray,
    edges: np.ndarray,
    G: np.ndarray,
    P: np.ndarray,
    gathered: np.ndarray,
    state: np.ndarray,
    log: np.ndarray,
    ece_at: np.ndarray,
    split: int,
    role: int,
    w: np.ndarray,
    failed: np.ndarray,
    checkpoints: np.ndarray,
) -> int:
    """Walk the samples in ``order`` once: the confidences (and the soft residuals) gathered
    :data:`GATHER` at a time into ``gathered`` (2, GATHER + 1) (where ``ends`` is not empty,
    the confidences are the ``thresholds`` of the tie groups ending there in the order, not
    read from ``c``: :mod:`~fdbench.metrics._counting_order`; ``order`` is then read only for
    soft residuals, and may be empty otherwise), the cumulative W, L and TP
    of each tie group (a run of equal confidences) written to ``G`` and accounted for by
    :func:`_flush` a buffer at a time (its chunk sums to the rows of ``log``). ``wo`` holds
    the weights in order (0/1 residuals: the failures' negated); for weighted 0/1 residuals
    the ECE's group terms n_g * tau_g are written to wo[g]. Where state[RISING] is not 0 on
    entry, it is set to 1.0 where a confidence in ``order`` is above the one before it (the
    order is not descending), else to -1.0.

    ``role`` 0 walks every group. Weighted 0/1 residuals or soft residuals without weights
    in a given order (modes :data:`BINARY` and :data:`SOFT`, ``ends`` empty) may be walked
    in two segments at once, at group ``split`` (a multiple of :data:`CHUNK`, so that both
    walk whole chunks of the same groups): role 1
    walks the groups before it and reads group ``split`` ahead (its last chunk's terms need
    that group's W and L), then stops; role 2 first runs over the samples before group
    ``split`` for the group before it (its column 0: the confidences read, the groups
    counted) and the same running sums W, L and TP there: of soft residuals the residuals
    read in order from the first on, of weighted 0/1 residuals from the ``checkpoints`` of
    :func:`_gather_weights` on, reading the weights ``w`` and the failures' flags ``failed``
    at the order's samples (the same numbers: role 1 overwrites ``wo`` with its ECE terms
    meanwhile), then walks from there, its ECE terms written ``shift`` places further on in
    ``wo`` (past what
    role 1 reads; ``wo`` holds one more place than the samples for them). Returns that
    shift for role 2, -1 where there is no group ``split`` (role 1 then walked every group),
    0 for roles 0 and 1."""
    n = c.shape[0]
    binary = mode == BINARY
    cb = gathered[0]
    rb = gathered[1]
    total_w = 0.0
    total_l = 0.0
    total_ok = 0.0
    rising = False
    check = state[RISING] != 0.0
    for k in range(4):
        G[k, 0] = 0.0
    filled = 1
    grouped = ends.shape[0] > 0
    group = 0
    first = 0
    shift = 0
    if role == 2:
        first = -1
        closed = 0
        for start in range(0, n, GATHER):
            m = min(GATHER, n - start)
            gather_block(order, c, r, True, start, m, cb, rb, False)
            closing = 0
            for k in range(m):  # no branch: vectorised; the block holding group split after
                closing += cb[k + 1] != cb[k]
            if closed + closing >= split:
                for k in range(m):
                    closed += cb[k + 1] != cb[k]
                    if closed == split:
                        first = start + k + 1
                        G[3, 0] = cb[k]
                        break
                break
            closed += closing
        if first < 0 or first >= n:
            return -1
        if mode == SOFT:  # W counts the samples; L sums the residuals in order
            total_w = float(first)
            for i in range(first):
                total_l = total_l + r[np.uint64(order[i])]
        else:
            mark = first // GATHER
            total_w = checkpoints[mark, 0]
            total_l = checkpoints[mark, 1]
            total_ok = checkpoints[mark, 2]
            for i in range(mark * GATHER, first):
                o = order[i]
                x = w[o]
                failure = failed[o] != 0
                total_w = total_w + x
                total_l = total_l + (x if failure else 0.0)
                total_ok = total_ok + (0.0 if failure else x)
        G[0, 0] = total_w
        G[1, 0] = total_l
        G[2, 0] = total_ok
        state[GROUPS] = split
        edge = int(state[EDGE])
        while edge >= 0 and G[3, 0] <= edges[edge]:
            edge -= 1
        state[EDGE] = edge
        head = c[order[first]]
        size = 1
        while first + size < n and c[order[first + size]] == head:
            size += 1
        shift = first + size - split
    stopped = False
    for start in range(first, n, GATHER):
        m = min(GATHER, n - start)
        if grouped:
            group = fill_thresholds(ends, thresholds, start, m, n, cb, group)
            if not binary:
                for k in range(m):
                    rb[k] = r[np.uint64(order[start + k])]
        else:
            rising = gather_block(order, c, r, binary, start, m, cb, rb, check) | rising
        for k in range(m):
            i = start + k
            if mode == SOFT:
                total_w = float(i + 1)
                total_l = total_l + rb[k]
            elif mode == SOFT_WEIGHTED:
                x = wo[i]
                total_w = total_w + x
                total_l = total_l + rb[k] * x
            else:  # without branches on the sign: adding 0.0 leaves a sum as it is
                x = wo[i]
                failure = x < 0.0
                x = abs(x)
                total_w = total_w + x
                total_l = total_l + (x if failure else 0.0)
                total_ok = total_ok + (0.0 if failure else x)
            if cb[k + 1] != cb[k]:
                G[0, filled] = total_w
                G[1, filled] = total_l
                G[2, filled] = total_ok
                G[3, filled] = cb[k]
                filled += 1
                if role == 1 and int(state[GROUPS]) + filled - 2 == split:
                    stopped = True  # group split read ahead: the buffer holds a full chunk
                    break
        if stopped:
            break
        if filled >= CHUNK + 2:
            _flush_(
                G,
                P,
                CHUNK + 2,
                False,
                binary,
                success,
                params,
                edges,
                state,
                log,
                ece_at,
                wo,
                shift,
            )
            filled -= CHUNK
            for row in range(4):
                for j in range(filled):
                    G[row, j] = G[row, CHUNK + j]
    if stopped:
        _flush_(G, P, CHUNK + 2, False, binary, success, params, edges, state, log, ece_at, wo, 0)
    else:
        _flush_(G, P, filled, True, binary, success, params, edges, state, log, ece_at, wo, shift)
        state[FAILS] = total_l
    if check:
        state[RISING] = 1.0 if rising else -1.0
    return shift


def _walk_groups(
    W: np.ndarray,
    L: np.ndarray,
    thresholds: np.ndarray,
    params: np.ndarray,
    edges: np.ndarray,
    G: np.ndarray,
    P: np.ndarray,
    state: np.ndarray,
    log: np.ndarray,
    ece_at: np.ndarray,
    weighted: np.ndarray,
) -> None:
    """:func:`_walk` of 0/1 residuals (mode :data:`BINARY`, TP = W - L) from each tie
    group's cumulative W and L and its threshold, in descending order (counted, without
    weights: :func:`fdbench.metrics._blockwise.counted_binary_unit`): the same buffers and
    the same :func:`_flush` of every :data:`CHUNK` groups, without the samples. The ECE's
    group terms go to ``weighted`` (one per group)."""
    for k in range(4):
        G[k, 0] = 0.0
    filled = 1
    for g in range(W.shape[0]):
        G[0, filled] = W[g]
        G[1, filled] = L[g]
        G[2, filled] = 0.0
        G[3, filled] = thresholds[g]
        filled += 1
        if filled >= CHUNK + 2:
            _flush_(
                G, P, CHUNK + 2, False, True, False, params, edges, state, log, ece_at, weighted, 0
            )
            filled -= CHUNK
            for row in range(4):
                for j in range(filled):
                    G[row, j] = G[row, CHUNK + j]
    _flush_(G, P, filled, True, True, False, params, edges, state, log, ece_at, weighted, 0)
    state[FAILS] = L[W.shape[0] - 1]


def _sum_log(log: np.ndarray, dots: np.ndarray) -> None:
    """dots[d] = the chunk sums log[:, d] added in row order from 0.0: the running sum of
    each dot product over its chunks (a row never written is 0.0, which leaves it as it is:
    the sum is never -0.0)."""
    for d in range(log.shape[1]):
        total = 0.0
        for row in range(log.shape[0]):
            total = total + log[row, d]
        dots[d] = total


def _move_left(x: np.ndarray, to: int, source: int, count: int) -> None:
    """x[to : to + count] = x[source : source + count] for to <= source, in place (no
    temporary copy of the overlap)."""
    for k in range(count):
        x[to + k] = x[source + k]


def _unit_optimum(losses: np.ndarray, P: np.ndarray, sums: np.ndarray) -> None:
    """For residuals sorted ascending (every sample its own step, W_g = g + 1), with L their
    cumulative sum: sums = (sum_g coef_g (L_g / (g + 1)), sum_g L_g, sum_{g < N-1} L_g, L_0),
    coef 2 but the last (1), each dot product summed as ``einsum`` sums it
    (:func:`fdbench.metrics._blockwise.unit_optimum`)."""
    n = losses.shape[0]
    cum = 0.0
    aurc = 0.0
    augrc = 0.0
    shifted = 0.0
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        for k in range(m):
            i = start + k
            cum = cum + losses[i]
            if i == 0:
                sums[3] = cum
            P[0, k] = (1.0 if i == n - 1 else 2.0) * (cum / float(i + 1))
            P[1, k] = cum
        aurc = aurc + chunk_sum(P[0], 0, m)
        augrc = augrc + chunk_sum(P[1], 0, m)
        if start + m < n:
            shifted = shifted + chunk_sum(P[1], 0, m)
        elif m > 1:
            shifted = shifted + chunk_sum(P[1], 0, m - 1)
    sums[0] = aurc
    sums[1] = augrc
    sums[2] = shifted


#: The compiled :func:`einsum_chunk_sum` (and its three rows at a time) and :func:`_flush` that
#: the other kernels call (numba resolves them when it compiles those).
chunk_sum = einsum_chunk_sum
chunk_sum3 = einsum_chunk_sum3
terms = _terms
_flush_ = _flush
fill_thresholds = _fill_thresholds
gather_block = _gather_block
add_weight = _add_weight


def dot_order_holds(row_dot) -> bool:
    """Whether ``row_dot`` (the compiled :func:`_row_dot`) equals ``np.einsum("ij,ij->i")``
    of one long row, and the NumPy walk's :class:`~fdbench.metrics._ordered_sums.RowDot` fed
    in uneven pieces, bit for bit, on probes whose sums change with the order of the
    additions, the lane count and fused multiply-adds (factors of random signs and
    magnitudes over 2^-60..2^60; rows shorter than one chunk, one chunk, and several chunks
    with a tail)."""
    from ._ordered_sums import RowDot

    rng = np.random.default_rng(37)
    products = np.empty(CHUNK)
    for n in (1, 7, 1029, CHUNK, 2 * CHUNK + 13, 3 * CHUNK + 8):
        a = rng.normal(size=n) * 2.0 ** rng.integers(-60, 61, n)
        b = rng.normal(size=n) * 2.0 ** rng.integers(-60, 61, n)
        got = row_dot(a, b, products)
        if got != np.einsum("ij,ij->i", a[None], b[None])[0]:
            return False
        walk = RowDot()
        for piece in np.array_split(np.arange(n), 5):
            walk.feed(a[piece], b[piece])
        if got != walk.total():
            return False
    return True


@functools.cache
def compiled_kernels() -> SimpleNamespace | None:
    """The kernels of this module compiled by numba (imported here), or ``None`` where this
    NumPy's ``einsum`` sums in another order (:func:`dot_order_holds`)."""
    from numba import njit

    global chunk_sum, chunk_sum3, terms, _flush_, fill_thresholds, gather_block, add_weight
    jit = njit(cache=True, error_model="numpy", nogil=True)
    add_weight = jit(_add_weight)
    chunk_sum = jit(einsum_chunk_sum)
    chunk_sum3 = jit(einsum_chunk_sum3)
    terms = jit(_terms)
    _flush_ = jit(_flush)
    fill_thresholds = jit(_fill_thresholds)
    gather_block = jit(_gather_block)
    _counting_order.value_slot = jit(_counting_order._value_slot)
    row_dot = jit(_row_dot)
    if not dot_order_holds(row_dot):
        return None
    return SimpleNamespace(
        count_values=jit(_counting_order._count_values),
        count_binary=jit(_counting_order._count_binary),
        place=jit(_counting_order._place),
        monotone=jit(_packed_order._monotone),
        key_range=jit(_packed_order._key_range),
        packed_keys=jit(_packed_order._packed_keys),
        order_runs=jit(_packed_order._order_runs),
        descending_positions=jit(_packed_order._descending_positions),
        scan_inputs=jit(_scan_inputs),
        gather_weights=jit(_gather_weights),
        gather=jit(_gather),
        signed_totals=jit(_signed_totals),
        walk=jit(_walk),
        walk_groups=jit(_walk_groups),
        sum_log=jit(_sum_log),
        move_left=jit(_move_left),
        unit_optimum=jit(_unit_optimum),
        row_dot=row_dot,
    )
