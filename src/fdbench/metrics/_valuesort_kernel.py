"""Compiled passes of the value-sort path (:mod:`fdbench.metrics._valuesort`), with numba.

- :func:`_binary_failures` checks the inputs and extracts the failures and the successes in
  one pass over the residuals and confidences, where the NumPy path makes six
  (``check_inputs``' finiteness checks with their temporaries, the 0/1 test, the mask and the
  gather).
- :func:`_narrow` and :func:`_widen` let confidences that are all float32 values be sorted
  as float32 (``np.sort`` takes about half the time) and widened back, the same values bit
  for bit; :func:`_count_changes` (counted while widening there) and
  :func:`_fill_group_ends` find the tie groups of the sorted confidences (NumPy: a
  comparison of neighbours per block, twice).
- :func:`_walk_block` walks one block of tie groups: it places the smaller class (the
  failures, or the successes where they are fewer) in their groups (a merge of the two sorted
  arrays instead of binary searches), accumulates the cumulative weight W and loss L of each
  group, every integer sum and threshold search of the suite, and logs each einsum chunk's
  three sums of rounded terms (AURC, AP_f success, AP_f error).

Every value is the NumPy path's bit for bit:

- each factor and product is one IEEE operation on the same operands as NumPy's elementwise
  calls (compiled without fast-math: no reassociation, no fused multiply-add, divisions
  correctly rounded; an elementwise loop rounds alike whether vectorized or not);
- the integer sums (AUGRC, AUROC_f) are int64 sums of integers below 2^53, exact in any order;
- the sums of rounded terms add the products in the order of the NumPy path's
  ``np.einsum("ij,ij->i")`` (:func:`einsum_chunk_sum`, the order of
  :func:`fdbench.metrics._curve_kernel._aurc_sum`): chunks of NumPy's buffer size
  (:data:`CHUNK`, whatever :func:`numpy.setbufsize` says), two lanes nested by eight. That
  order depends on the instructions NumPy's build targets; it is checked once per process
  against ``einsum`` itself (:func:`order_holds`), and where it differs the value-sort path
  makes its NumPy passes;
- the threshold searches compare the same values (a run of groups is skipped only where a
  lower bound of its risks, itself a correctly rounded quotient, already decides).

numba is imported, and the passes compiled, on the first call of :func:`compiled` (about 2.3 s
in a process that has not imported numba, the machine code loaded from its cache next to this
module; ~8 s the first time on a machine); ``import fdbench.metrics`` imports neither. The
value-sort path therefore takes these passes only from :data:`COMPILED_MIN_SAMPLES` samples on.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np

from ._ordered_sums import EINSUM_BUFFER, einsum_chunk_sum, einsum_chunk_sum3
from ._packed_order import _monotone

#: Samples from which ``evaluate_all``'s value-sort path takes the compiled passes (below it,
#: and where numba is missing, the NumPy passes; the values are the same).
COMPILED_MIN_SAMPLES = 1 << 19
#: Samples that :func:`_count_failures` checks between two tests of what it found.
COUNT_BLOCK = 4096

#: Entries of the walk's state array (float64; positions and counts are exact integers).
W_PREV, L_PREV, AUGRC, AUROC, HI, HEAD, TP95, TP80, FOUND_W, RISK_AT, WORKING, COVERED = range(12)
STATE_SIZE = 12
#: Elements per inner loop of ``np.einsum`` over a row (NumPy's default buffer size, which
#: einsum keeps after :func:`numpy.setbufsize`).
CHUNK = EINSUM_BUFFER
#: Groups per run of the walk's search for the last risk <= 0.05.
SPAN = 256


def _binary_failures(residuals: np.ndarray, confidence: np.ndarray, out: np.ndarray) -> int:
    """The number k of samples with residual 1, their confidences written in sample order to
    ``out[:k]`` and the others' in reverse sample order to ``out[k:]`` (``out`` as long as
    ``confidence``), when every confidence is finite and every residual is 0 or 1; -1 at the
    first sample where that fails (the caller then validates with ``check_inputs``, which
    names the problem). ``out[k]`` and ``out[j]`` receive every confidence, and k advances
    at a failure, j retreats at a success: no branch but the checks'."""
    k = 0
    j = residuals.shape[0] - 1
    for i in range(residuals.shape[0]):
        x = residuals[i]
        y = confidence[i]
        if not (x == 0.0 or x == 1.0) or not math.isfinite(y):
            return -1
        out[k] = y
        out[j] = y
        failure = int(x == 1.0)
        k += failure
        j -= 1 - failure
    return k


def _count_failures(residuals: np.ndarray, confidence: np.ndarray) -> int:
    """The number of samples with residual 1 when every confidence is finite and every
    residual is 0 or 1, else -1 (:func:`_binary_failures`' checks, without its N-sized
    output: the value-sort path's two-thread mode, whose sort holds a copy of N). A block of
    :data:`COUNT_BLOCK` samples at a time without branches inside it (vectorised)."""
    n = residuals.shape[0]
    k = 0
    for start in range(0, n, COUNT_BLOCK):
        valid = True
        for i in range(start, min(start + COUNT_BLOCK, n)):
            x = residuals[i]
            valid = valid & ((x == 0.0) | (x == 1.0)) & math.isfinite(confidence[i])
            k += x == 1.0
        if not valid:
            return -1
    return k


def _extract_class(
    residuals: np.ndarray, confidence: np.ndarray, value: float, out: np.ndarray
) -> None:
    """The confidences of the samples whose residual is ``value`` (1.0: the failures, 0.0: the
    successes) to ``out`` in sample order (``out`` one longer than their number: every
    confidence is written at the next free place)."""
    k = 0
    for i in range(residuals.shape[0]):
        out[k] = confidence[i]
        k += residuals[i] == value


def _count_changes(d: np.ndarray) -> int:
    """Number of positions i with d[i + 1] != d[i]."""
    k = 0
    for i in range(d.shape[0] - 1):
        k += d[i + 1] != d[i]
    return k


def _narrow(c: np.ndarray, buffer: np.ndarray) -> bool:
    """Whether every confidence is a float32 value other than -0.0 (so that its float32
    holds it exactly, and equal confidences have equal bits); their float32 copies are
    written to the upper half of ``buffer`` (float64, as long as ``c``), which
    :func:`_widen` reads after they are sorted there. Stops at the first block of
    :data:`COUNT_BLOCK` samples that holds another value (at once on float64 data)."""
    n = c.shape[0]
    narrow = buffer.view(np.float32)[n:]
    for start in range(0, n, COUNT_BLOCK):
        exact = True
        for i in range(start, min(start + COUNT_BLOCK, n)):
            x = c[i]
            y = np.float32(x)
            narrow[i] = y
            exact &= (np.float64(y) == x) & ~((x == 0.0) & np.signbit(x))
        if not exact:
            return False
    return True


def _widen(buffer: np.ndarray) -> int:
    """``buffer`` = the float32 values in its upper half (:func:`_narrow`), sorted, as float64,
    in place (writing element i overwrites float32 values before i + 1, already read); the
    number of value changes between neighbours (:func:`_count_changes` of the result)."""
    n = buffer.shape[0]
    narrow = buffer.view(np.float32)[n:]
    changes = 0
    before = narrow[0] if n else np.float32(0.0)
    for i in range(n):
        y = narrow[i]
        buffer[i] = np.float64(y)
        changes += y != before
        before = y
    return changes


def _fill_group_ends(d: np.ndarray, ends: np.ndarray) -> None:
    """The last position of each tie group of ``d`` into ``ends`` (sized by
    :func:`_count_changes` + 1). Without a branch: position i is written to the next slot
    each time and kept only where the value changes after it (a slot past the last change is
    overwritten by the last position), 2-3x faster where changes are frequent but not
    certain (softmax maxima of float32 logits, rounded confidences)."""
    k = 0
    for i in range(d.shape[0] - 1):
        ends[k] = i
        k += d[i + 1] != d[i]
    ends[k] = d.shape[0] - 1


def _group_terms(ascending: np.ndarray, ends: np.ndarray, first: int, out: np.ndarray) -> None:
    """out[k] = n_g * tau_g of tie group g = first + k of d = ``ascending[::-1]`` (its size
    ends[g] - ends[g - 1], ends[-1] taken as -1, times its confidence), each one product of a
    whole number and a float64 as NumPy forms it."""
    top = ascending.shape[0] - 1
    for k in range(out.shape[0]):
        g = first + k
        last = ends[g]
        before = ends[g - 1] if g > 0 else -1
        out[k] = float(last - before) * ascending[top - last]


def _ordered_sums(p: np.ndarray, m: int, m_last: int, acc: np.ndarray) -> None:
    """acc[k] += the sum of row k + 1 of ``p`` over columns 0..m-1 (row 3: 0..m_last-1, with
    m_last <= m) as ``np.einsum("ij,ij->i")`` sums a row of products: chunks of
    :data:`CHUNK` columns (NumPy's buffer) each summed by :func:`einsum_chunk_sum`
    (:func:`_chunk_sums`) and added to the running total in turn. Blocks of whole chunks
    continue a row exactly."""
    log = np.empty(((m + CHUNK - 1) // CHUNK, 3))
    chunk_sums(p, m, m_last, log)
    for k in range(log.shape[0]):
        acc[0] = acc[0] + log[k, 0]
        acc[1] = acc[1] + log[k, 1]
        acc[2] = acc[2] + log[k, 2]


def _chunk_sums(p: np.ndarray, m: int, m_last: int, log: np.ndarray) -> None:
    """log[k] = what :func:`_ordered_sums` adds to its three totals for chunk k of rows 1-3
    of ``p`` (columns 0..m-1, row 3 0..m_last-1): each row's :func:`einsum_chunk_sum`, -0.0
    where row 3 adds nothing (x + -0.0 is x for every x, so that adding the log in order gives
    :func:`_ordered_sums`' totals bit for bit)."""
    k = 0
    for start in range(0, m, CHUNK):
        stop = min(start + CHUNK, m)
        if min(stop, m_last) == stop:
            a, b, c = chunk_sum3(p[1], p[2], p[3], start, stop)
            log[k, 0] = a
            log[k, 1] = b
            log[k, 2] = c
        else:
            log[k, 0] = chunk_sum(p[1], start, stop)
            log[k, 1] = chunk_sum(p[2], start, stop)
            log[k, 2] = chunk_sum(p[3], start, m_last) if m_last > start else -0.0
        k += 1


def _min_from(values: np.ndarray, start: int, stop: int, initial: float) -> float:
    """The smallest of ``initial`` and values[start:stop] (no NaN among them), in eight
    running minima side by side (independent comparisons instead of one chain; a minimum is
    exact in any order, and a risk L / W is never -0.0)."""
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = initial
    j = start
    while j + 8 <= stop:
        m0 = min(m0, values[j])
        m1 = min(m1, values[j + 1])
        m2 = min(m2, values[j + 2])
        m3 = min(m3, values[j + 3])
        m4 = min(m4, values[j + 4])
        m5 = min(m5, values[j + 5])
        m6 = min(m6, values[j + 6])
        m7 = min(m7, values[j + 7])
        j += 8
    while j < stop:
        m0 = min(m0, values[j])
        j += 1
    return min(min(min(m0, m1), min(m2, m3)), min(min(m4, m5), min(m6, m7)))


def _walk_block(
    ascending: np.ndarray,
    ends: np.ndarray,
    c_minor: np.ndarray,
    flip: int,
    g0: int,
    g1: int,
    n_groups: int,
    sums: np.ndarray,
    state: np.ndarray,
    rows: np.ndarray,
    log: np.ndarray,
) -> None:
    """Groups g0..g1-1 of the sorted confidences in descending order, d = ``ascending[::-1]``
    (tie groups ending at ``ends``, positions in d; every group one sample when ``ends`` is
    empty). ``ascending`` is read in place (contiguous: no strided reads). g0 is a multiple of
    :data:`CHUNK`.

    ``c_minor`` (ascending) are the confidences of one class, those at index < state[HI] not
    yet placed: the failures' (``flip`` 0), or the successes' (``flip`` 1, where they are
    fewer; a group's loss is then its size less the successes placed in it). ``sums`` =
    (N, F, smallest W reaching 95 % coverage, smallest TP reaching 95 % and 80 % of the
    successes). ``rows`` (6, at least g1 - g0 + 2) is scratch: row 0 the risks
    L_g / W_g, rows 1-3 the products of the sums of AURC, (W_{g+1} - W_{g-1}) L_g / W_g, of
    AP_f success, (TP_g - TP_{g-1}) (TP_g / W_g), and of AP_f error, for group g + 1,
    l_{g+1} ((F - L_g) / (N - W_g)) (each factor and product one IEEE operation on the
    operands of the NumPy path), rows 4 and 5 W and L of groups g0 - 1 .. g1. ``state``
    carries W and L of the group before, the integer sums and the threshold searches from
    block to block; ``log`` (one row per einsum chunk of the whole walk) receives the three
    sums of products of each chunk of the block (:func:`_chunk_sums`).

    The merge of the class into the groups is a scalar loop (the integer sums in int64,
    exact; without ties a group holds at most one of the class, a comparison's 0 or 1), the
    divisions and products an elementwise loop (vectorized: elementwise operations round
    alike in any order), the sums of products follow NumPy's order.
    """
    total, fails, reach_w, reach95, reach80 = sums[0], sums[1], sums[2], sums[3], sums[4]
    ties = ends.shape[0] > 0
    top = ascending.shape[0] - 1
    m = g1 - g0
    Wx = rows[4]
    Lx = rows[5]
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
        w = np.int64(last) + 1
        if ties:  # a group of one sample holds at most one of the class: no branch there
            hits = np.int64(hi > 0 and c_minor[hi - 1] >= tau)
            hi -= hits
            if w - w_before > 1:
                while hi > 0 and c_minor[hi - 1] >= tau:
                    hi -= 1
                    hits += 1
            loss = (w - w_before - hits) if flip else hits
        else:  # distinct confidences: at most one of the class per group, without a branch
            hit = np.int64(hi > 0 and c_minor[hi - 1] >= tau)
            hi -= hit
            loss = hit ^ flip
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
    # W and L of group g1 (the next block's first; W = N after the last group)
    if g1 < n_groups:
        last = ends[g1] if ties else g1
        Wx[m + 1] = float(last) + 1.0
        tau = ascending[top - last]
        k = hi
        while k > 0 and c_minor[k - 1] >= tau:
            k -= 1
        size = float(last) + 1.0 - Wx[m]
        Lx[m + 1] = Lx[m] + ((size - float(hi - k)) if flip else float(hi - k))
    else:
        Wx[m + 1] = total
        Lx[m + 1] = Lx[m]
    risks = rows[0]
    for j in range(m):
        w_before = Wx[j]
        w = Wx[j + 1]
        cum = Lx[j + 1]
        tp = w - cum
        risk = cum / w
        risks[j] = risk
        rows[1, j] = (Wx[j + 2] - w_before) * risk
        rows[2, j] = (tp - (w_before - Lx[j])) * (tp / w)
        rows[3, j] = (Lx[j + 2] - cum) * ((fails - cum) / (total - w))
    chunk_sums(rows, m, m if g1 < n_groups else m - 1, log[g0 // CHUNK :])
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
        state[RISK_AT] = risks[start]
    if found:
        working = min_from(risks, start, m, working)
    # the last group of risk <= 0.05, runs of SPAN groups skipped where L at the run's start
    # over W at its end (a lower bound of every risk in it; division is monotone) is above
    for stop in range(m, 0, -SPAN):
        first = max(stop - SPAN, 0)
        if Lx[first + 1] / Wx[stop] > 0.05:
            continue
        j = stop - 1
        while j >= first and risks[j] > 0.05:
            j -= 1
        if j >= first:
            state[COVERED] = Wx[j + 1]
            break
    state[FOUND_W] = 1.0 if found else 0.0
    state[WORKING] = working
    state[W_PREV] = Wx[m]
    state[L_PREV] = Lx[m]


def order_holds(ordered_sums: Callable[..., None]) -> bool:
    """Whether ``ordered_sums`` (compiled :func:`_ordered_sums`) of the products of two rows
    equals ``np.einsum("ij,ij->i")`` of the rows bit for bit, on probes whose sums change with
    the order of the additions, the lane count and fused multiply-adds (integer coefficients
    below 2^40, factors of random signs and magnitudes over 2^-60..2^60), rows shorter than
    eight, than a chunk and longer than two chunks, the third row one shorter."""
    rng = np.random.default_rng(37)
    for n in (1, 2, 13, 1029, 2 * CHUNK + 13):
        a = rng.integers(0, 2**40, (3, n)).astype(np.float64)
        b = rng.normal(size=(3, n)) * 2.0 ** rng.integers(-60, 61, (3, n))
        for n_last in (n, n - 1):
            p = np.zeros((4, n))
            p[1:] = a * b
            acc = np.zeros(3)
            ordered_sums(p, n, n_last, acc)
            want = [np.einsum("ij,ij->i", a[k : k + 1, :n], b[k : k + 1, :n])[0] for k in (0, 1)]
            want.append(np.einsum("ij,ij->i", a[2:, :n_last], b[2:, :n_last])[0])
            if acc.tobytes() != np.array(want).tobytes():
                return False
    return True


#: What :func:`_walk_block` calls: compiled by :func:`compiled` before the walk itself (numba
#: resolves them when it compiles the walk).
chunk_sum = einsum_chunk_sum
chunk_sum3 = einsum_chunk_sum3
chunk_sums = _chunk_sums
ordered_sums = _ordered_sums
min_from = _min_from


@functools.cache
def compiled() -> SimpleNamespace | None:
    """The passes of this module compiled by numba (imported here), or ``None`` where numba
    cannot be imported or this NumPy's ``einsum`` adds in another order (:func:`order_holds`);
    the value-sort path then makes its NumPy passes."""
    try:
        from numba import njit
    except ImportError:
        return None
    jit = njit(cache=True, error_model="numpy", nogil=True)
    global chunk_sum, chunk_sum3, chunk_sums, ordered_sums, min_from
    chunk_sum = jit(einsum_chunk_sum)
    min_from = jit(_min_from)
    chunk_sum3 = jit(einsum_chunk_sum3)
    chunk_sums = jit(_chunk_sums)
    ordered_sums = jit(_ordered_sums)
    if not order_holds(ordered_sums):
        return None
    return SimpleNamespace(
        binary_failures=jit(_binary_failures),
        count_failures=jit(_count_failures),
        extract_class=jit(_extract_class),
        count_changes=jit(_count_changes),
        narrow=jit(_narrow),
        widen=jit(_widen),
        fill_group_ends=jit(_fill_group_ends),
        group_terms=jit(_group_terms),
        monotone=jit(_monotone),
        walk_block=jit(_walk_block),
    )
