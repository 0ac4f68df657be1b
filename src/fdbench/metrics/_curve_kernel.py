"""Compiled pass of the bootstrap over integer counts: the exact sums of AUGRC and AUROC_f and
AURC's sum, for 0/1 residuals, one resample and one CSF at a time (numba).

Replaces, for integer weights and the metrics that need no cumulative array beyond AURC's,
:func:`fdbench.metrics._core.binary_cumulative` followed by
:func:`~fdbench.metrics._core.augrc_auroc_binary` and
:func:`~fdbench.metrics._core.aurc_from_cum`, with the same values bit for bit:

- Every sum of counts is an integer sum (int64), exact in any order; W and L are written as
  float64 integers, exact below 2^53.
- The sums of AUGRC and AUROC_f are sums of products of integers, each of them and every
  partial sum at most W_tot^2 (all terms are non-negative). While W_tot^2 <= 2^53
  (W_tot <= :data:`MAX_TOTAL`) NumPy's floating-point dot products of the same integers are
  exact too, in whatever order they add: the integer sums here are the same numbers.
- AURC's one floating-point reduction sums the products of the same two rows as the NumPy
  path, the coefficients W_{g+1} - W_{g-1} (exact) and the selective risks L_g / W_g (one
  IEEE division each, correctly rounded as in NumPy; no fast-math), in the order in which
  that path's ``einsum("ij,ij->i")`` adds them (:func:`_dot` spells it out): one row at a
  time in a scratch row that stays in cache, with no (rows, T) arrays to write and read back.
  That order depends on the instructions NumPy's build targets; it is checked once per
  process against ``einsum`` itself (:func:`einsum_order_holds`), and where it differs the
  bootstrap takes the NumPy path. Which order a resample's sum follows (one loop over the row,
  or pieces of :data:`~fdbench.metrics._ordered_sums.EINSUM_BUFFER`) is the caller's
  ``buffer`` of that row: the NumPy path summed a resample in pieces when its block of
  resamples held that one row only.

The pass takes every resample (rows outer) and every CSF of the same samples (inner) in one
call: a row of counts is read by all CSFs while it is in cache, and the CSFs' orders stream
through it (row by row per CSF, a block of rows of int32 counts spilled the 512 KiB L2 cache).
Counts of at most 255 are passed as uint8 (a row of 10,000 is then 10 KB).

numba is imported, and the kernel compiled, on the first call of :func:`compiled_pass` (about
2-3 s; ``import fdbench.metrics`` imports this module but not numba). The machine code is cached
next to this module (``cache=True``): later processes, dask workers included, load it instead
(numba's import and start, about 0.5-1 s, remain).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ._ordered_sums import EINSUM_BUFFER

#: Largest total weight of a row for which every partial sum of the kernel's integer products
#: is exact in float64 (W_tot^2 <= 2^53).
MAX_TOTAL = 94_906_265


def _divide(num: np.ndarray, den: np.ndarray) -> None:
    """num /= den elementwise (a compiled function of its own: LLVM vectorizes its loop)."""
    for j in range(num.shape[0]):
        num[j] = num[j] / den[j]


_1, _2, _3, _4, _5, _6, _7, _8, _9 = (np.uint64(k) for k in range(1, 10))


def _aurc_sum(cum: np.ndarray, risks: np.ndarray, buffer: int) -> float:
    """sum_g (cum[g+2] - cum[g]) risks[g] over the T = len(risks) groups (``cum`` (T+2,)), the
    products and sums as NumPy's ``einsum("ij,ij->i")`` forms them from a row of each factor,
    contiguous float64, on x86-64 (``double_sum_of_products_contig_contig_outstride0_two`` of
    einsum_sumprod.c.src at the 2-lane width of the baseline's SIMD, each product and sum
    rounded on its own; the differences of integers below 2^53 are exact).

    Per inner loop of ``buffer`` elements (0: one loop over the row), lane k (0, 1) adds the
    products p_g, g = k (mod 2), eight elements at a time nested from the last pair to the
    first, v = p_g + (p_{g+2} + (p_{g+4} + (p_{g+6} + v))), then the remaining pairs one by one
    (a missing partner adds 0); each loop's v_0 + v_1 is added to the result, which starts at 0.
    """
    n = risks.shape[0]
    step = n if buffer == 0 else buffer
    out = 0.0
    for start in range(0, n, step):
        stop = min(start + step, n)
        v0 = 0.0
        v1 = 0.0
        blocks = (stop - start) // 8
        for k in range(blocks):
            # unsigned indices (offsets too): numba adds no wraparound test to each read
            j = np.uint64(start + 8 * k)
            c0, c1, c2, c3 = cum[j], cum[j + _1], cum[j + _2], cum[j + _3]
            c4, c5, c6, c7 = cum[j + _4], cum[j + _5], cum[j + _6], cum[j + _7]
            c8, c9 = cum[j + _8], cum[j + _9]
            x0, x1, x2, x3 = risks[j], risks[j + _1], risks[j + _2], risks[j + _3]
            x4, x5, x6, x7 = risks[j + _4], risks[j + _5], risks[j + _6], risks[j + _7]
            v0 = (c2 - c0) * x0 + ((c4 - c2) * x2 + ((c6 - c4) * x4 + ((c8 - c6) * x6 + v0)))
            v1 = (c3 - c1) * x1 + ((c5 - c3) * x3 + ((c7 - c5) * x5 + ((c9 - c7) * x7 + v1)))
        j = start + 8 * blocks
        while j < stop:
            v0 = (cum[j + 2] - cum[j]) * risks[j] + v0
            v1 = ((cum[j + 3] - cum[j + 1]) * risks[j + 1] if j + 1 < stop else 0.0) + v1
            j += 2
        out = out + (v0 + v1)
    return out


#: What :func:`_row_pass` calls to divide and to sum: :func:`_divide` and
#: :func:`_aurc_sum`, compiled by :func:`compiled_pass` before the pass itself (numba resolves
#: them when it compiles the pass).
divide = _divide
aurc_sum = _aurc_sum


def einsum_order_holds(rowdot: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> bool:
    """Whether :data:`aurc_sum` equals ``rowdot`` (the NumPy path's ``einsum("ij,ij->i")``) of
    the coefficients and risks bit for bit, on probes whose sums change with the order of the
    additions, the lane count and fused multiply-adds (integer coefficients below 2^40, risks
    of random signs and magnitudes over 2^-60..2^60): a block of three rows, and a block of
    one row longer than two of ``einsum``'s buffers, both with a tail."""
    rng = np.random.default_rng(37)
    for rows, t in ((3, 1029), (1, 2 * EINSUM_BUFFER + 13)):
        cum = np.cumsum(rng.integers(0, 2**30, (rows, t + 2)), axis=1).astype(np.float64)
        risks = rng.normal(size=(rows, t)) * 2.0 ** rng.integers(-60, 61, (rows, t))
        buffer = EINSUM_BUFFER if rows == 1 else 0
        got = np.array([aurc_sum(cum[b], risks[b], buffer) for b in range(rows)])
        if got.tobytes() != rowdot(cum[:, 2:] - cum[:, :-2], risks).tobytes():
            return False
    return True


@functools.cache
def compiled_pass() -> Callable[..., None] | None:
    """:func:`_curve_pass` compiled by numba (imported here: it costs ~0.5 s), or ``None``
    where this NumPy's ``einsum`` adds in another order (:func:`einsum_order_holds`)."""
    from numba import njit

    from ._core import _rowdot

    jit = njit(cache=True, error_model="numpy", nogil=True)
    global divide, aurc_sum, row_pass
    divide = jit(_divide)
    aurc_sum = jit(_aurc_sum)
    if not einsum_order_holds(_rowdot):
        return None
    row_pass = jit(_row_pass)
    return jit(_curve_pass)


def _row_pass(
    row: np.ndarray,
    order: np.ndarray,
    ends: np.ndarray,
    failed: np.ndarray,
    groups: np.ndarray,
    cum: np.ndarray,
    risks: np.ndarray,
    out: np.ndarray,
    buffer: int,
) -> None:
    """One pass over a row of counts ``row`` (M,) in the order ``order`` (N,) of a CSF.

    ``ends`` (T,) are the positions in ``order`` of the last sample of each tie group (empty
    when every group is one sample), ``failed`` (N, 0/1) marks the failures in that order,
    ``groups`` the tie groups that hold a failure (ascending). With W_g, L_g the cumulative
    count of all samples and of the failures up to the end of group g (W_{-1} = L_{-1} = 0),
    n_g = W_g - W_{g-1} and l_g = L_g - L_{g-1}, fills the scratch rows

    - ``cum`` (>= T+2) = (0, W_0, ..., W_{T-1}, W_{T-1}): AURC's coefficient of group g is
      cum[g+2] - cum[g] = W_{g+1} - W_{g-1} (W_T = W_{T-1}),
    - ``risks`` (>= T+1) = (0, r_0, ..., r_{T-1}), first (0, L_0, ..., L_{T-1}), then the
      selective risks r_g = L_g / W_g, 0 where W_g = 0,

    and writes ``out`` (6,) = (W_tot, L_tot, L at the first group of positive weight (0 when
    the row has no weight), sum_g l_g W_{g-1}, sum_g l_g n_g, :func:`_aurc_sum` of ``cum`` and
    the risks with ``buffer``), as float64. The two sums over the failures' groups are of
    products of integers, each term and partial sum at most W_tot^2 <= 2^53: exact in float64
    in any order, so they are added in four interleaved pairs of sums (one pair would wait on
    each addition's latency; AUGRC's third sum, sum_g l_g L_{g-1} + 1/2 l_g^2 = 1/2 L_tot^2,
    needs no pass).
    """
    n = order.shape[0]
    t = n if ends.shape[0] == 0 else ends.shape[0]
    W = cum[1 : t + 1]
    L = risks[1 : t + 1]
    cum[0] = 0.0
    risks[0] = 0.0
    w = np.int64(0)
    lo = np.int64(0)
    # unsigned indices: numba adds no wraparound test to each read (order holds positions)
    if ends.shape[0] == 0:
        for j in range(n):
            x = np.int64(row[np.uint64(order[j])])
            w += x
            lo += x * np.int64(failed[j])
            W[j] = w
            L[j] = lo
    else:
        start = 0
        for g in range(t):
            stop = ends[g] + 1
            for j in range(start, stop):
                x = np.int64(row[np.uint64(order[j])])
                w += x
                lo += x * np.int64(failed[j])
            W[g] = w
            L[g] = lo
            start = stop
    # cum[g] = W_{g-1}, risks[g] = L_{g-1}, also for g = 0
    lw0 = lw1 = lw2 = lw3 = 0.0
    ln0 = ln1 = ln2 = ln3 = 0.0
    m = groups.shape[0]
    for k in range(0, m - 3, 4):
        g0, g1 = np.uint64(groups[k]), np.uint64(groups[k + 1])
        g2, g3 = np.uint64(groups[k + 2]), np.uint64(groups[k + 3])
        l0 = L[g0] - risks[g0]
        l1 = L[g1] - risks[g1]
        l2 = L[g2] - risks[g2]
        l3 = L[g3] - risks[g3]
        lw0 += l0 * cum[g0]
        lw1 += l1 * cum[g1]
        lw2 += l2 * cum[g2]
        lw3 += l3 * cum[g3]
        ln0 += l0 * (W[g0] - cum[g0])
        ln1 += l1 * (W[g1] - cum[g1])
        ln2 += l2 * (W[g2] - cum[g2])
        ln3 += l3 * (W[g3] - cum[g3])
    for k in range(m - m % 4, m):
        g = groups[k]
        loss = L[g] - risks[g]
        lw0 += loss * cum[g]
        ln0 += loss * (W[g] - cum[g])
    first = 0
    while first < t and W[first] == 0:
        L[first] = 0.0
        first += 1
    out[0] = W[t - 1]
    out[1] = L[t - 1]
    out[2] = L[first] if first < t else 0.0
    out[3] = (lw0 + lw1) + (lw2 + lw3)
    out[4] = (ln0 + ln1) + (ln2 + ln3)
    divide(L[first:], W[first:])
    cum[t + 1] = W[t - 1]
    out[5] = aurc_sum(cum[: t + 2], L, buffer)


#: What :func:`_curve_pass` calls per row and CSF: :func:`_row_pass`, compiled by
#: :func:`compiled_pass` before the pass.
row_pass = _row_pass


def _curve_pass(
    counts: np.ndarray,
    orders: np.ndarray,
    ends: np.ndarray,
    ends_at: np.ndarray,
    failed: np.ndarray,
    groups: np.ndarray,
    groups_at: np.ndarray,
    buffers: np.ndarray,
    sums: np.ndarray,
) -> None:
    """:func:`_row_pass` of every row b of ``counts`` (B, M) and every CSF c of the same N
    samples: ``orders`` (C, N) and ``failed`` (C, N) row c, ``ends`` and ``groups`` those of
    CSF c at ``ends[ends_at[c]:ends_at[c + 1]]`` and ``groups[groups_at[c]:groups_at[c + 1]]``,
    ``buffers[b]`` the ``buffer`` of row b; writes ``sums[c, b]`` (``sums`` (C, B, 6))."""
    n_csfs, n = orders.shape
    cum = np.empty(n + 2)
    risks = np.empty(n + 1)
    for b in range(counts.shape[0]):
        row = counts[b]
        for c in range(n_csfs):
            row_pass(
                row,
                orders[c],
                ends[ends_at[c] : ends_at[c + 1]],
                failed[c],
                groups[groups_at[c] : groups_at[c + 1]],
                cum,
                risks,
                sums[c, b],
                buffers[b],
            )
