"""Compiled pass of the bootstrap over integer counts: AURC's arrays and the exact sums of AUGRC
and AUROC_f, for 0/1 residuals, one resample at a time (numba).

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
- AURC's one floating-point reduction stays NumPy's (``einsum`` over the rows of the same two
  contiguous arrays as before): the kernel writes its inputs, the coefficients
  W_{g+1} - W_{g-1} (exact) and the selective risks L_g / W_g (one IEEE division each,
  correctly rounded as in NumPy; no fast-math), and leaves the sum to NumPy.

numba is imported, and the kernel compiled, on the first call of :func:`compiled_pass` (about
2-3 s; ``import fdbench.metrics`` imports this module but not numba). The machine code is cached
next to this module (``cache=True``): later processes, dask workers included, load it instead
(numba's import and start, about 0.5-1 s, remain).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

#: Largest total weight of a row for which every partial sum of the kernel's integer products
#: is exact in float64 (W_tot^2 <= 2^53).
MAX_TOTAL = 94_906_265


def _divide(num: np.ndarray, den: np.ndarray) -> None:
    """num /= den elementwise (a compiled function of its own: LLVM vectorizes its loop)."""
    for j in range(num.shape[0]):
        num[j] = num[j] / den[j]


#: What :func:`_binary_curve_pass` calls to divide: :func:`_divide`, compiled by
#: :func:`compiled_pass` before the pass itself (numba resolves it when it compiles the pass).
divide = _divide


@functools.cache
def compiled_pass() -> Callable[..., None]:
    """:func:`_binary_curve_pass` compiled by numba (imported here: it costs ~0.5 s)."""
    from numba import njit

    jit = njit(cache=True, error_model="numpy", nogil=True)
    global divide
    divide = jit(_divide)
    return jit(_binary_curve_pass)


def _binary_curve_pass(
    counts: np.ndarray,
    order: np.ndarray,
    ends: np.ndarray,
    failed: np.ndarray,
    groups: np.ndarray,
    coef: np.ndarray,
    risks: np.ndarray,
    sums: np.ndarray,
) -> None:
    """One pass over each row of ``counts`` (B, M) in the order ``order`` (N,) of a CSF.

    ``ends`` (T,) are the positions in ``order`` of the last sample of each tie group (empty
    when every group is one sample), ``failed`` (N, 0/1) marks the failures in that order,
    ``groups`` the tie groups that hold a failure. With W_g, L_g the cumulative count of all
    samples and of the failures up to the end of group g (W_{-1} = L_{-1} = 0),
    n_g = W_g - W_{g-1} and l_g = L_g - L_{g-1}, writes per row b:

    - ``coef[b, g]`` = W_{g+1} - W_{g-1} (W_T = W_{T-1}; W_0 when T = 1),
    - ``risks[b, g]`` = L_g / W_g, 0 where W_g = 0,
    - ``sums[b]`` = (W_tot, L_tot, L at the first group of positive weight (0 when the row
      has no weight), sum_g l_g W_{g-1}, sum_g l_g n_g, sum_g l_g L_{g-1}, sum_g l_g^2), as
      float64.
    """
    rows = counts.shape[0]
    n = order.shape[0]
    t = n if ends.shape[0] == 0 else ends.shape[0]
    for b in range(rows):
        row = counts[b]
        W = coef[b]
        L = risks[b]
        w = np.int64(0)
        lo = np.int64(0)
        if ends.shape[0] == 0:
            for j in range(n):
                x = np.int64(row[order[j]])
                w += x
                lo += x * np.int64(failed[j])
                W[j] = w
                L[j] = lo
        else:
            start = 0
            for g in range(t):
                stop = ends[g] + 1
                for j in range(start, stop):
                    x = np.int64(row[order[j]])
                    w += x
                    lo += x * np.int64(failed[j])
                W[g] = w
                L[g] = lo
                start = stop
        d_lw = np.int64(0)
        d_ln = np.int64(0)
        d_lp = np.int64(0)
        d_ll = np.int64(0)
        for g in groups:
            w_prev = np.int64(W[g - 1]) if g > 0 else np.int64(0)
            l_prev = np.int64(L[g - 1]) if g > 0 else np.int64(0)
            loss = np.int64(L[g]) - l_prev
            d_lw += loss * w_prev
            d_ln += loss * (np.int64(W[g]) - w_prev)
            d_lp += loss * l_prev
            d_ll += loss * loss
        first = 0
        while first < t and W[first] == 0:
            L[first] = 0.0
            first += 1
        sums[b, 0] = W[t - 1]
        sums[b, 1] = L[t - 1]
        sums[b, 2] = L[first] if first < t else 0.0
        sums[b, 3] = d_lw
        sums[b, 4] = d_ln
        sums[b, 5] = d_lp
        sums[b, 6] = d_ll
        divide(L[first:], W[first:])
        before = 0.0
        for g in range(t - 1):
            here = W[g]
            W[g] = W[g + 1] - before
            before = here
        W[t - 1] = W[t - 1] - before
