"""Sums in the order NumPy adds, fed in pieces: the values of NumPy's reductions without the
arrays of N they would need.

- :class:`RowDot`: ``np.einsum("ij,ij->i")`` of two long rows, chunk by chunk
  (:data:`EINSUM_BUFFER` products per chunk, each summed as :func:`einsum_chunk_sum` says).
- :func:`pairwise` and :func:`pairwise_rows`: ``np.add.reduce`` of a long run of values formed a
  leaf at a time (NumPy's pairwise summation splits a run at fixed places, so each leaf is
  summed by ``np.add.reduce`` of the leaf alone, and the leaves' sums added as NumPy adds the
  halves).

The value-sort path (:mod:`~fdbench.metrics._valuesort`), the block walk
(:mod:`~fdbench.metrics._blockwise`), the optimum's sums (:mod:`~fdbench.metrics._core`,
:mod:`~fdbench.metrics._soft_optimum`) and their compiled kernels' order checks use them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

#: Elements per inner loop of ``einsum("ij,ij->i")`` on a block of one row (its operands are
#: then one-dimensional, and NumPy's iterator hands them over in buffers of NPY_BUFSIZE
#: elements); a block of several rows sums each row in one loop.
EINSUM_BUFFER = 8192


def einsum_chunk_sum(p: np.ndarray, start: int, stop: int) -> float:
    """The sum of ``p[start:stop]`` (at most :data:`EINSUM_BUFFER` values) as one inner loop of
    ``np.einsum("ij,ij->i")`` adds the products of a contiguous float64 row on x86-64, in the
    order of :func:`~fdbench.metrics._curve_kernel._aurc_sum`: lane k (0, 1) adds the
    elements of offset k (mod 2), eight elements at a time nested from the last pair to the
    first, then the remaining pairs one by one (a missing partner adds 0); the result is
    v_0 + v_1. Plain Python: the kernels of :mod:`~fdbench.metrics._valuesort_kernel` and
    :mod:`~fdbench.metrics._blockwise_kernel` compile it with themselves."""
    v0 = 0.0
    v1 = 0.0
    j = start
    while j + 8 <= stop:
        v0 = p[j] + (p[j + 2] + (p[j + 4] + (p[j + 6] + v0)))
        v1 = p[j + 1] + (p[j + 3] + (p[j + 5] + (p[j + 7] + v1)))
        j += 8
    while j < stop:
        v0 = p[j] + v0
        v1 = (p[j + 1] if j + 1 < stop else 0.0) + v1
        j += 2
    return v0 + v1


def einsum_chunk_sum3(
    pa: np.ndarray, pb: np.ndarray, pc: np.ndarray, start: int, stop: int
) -> tuple[float, float, float]:
    """:func:`einsum_chunk_sum` of three rows over the same columns, interleaved: six
    independent chains of additions instead of two, each row's additions in the same order
    (the same sums bit for bit; 1.36 against 1.74 ms per 10^6 columns for three calls, which
    wait on each addition before the next)."""
    a0 = a1 = b0 = b1 = c0 = c1 = 0.0
    j = start
    while j + 8 <= stop:
        a0 = pa[j] + (pa[j + 2] + (pa[j + 4] + (pa[j + 6] + a0)))
        a1 = pa[j + 1] + (pa[j + 3] + (pa[j + 5] + (pa[j + 7] + a1)))
        b0 = pb[j] + (pb[j + 2] + (pb[j + 4] + (pb[j + 6] + b0)))
        b1 = pb[j + 1] + (pb[j + 3] + (pb[j + 5] + (pb[j + 7] + b1)))
        c0 = pc[j] + (pc[j + 2] + (pc[j + 4] + (pc[j + 6] + c0)))
        c1 = pc[j + 1] + (pc[j + 3] + (pc[j + 5] + (pc[j + 7] + c1)))
        j += 8
    while j < stop:
        a0 = pa[j] + a0
        b0 = pb[j] + b0
        c0 = pc[j] + c0
        last = j + 1 >= stop
        a1 = (0.0 if last else pa[j + 1]) + a1
        b1 = (0.0 if last else pb[j + 1]) + b1
        c1 = (0.0 if last else pc[j + 1]) + c1
        j += 2
    return a0 + a1, b0 + b1, c0 + c1


#: Longest run that :func:`pairwise_rows` hands to ``np.add.reduce`` whole (in the cache).
PAIRWISE_LEAF = 1 << 16


class RowDot:
    """``np.einsum("ij,ij->i", a[None], b[None])[0]`` of two long rows fed in pieces, with
    the same rounding: einsum multiplies-and-adds the row in chunks of NumPy's buffer size,
    each chunk from zero, and adds each chunk's sum to the running total in turn. The chunk is
    :data:`EINSUM_BUFFER` elements: NumPy 2.4's einsum uses its
    default buffer size even after :func:`numpy.setbufsize` changes it."""

    def __init__(self) -> None:
        self._chunk = EINSUM_BUFFER
        self._sums: list[np.ndarray] = []
        self._a = np.empty(0)
        self._b = np.empty(0)

    def feed(self, a: np.ndarray, b: np.ndarray) -> None:
        """Append ``a`` and ``b`` (same length) to the rows."""
        if self._a.size:
            k = min(self._chunk - self._a.size, a.size)
            head_a = np.concatenate([self._a, a[:k]])
            head_b = np.concatenate([self._b, b[:k]])
            a, b = a[k:], b[k:]
            if head_a.size < self._chunk:
                self._a, self._b = head_a, head_b
                return
            self._sums.append(np.einsum("i,i->", head_a, head_b)[None])
        m = a.size - a.size % self._chunk
        if m:
            rows = (m // self._chunk, self._chunk)
            self._sums.append(np.einsum("ij,ij->i", a[:m].reshape(rows), b[:m].reshape(rows)))
        self._a, self._b = a[m:].copy(), b[m:].copy()

    def total(self) -> float:
        """The sum of products of everything fed."""
        sums = list(self._sums)
        if self._a.size:
            sums.append(np.einsum("i,i->", self._a, self._b)[None])
        return float(np.cumsum(np.concatenate([[0.0], *sums]))[-1])


def pairwise(leaf: Callable[[int, int], np.ndarray], start: int, n: int) -> float:
    """``np.add.reduce`` of ``n`` > 0 values from ``start`` on, ``leaf(i, j)`` giving values
    i..j-1 as a 1-D array (contiguous, or a view of any stride: a 1-D reduction adds in the
    view's order, unbuffered): NumPy's pairwise summation splits a run of more than 128
    values at n/2 rounded down to a multiple of 8, so every run it splits down to is summed
    by ``np.add.reduce`` of that run alone."""
    return float(pairwise_rows(lambda i, j: leaf(i, j)[None], start, n)[0])


def pairwise_rows(leaf: Callable[[int, int], np.ndarray], start: int, n: int) -> np.ndarray:
    """:func:`pairwise` of several rows at once: ``leaf(i, j)`` gives their values i..j-1 as
    a (rows, j - i) array, and each row is summed as ``np.add.reduce`` sums it alone (a
    reduction along the last, contiguous axis sums each row pairwise). ``leaf`` is called for
    the runs of :func:`pairwise_leaves`, in their order."""
    sums = (np.add.reduce(leaf(i, j), axis=1) for i, j in pairwise_leaves(start, n))
    return pairwise_tree(sums, n)


def pairwise_leaves(start: int, n: int) -> list[tuple[int, int]]:
    """The runs (i, j) of ``n`` > 0 values from ``start`` on that NumPy's pairwise summation
    splits down to and :func:`pairwise_rows` hands to ``np.add.reduce`` whole, in order."""
    if n <= PAIRWISE_LEAF:
        return [(start, start + n)]
    half = _half(n)
    return pairwise_leaves(start, half) + pairwise_leaves(start + half, n - half)


def pairwise_tree(sums: Iterator[np.ndarray], n: int) -> np.ndarray:
    """The sums of :func:`pairwise_leaves`' runs of ``n`` values (taken from ``sums`` in their
    order, one array of row sums per run) added as NumPy's pairwise summation adds them."""
    if n <= PAIRWISE_LEAF:
        return next(sums)
    half = _half(n)
    left = pairwise_tree(sums, half)
    return left + pairwise_tree(sums, n - half)


def _half(n: int) -> int:
    """Where NumPy's pairwise summation splits a run of ``n`` values: n/2 rounded down to a
    multiple of 8."""
    half = n // 2
    return half - half % 8
