"""The descending stable order of confidences with few distinct values, by counting: no sort
of the samples, and their tie groups without reading the confidences again.

Confidences rounded to a few decimals, or quantised scores, take a few thousand values over a
million samples. There a sort of packed keys (:mod:`~fdbench.metrics._packed_order`) still
sorts N distinct keys (their positions), and the walk then gathers every confidence through
the order to find where one tie group ends and the next begins. Here one pass puts each
sample's confidence (its float64 bit pattern, -0.0 taken as 0.0) in a hash table of the
distinct values and keeps the sample's value index (uint16); the K values are sorted (K is
small); a second pass (:func:`place`), from the last sample to the first, writes each sample's
position, or its weight, to the next free place of its value's group: K streams of writes, no
random gather. Groups follow in descending value order and a group's samples in descending
position, which is ``np.argsort(confidence, kind="stable")[::-1]``:
:func:`~fdbench.metrics._packed_order.descending_stable`'s order exactly, so every value the
walk computes from it is the same, bit for bit. The group ends and thresholds come with it,
which the walk (:func:`fdbench.metrics._blockwise_kernel._walk`) reads instead of gathering
the confidences. For 0/1 residuals without weights, :func:`binary_counts_by_value` counts
the samples and the failures of each value in the first pass, and nothing is placed.

The passes are compiled with the block walk's kernels
(:func:`fdbench.metrics._blockwise_kernel.compiled_kernels`); the first gives up as soon as
it has seen more than :data:`MOST_VALUES` distinct values.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

#: Most distinct values the counting order takes (the value indices are uint16).
MOST_VALUES = 1 << 16
#: Strided samples :func:`few_values` looks at.
PROBE = 1 << 14
_SIGN = 1 << 63
_TABLE_BITS = 17
_GOLDEN = 0x9E3779B97F4A7C15


def _value_slot(
    x: np.uint64, slots: np.ndarray, values: np.ndarray, counts: np.ndarray, k: int, most: int
) -> int:
    """The index of the value with bit pattern ``x`` in the open-addressing hash table
    ``slots`` (a power of two of int32, -1 where empty; the ``k`` values so far in
    ``values``), added with a count of 0 where new; -1 where it is new and ``k`` = ``most``."""
    mask = np.uint64(slots.shape[0] - 1)
    h = ((x * np.uint64(_GOLDEN)) >> np.uint64(64 - _TABLE_BITS)) & mask
    while True:
        s = slots[h]
        if s < 0:
            if k == most:
                return -1
            slots[h] = k
            values[k] = x
            counts[k] = 0
            return k
        if values[s] == x:
            return s
        h = (h + np.uint64(1)) & mask


def _count_values(
    u: np.ndarray,
    most: int,
    slots: np.ndarray,
    values: np.ndarray,
    counts: np.ndarray,
    first: np.ndarray,
    index: np.ndarray,
) -> int:
    """Put the float64 bit patterns ``u`` (-0.0 as 0.0) in the hash table of
    :func:`_value_slot`: the distinct values to ``values`` in the order first met, their
    counts to ``counts`` and the position where each is first met to ``first``, each
    sample's value index to ``index``. Returns the number of distinct values, or -1 as soon
    as there are more than ``most``."""
    sign = np.uint64(_SIGN)
    k = 0
    for i in range(u.shape[0]):
        x = u[i]
        s = value_slot(np.uint64(0) if x == sign else x, slots, values, counts, k, most)
        if s < 0:
            return -1
        if s == k:
            first[k] = i
            k += 1
        index[i] = s
        counts[s] += 1
    return k


def _count_binary(
    u: np.ndarray,
    r: np.ndarray,
    most: int,
    slots: np.ndarray,
    values: np.ndarray,
    counts: np.ndarray,
    fails: np.ndarray,
) -> int:
    """:func:`_count_values` of the confidences' bit patterns ``u`` without the samples'
    value indices, counting also the samples of residual 1 per value (``fails``). Returns
    the number of distinct values; -1 as soon as there are more than ``most``; -2 at a
    residual other than 0 or 1 or a confidence not finite (the caller validates)."""
    sign = np.uint64(_SIGN)
    exponent = np.uint64(0x7FF0000000000000)
    k = 0
    for i in range(u.shape[0]):
        x = u[i]
        failed = r[i] == 1.0
        if (x & exponent) == exponent or not (failed or r[i] == 0.0):
            return -2
        s = value_slot(np.uint64(0) if x == sign else x, slots, values, counts, k, most)
        if s < 0:
            return -1
        if s == k:
            fails[s] = 0
            k += 1
        counts[s] += 1
        fails[s] += 1 if failed else 0
    return k


#: The compiled :func:`_value_slot` that the other kernels call (numba resolves it when it
#: compiles them; :func:`fdbench.metrics._blockwise_kernel.compiled_kernels` sets it).
value_slot = _value_slot


def _place(
    index: np.ndarray,
    free: np.ndarray,
    order: np.ndarray,
    w: np.ndarray,
    failed: np.ndarray,
    wo: np.ndarray,
) -> None:
    """For i from the last sample to the first, v its value index and p = free[v]++ (the
    next place of its group): order[p] = i where ``order`` is not empty, and wo[p] = w[i],
    negated where failed[i] != 0 (``failed`` not empty), where ``w`` is not empty."""
    with_order = order.shape[0] > 0
    with_weights = w.shape[0] > 0
    signed = failed.shape[0] > 0
    for i in range(index.shape[0] - 1, -1, -1):
        v = index[i]
        p = free[v]
        free[v] = p + 1
        if with_order:
            order[p] = i
        if with_weights:
            x = w[i]
            wo[p] = -x if signed and failed[i] != 0 else x


class ValueGroups(NamedTuple):
    """The tie groups of confidences with few values, in descending order: each sample's
    value index (``values``, uint16), where each value's group starts (``starts``, by value
    index) and ends (``ends``, exclusive, by group) in the stable descending order, and each
    group's confidence (``thresholds``: that of its sample first in position, which is last
    in the order)."""

    values: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    thresholds: np.ndarray


def few_values(confidence: np.ndarray) -> bool:
    """Whether at most half of :data:`PROBE` strided confidences differ: then the
    confidences likely take few values, and :func:`count_values` is worth trying."""
    probe = confidence[:: max(1, confidence.size // PROBE)]
    return 2 * np.unique(probe).size <= probe.size


def count_values(
    confidence: np.ndarray, kernels: SimpleNamespace, *, most: int = MOST_VALUES
) -> ValueGroups | None:
    """The tie groups of ``confidence`` (contiguous finite float64, at most 2^31 samples) from
    one pass over the samples and a sort of their distinct values, or ``None`` where they take
    more than ``most`` values (at most :data:`MOST_VALUES`; found at the first value over)."""
    n = confidence.size
    most = min(most, MOST_VALUES)
    slots = np.full(1 << _TABLE_BITS, -1, dtype=np.int32)
    values = np.empty(most, dtype=np.uint64)
    counts = np.empty(most, dtype=np.int64)
    first = np.empty(most, dtype=np.int64)
    index = np.empty(n, dtype=np.uint16)
    k = kernels.count_values(confidence.view(np.uint64), most, slots, values, counts, first, index)
    if k < 0:
        return None
    by_value = np.argsort(values[:k].view(np.float64))[::-1]
    ends = np.cumsum(counts[:k][by_value])
    starts = np.empty(k, dtype=np.int64)
    starts[by_value] = ends - counts[:k][by_value]
    return ValueGroups(index, starts, ends, confidence[first[:k][by_value]])


def place(
    groups: ValueGroups,
    kernels: SimpleNamespace,
    *,
    order: bool,
    weights: np.ndarray | None = None,
    failed: np.ndarray | None = None,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(order, weights in order)`` by one pass over the samples, each to the next place of
    its group: where ``order``, ``np.argsort(confidence, kind="stable")[::-1]`` as int32 (a
    group's samples in descending position); where ``weights`` are given, the weights in
    that order, negated where ``failed`` (uint8, 0/1) is not 0. No gather: the samples are
    read in turn and written to K streams."""
    n = groups.values.size
    out_order = np.empty(n if order else 0, dtype=np.int32)
    out_weights = np.empty(0 if weights is None else n)
    kernels.place(
        groups.values,
        groups.starts.copy(),
        out_order,
        np.empty(0) if weights is None else weights,
        np.empty(0, dtype=np.uint8) if failed is None else failed,
        out_weights,
    )
    return (out_order if order else None), (None if weights is None else out_weights)


def binary_counts_by_value(
    residuals: np.ndarray,
    confidence: np.ndarray,
    kernels: SimpleNamespace,
    *,
    most: int = MOST_VALUES,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(values, samples, failures)`` in descending order of the distinct confidences (-0.0
    taken as 0.0): the number of samples with each and of those with residual 1, from one
    pass over the samples and no sort of them; ``None`` where the confidences take more than
    ``most`` values (at most :data:`MOST_VALUES`), a confidence is not finite or a residual is
    neither 0 nor 1.

    ``residuals``, ``confidence``: contiguous float64 of one length."""
    most = min(most, MOST_VALUES)
    slots = np.full(1 << _TABLE_BITS, -1, dtype=np.int32)
    values = np.empty(most, dtype=np.uint64)
    counts = np.empty(most, dtype=np.int64)
    fails = np.empty(most, dtype=np.int64)
    k = kernels.count_binary(
        confidence.view(np.uint64), residuals, most, slots, values, counts, fails
    )
    if k < 0:
        return None
    thresholds = values[:k].view(np.float64)
    by_value = np.argsort(thresholds)[::-1]
    return thresholds[by_value], counts[:k][by_value], fails[:k][by_value]
