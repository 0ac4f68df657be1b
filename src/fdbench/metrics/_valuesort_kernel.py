"""Compiled passes of the value-sort path (:mod:`fdbench.metrics._valuesort`), with numba.

- :func:`_binary_failures` checks the inputs and extracts the failures in one pass over the
  residuals and confidences, where the NumPy path makes six (``check_inputs``' finiteness
  checks with their temporaries, the 0/1 test, the mask and the gather).
- :func:`_count_changes` and :func:`_fill_group_ends` find the tie groups of the sorted
  confidences (NumPy: a comparison of neighbours per block, twice).
- :func:`_walk_block` walks one block of tie groups: it places the failures in their groups (a
  merge of the two sorted arrays instead of binary searches), accumulates the cumulative
  weight W and loss L of each group, every integer sum and threshold search of the suite, and
  writes the factors of the three sums of rounded terms (AURC, AP_f success, AP_f error).

Every value is the NumPy path's bit for bit: each factor is one IEEE operation on the same
operands as NumPy's elementwise calls (compiled without fast-math: no reassociation, no fused
multiply-add, divisions correctly rounded), a factor multiplied by a zero coefficient may be
any finite number (its product adds +0 to a sum of non-negative terms, which changes no partial
sum), the integer sums are below 2^53 (exact in any order), and the sums of rounded terms are
left to NumPy (``np.einsum`` in :class:`~fdbench.metrics._valuesort.RowDot`, in its own order).

numba is imported, and the passes compiled, on the first call of :func:`compiled` (about 2.7 s
in a process that has not imported numba, the machine code loaded from its cache next to this
module; ~8 s the first time on a machine); ``import fdbench.metrics`` imports neither. The
value-sort path therefore takes these passes only from :data:`COMPILED_MIN_SAMPLES` samples on.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace

import numpy as np

#: Samples from which ``evaluate_all``'s value-sort path takes the compiled passes (below it,
#: and where numba is missing, the NumPy passes; the values are the same).
COMPILED_MIN_SAMPLES = 1 << 19

#: Entries of the walk's state array (float64; positions and counts are exact integers).
W_PREV, L_PREV, AUGRC, AUROC, HI, HEAD, TP95, TP80, FOUND_W, RISK_AT, WORKING, COVERED = range(12)
STATE_SIZE = 12
#: Groups per run of the walk's search for the last risk <= 0.05.
SPAN = 256


def _binary_failures(residuals: np.ndarray, confidence: np.ndarray, out: np.ndarray) -> int:
    """The number k of samples with residual 1, their confidences written in sample order to
    ``out[:k]`` (``out`` as long as ``confidence``), when every confidence is finite and every
    residual is 0 or 1; -1 at the first sample where that fails (the caller then validates
    with ``check_inputs``, which names the problem). ``out[k]`` receives every confidence and
    k advances at a failure: no branch but the checks'."""
    k = 0
    for i in range(residuals.shape[0]):
        x = residuals[i]
        y = confidence[i]
        if not (x == 0.0 or x == 1.0) or not math.isfinite(y):
            return -1
        out[k] = y
        k += x == 1.0
    return k


def _count_changes(d: np.ndarray) -> int:
    """Number of positions i with d[i + 1] != d[i]."""
    k = 0
    for i in range(d.shape[0] - 1):
        k += d[i + 1] != d[i]
    return k


def _fill_group_ends(d: np.ndarray, ends: np.ndarray) -> None:
    """The last position of each tie group of ``d`` into ``ends`` (sized by
    :func:`_count_changes` + 1)."""
    k = 0
    for i in range(d.shape[0] - 1):
        if d[i + 1] != d[i]:
            ends[k] = i
            k += 1
    ends[k] = d.shape[0] - 1


def _walk_block(
    ascending: np.ndarray,
    ends: np.ndarray,
    c_fail: np.ndarray,
    g0: int,
    g1: int,
    n_groups: int,
    sums: np.ndarray,
    state: np.ndarray,
    out: np.ndarray,
) -> None:
    """Groups g0..g1-1 of the sorted confidences in descending order, d = ``ascending[::-1]``
    (tie groups ending at ``ends``, positions in d; every group one sample when ``ends`` is
    empty). ``ascending`` is read in place (contiguous: no strided reads).

    ``c_fail`` (ascending) are the failures' confidences, those at index < state[HI] not yet
    placed. ``sums`` = (N, F, smallest W reaching 95 % coverage, smallest TP reaching 95 % and
    80 % of the successes). Column j of ``out`` (8 rows, at least g1 - g0 + 1 columns)
    receives, for group g = g0 + j: rows 0, 1 the AURC factors W_{g+1} - W_{g-1} and L_g / W_g;
    2, 3 the AP_f-success factors TP_g - TP_{g-1} and TP_g / W_g; 4, 5 the AP_f-error factors
    l_g and (F - L_{g-1}) / (N - W_{g-1}) (used from g = 1 on); rows 6 and 7 hold W and L of
    groups g0 - 1 .. g1 - 1. ``state`` carries W and L of the group before, the integer sums and
    the threshold searches from block to block.

    Three loops: the merge of the failures into the groups (scalar, with the integer sums in
    int64, exact), the divisions (elementwise: vectorized, each the same IEEE division), the
    searches over the risks.
    """
    total, fails, reach_w, reach95, reach80 = sums[0], sums[1], sums[2], sums[3], sums[4]
    ties = ends.shape[0] > 0
    top = ascending.shape[0] - 1
    m = g1 - g0
    Wx = out[6]
    Lx = out[7]
    Wx[0] = state[W_PREV]
    Lx[0] = state[L_PREV]
    n_total = np.int64(total)
    augrc = np.int64(0)
    auroc = np.int64(0)
    hi = np.int64(state[HI])
    loss_sum = np.int64(Lx[0])
    w_before = np.int64(Wx[0])
    for j in range(m):
        g = g0 + j
        if ties:
            last = ends[g]
        else:
            last = g
        tau = ascending[top - last]
        loss = np.int64(0)
        while hi > 0 and c_fail[hi - 1] >= tau:
            hi -= 1
            loss += 1
        w = np.int64(last) + 1
        tp_before = w_before - loss_sum
        loss_sum += loss
        # sums of integers below 2^53: exact in any order
        augrc += loss * (2 * n_total - w_before - w)
        auroc += loss * (w - loss_sum + tp_before)
        Wx[j + 1] = w
        Lx[j + 1] = loss_sum
        w_before = w
    state[AUGRC] += float(augrc)
    state[AUROC] += float(auroc)
    state[HI] = float(hi)
    if g0 == 0:
        state[HEAD] = Lx[1]
    for j in range(m):
        w_before = Wx[j]
        w = Wx[j + 1]
        cum = Lx[j + 1]
        tp = w - cum
        out[1, j] = cum / w
        out[2, j] = tp - (w_before - Lx[j])
        out[3, j] = tp / w
        out[4, j] = cum - Lx[j]
        out[5, j] = (fails - Lx[j]) / (total - w_before)
    for j in range(m - 1):
        out[0, j] = Wx[j + 2] - Wx[j]
    if g1 < n_groups:
        w_next = float(ends[g1]) + 1.0 if ties else float(g1) + 1.0
    else:
        w_next = total
    out[0, m - 1] = w_next - Wx[m - 1]
    # TP is non-decreasing: a threshold is searched only in the block where TP reaches it
    tp95 = state[TP95]
    tp80 = state[TP80]
    if (tp95 != tp95 or tp80 != tp80) and Wx[m] - Lx[m] >= min(reach95, reach80):
        for j in range(m):
            tp = Wx[j + 1] - Lx[j + 1]
            if tp95 != tp95 and tp >= reach95:
                tp95 = Lx[j + 1]
            if tp80 != tp80 and tp >= reach80:
                tp80 = Lx[j + 1]
        state[TP95] = tp95
        state[TP80] = tp80
    found = state[FOUND_W] != 0.0
    working = state[WORKING]
    start = 0
    if not found and Wx[m] >= reach_w:
        while Wx[start + 1] < reach_w:
            start += 1
        found = True
        state[RISK_AT] = out[1, start]
    if found:
        for j in range(start, m):
            if out[1, j] < working:
                working = out[1, j]
    # the last group of risk <= 0.05, runs of SPAN groups skipped where L at the run's start
    # over W at its end (a lower bound of every risk in it; division is monotone) is above
    for stop in range(m, 0, -SPAN):
        first = max(stop - SPAN, 0)
        if Lx[first + 1] / Wx[stop] > 0.05:
            continue
        j = stop - 1
        while j >= first and out[1, j] > 0.05:
            j -= 1
        if j >= first:
            state[COVERED] = Wx[j + 1]
            break
    state[FOUND_W] = 1.0 if found else 0.0
    state[WORKING] = working
    state[W_PREV] = Wx[m]
    state[L_PREV] = Lx[m]


@functools.cache
def compiled() -> SimpleNamespace | None:
    """The passes of this module compiled by numba (imported here), or ``None`` where numba
    cannot be imported (the value-sort path then makes its NumPy passes)."""
    try:
        from numba import njit
    except ImportError:
        return None
    jit = njit(cache=True, error_model="numpy", nogil=True)
    return SimpleNamespace(
        binary_failures=jit(_binary_failures),
        count_changes=jit(_count_changes),
        fill_group_ends=jit(_fill_group_ends),
        walk_block=jit(_walk_block),
    )
