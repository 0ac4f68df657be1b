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
    d: np.ndarray,
    ends: np.ndarray,
    c_fail: np.ndarray,
    g0: int,
    g1: int,
    n_groups: int,
    sums: np.ndarray,
    state: np.ndarray,
    out: np.ndarray,
) -> None:
    """Groups g0..g1-1 of descending ``d`` (tie groups ending at ``ends``; every group one
    sample when ``ends`` is empty).

    ``c_fail`` (ascending) are the failures' confidences, those at index < state[HI] not yet
    placed. ``sums`` = (N, F, smallest W reaching 95 % coverage, smallest TP reaching 95 % and
    80 % of the successes). Rows of ``out`` receive, per group g: 0, 1 the AURC factors
    W_{g+1} - W_{g-1} and L_g / W_g; 2, 3 the AP_f-success factors TP_g - TP_{g-1} and
    TP_g / W_g; 4, 5 the AP_f-error factors l_g and (F - L_{g-1}) / (N - W_{g-1}) (0 where
    l_g = 0), for g >= 1: in block 0 they start at column 0 with group 1. ``state`` carries W
    and L of the group before, the integer sums and the threshold searches from block to block.
    """
    total, fails, reach_w, reach95, reach80 = sums[0], sums[1], sums[2], sums[3], sums[4]
    ties = ends.shape[0] > 0
    w_prev = state[W_PREV]
    l_prev = state[L_PREV]
    augrc = state[AUGRC]
    auroc = state[AUROC]
    hi = int(state[HI])
    tp95 = state[TP95]
    tp80 = state[TP80]
    found = state[FOUND_W] != 0.0
    working = state[WORKING]
    covered = state[COVERED]
    shift = 1 if g0 == 0 else 0
    for g in range(g0, g1):
        j = g - g0
        if ties:
            last = ends[g]
            w = float(last) + 1.0
        else:
            last = g
            w = float(g) + 1.0
        tau = d[last]
        loss = 0
        while hi > 0 and c_fail[hi - 1] >= tau:
            hi -= 1
            loss += 1
        lg = float(loss)
        cum = l_prev + lg
        if g + 1 < n_groups:
            w_next = float(ends[g + 1]) + 1.0 if ties else float(g) + 2.0
        else:
            w_next = total
        tp = w - cum
        tp_before = w_prev - l_prev
        # sums of integers below 2^53: exact in any order
        augrc += lg * (2.0 * total - w_prev - w)
        auroc += lg * (tp + tp_before)
        risk = cum / w
        out[0, j] = w_next - w_prev
        out[1, j] = risk
        out[2, j] = tp - tp_before
        out[3, j] = tp / w
        if g == 0:
            state[HEAD] = cum
        else:
            out[4, j - shift] = lg
            out[5, j - shift] = (fails - l_prev) / (total - w_prev) if loss else 0.0
        if tp95 != tp95 and tp >= reach95:
            tp95 = cum
        if tp80 != tp80 and tp >= reach80:
            tp80 = cum
        if found:
            if risk < working:
                working = risk
        elif w >= reach_w:
            found = True
            state[RISK_AT] = risk
            working = risk
        if risk <= 0.05:
            covered = w
        w_prev = w
        l_prev = cum
    state[W_PREV] = w_prev
    state[L_PREV] = l_prev
    state[AUGRC] = augrc
    state[AUROC] = auroc
    state[HI] = float(hi)
    state[TP95] = tp95
    state[TP80] = tp80
    state[FOUND_W] = 1.0 if found else 0.0
    state[WORKING] = working
    state[COVERED] = covered


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
