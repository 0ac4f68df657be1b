"""``np.argsort`` of distinct confidences from one value sort of packed 64-bit keys (numba).

On x86 machines with AVX-512, NumPy sorts float64 values with SIMD networks but arg-sorts them
3-7x slower (N = 10^6: 8 ms against 32 ms; N = 10^7: 0.13 s against 0.87 s). The weighted and
soft suites (:mod:`fdbench.metrics._blockwise`) need the permutation, not only the values.
Here it comes from a sort of values: each sample's key holds, above its position i (the low
``bits`` bits, ``bits`` = the bit length of N - 1), the high bits of its confidence's
order-preserving 64-bit pattern counted from the smallest (shifted right only as far as the
data's range needs, after the low bits in which no two patterns differ are dropped). ``np.sort``
of the keys orders the samples by confidence wherever those high bits differ; a run of keys
whose high bits agree is put in value order by a merge sort of the run's confidences (rare:
the high bits resolve the confidences to about 2^(64 - bits) steps of their range). Where
nothing but those shared low bits is dropped, the keys are exact: a run is a tie, and no
confidence is read. Confidences that are float32 values (softmax maxima of float32 logits,
cast to float64 for the definitions) share 29 zero bits, so their keys are exact; ordering
their ties by reading them took 8.5 ms of a 20 ms order at 10^6.

Where every confidence differs, the ascending order is unique, so the permutation is the one
``np.argsort`` returns, element for element, and every metric computed from it is the argsort
engine's bit for bit. Where two confidences are equal (a tie; -0.0 and 0.0 are equal), the
order within the tie is ``np.argsort``'s own, which depends on NumPy's sorting network and
which no other sort reproduces; weighted and soft sums within a tie group depend on it, so
:func:`descending_distinct` then returns ``None`` and the caller arg-sorts (the attempt costs
about one ``np.sort``). Every tie is found: equal confidences have equal keys above the
position bits, so they fall in one run. Confidences already in order (ascending, or
descending without ties: one pass that stops at the first pair out of order, so at once on
unsorted data) need no sort: ``np.argsort`` of sorted data is a copy (3 ms at 10^6 against 8
for ``np.sort``), which no sort matches. :func:`descending_stable` (the compiled block walk)
keeps ties instead, equal confidences in position order: the stable arg-sort's order, the
same on every machine.

The passes are compiled with the block walk's kernels
(:func:`fdbench.metrics._blockwise_kernel.compiled_kernels`). :func:`descending_distinct_numpy`
makes the same order with NumPy passes (no numba to load), for the argsort engine of
``evaluate_all`` with labels.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import numpy as np

_SIGN = 1 << 63


#: Neighbouring sorted keys that :func:`_order_runs` compares without a branch before it
#: looks for the runs among them.
RUN_BLOCK = 1024

#: What :func:`_monotone` finds.
UNSORTED, DESCENDING, NON_DECREASING, ASCENDING = 0, -1, 1, 2


def _monotone(c: np.ndarray) -> int:
    """:data:`ASCENDING` when every confidence is below the next, :data:`NON_DECREASING` when
    none is above it (some equal: ties, -0.0 and 0.0 included), :data:`DESCENDING` when every
    one is above the next, else :data:`UNSORTED` (found at the first pair out of order: at
    once on unsorted data; a NaN is out of any order)."""
    n = c.shape[0]
    if n > 1 and c[1] < c[0]:
        for i in range(n - 1):
            if not c[i] > c[i + 1]:
                return UNSORTED
        return DESCENDING
    strict = True
    for i in range(n - 1):
        if not c[i] <= c[i + 1]:
            return UNSORTED
        strict = strict and c[i] < c[i + 1]
    return ASCENDING if strict else NON_DECREASING


def _key_range(u: np.ndarray, bounds: np.ndarray) -> None:
    """bounds = the smallest and largest order-preserving pattern of the confidences whose
    float64 bits are ``u`` (-0.0 taken as 0.0), and the bits in which any pattern differs
    from the first (their OR of exclusive ORs: its trailing zeros are low bits every pattern
    shares, which :func:`_descending` drops from the keys)."""
    sign = np.uint64(_SIGN)
    lo = np.uint64(0xFFFFFFFFFFFFFFFF)
    hi = np.uint64(0)
    spread = np.uint64(0)
    first = np.uint64(0)
    if u.shape[0]:
        x = u[0]
        x = np.uint64(0) if x == sign else x
        first = x ^ ((np.uint64(0) - (x >> np.uint64(63))) | sign)
    for i in range(u.shape[0]):
        x = u[i]
        x = np.uint64(0) if x == sign else x
        t = x ^ ((np.uint64(0) - (x >> np.uint64(63))) | sign)
        lo = min(lo, t)
        hi = max(hi, t)
        spread |= t ^ first
    bounds[0] = lo
    bounds[1] = hi
    bounds[2] = spread


def _packed_keys(u: np.ndarray, lo: np.uint64, shift: int, bits: int, keys: np.ndarray) -> None:
    """keys[i] = ((pattern_i - lo) >> shift) << bits | i, the pattern order-preserving (a
    negative float's bits inverted, a positive one's sign bit set; -0.0 taken as 0.0)."""
    sign = np.uint64(_SIGN)
    s = np.uint64(shift)
    b = np.uint64(bits)
    for i in range(u.shape[0]):
        x = u[i]
        x = np.uint64(0) if x == sign else x
        t = x ^ ((np.uint64(0) - (x >> np.uint64(63))) | sign)
        keys[i] = (((t - lo) >> s) << b) | np.uint64(i)


def _order_runs(
    keys: np.ndarray, bits: int, c: np.ndarray, ties: bool, longest: int, exact: bool
) -> int:
    """Put each run of sorted ``keys`` with equal high parts in the order of the confidences
    ``c`` at their positions, equal ones in the order of their positions (a run's keys are
    in position order, and the merge sort is stable); -1 where two are equal (a tie) unless
    ``ties``, else the number of samples in runs left as they are, unread, since they have
    more than ``longest`` members (with ``ties`` only: such a run is nearly always one value
    repeated, already in order; the caller checks what this leaves). ``exact``: the high
    parts hold every bit in which the confidences differ, so a run is a tie, already in
    position order, and nothing is read: 0 with ``ties``, else -1 at the first run."""
    n = keys.shape[0]
    b = np.uint64(bits)
    if exact:
        if ties:
            return 0
        for i in range(n - 1):
            if keys[i + 1] >> b == keys[i] >> b:
                return -1
        return 0
    low = (np.uint64(1) << b) - np.uint64(1)
    unchecked = 0
    i = 0
    for start in range(0, n - 1, RUN_BLOCK):
        stop = min(start + RUN_BLOCK, n - 1)
        equal = False
        for t in range(start, stop):  # no branch: vectorised; most blocks hold no run
            equal = equal | (keys[t + 1] >> b == keys[t] >> b)
        if not equal:
            continue
        i = max(i, start)  # past the runs that began in blocks before
        while i < stop:
            high = keys[i] >> b
            if keys[i + 1] >> b != high:
                i += 1
                continue
            j = i + 1
            while j + 1 < n and keys[j + 1] >> b == high:
                j += 1
            m = j - i + 1
            if ties and m > longest:
                unchecked += m
                i = j + 1
                continue
            ordered = True
            for t in range(i + 1, j + 1):
                before = c[np.int64(keys[t - 1] & low)]
                here = c[np.int64(keys[t] & low)]
                if here == before and not ties:
                    return -1
                if here < before:
                    ordered = False
            if not ordered:
                positions = np.empty(m, dtype=np.int64)
                values = np.empty(m)
                for t in range(m):
                    positions[t] = np.int64(keys[i + t] & low)
                    values[t] = c[positions[t]]
                by_value = np.argsort(values, kind="mergesort")
                for t in range(m):
                    if t and values[by_value[t]] == values[by_value[t - 1]] and not ties:
                        return -1
                    keys[i + t] = (keys[i + t] & ~low) | np.uint64(positions[by_value[t]])
            i = j + 1
    return unchecked


def _descending_positions(keys: np.ndarray, bits: int, out: np.ndarray) -> None:
    """out = the positions in the low ``bits`` bits of ascending ``keys``, last first (int32)."""
    n = keys.shape[0]
    low = (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    for i in range(n):
        out[n - 1 - i] = np.int32(keys[i] & low)


def descending_distinct(
    confidence: np.ndarray, kernels: SimpleNamespace, *, bits: int | None = None
) -> np.ndarray | None:
    """``np.argsort(confidence)[::-1]`` as int32 when no two confidences are equal, from one
    ``np.sort`` of packed keys; ``None`` when two are equal (the caller arg-sorts).

    ``confidence``: contiguous finite float64 (at most 2^31 samples). ``bits``: the position
    bits of the keys (default: the fewest that hold N - 1; more leave fewer bits for the
    confidences, which tests use to force runs of equal high parts)."""
    return _descending(confidence, kernels, bits, ties=False, longest=confidence.size)[0]


def descending_stable(
    confidence: np.ndarray, kernels: SimpleNamespace, *, bits: int | None = None
) -> np.ndarray:
    """``np.argsort(confidence, kind="stable")[::-1]`` as int32 (equal confidences by
    position, last first; :func:`descending_distinct`'s order where all differ), from one
    ``np.sort`` of packed keys. Arguments as :func:`descending_distinct`'s."""
    order, _ = _descending(confidence, kernels, bits, ties=True, longest=confidence.size)
    return cast(np.ndarray, order)


#: Members from which :func:`descending_stable_unread` leaves a run of keys with equal high
#: parts unread.
LONGEST_READ_RUN = 8


def descending_stable_unread(
    confidence: np.ndarray,
    kernels: SimpleNamespace,
    *,
    bits: int | None = None,
    longest: int = LONGEST_READ_RUN,
) -> tuple[np.ndarray, bool]:
    """:func:`descending_stable`'s order without reading the confidences of runs of more
    than ``longest`` keys with equal high parts, and whether any was left so.

    Such runs come from ties (confidences rounded to a few decimals: every sample is in one,
    and reading them costs a random gather of every confidence, about a sixth of the suite).
    A run left unread stays in position order, which is the stable order when its
    confidences are all equal. So where the second value is ``True`` the order is
    :func:`descending_stable`'s if and only if the confidences, taken in it, never increase:
    a run of distinct confidences in position order that is not in value order has an
    increase somewhere, and across runs the order is the keys'. The caller checks that as
    it reads them (the compiled walk) and takes :func:`descending_stable` where it fails."""
    order, unread = _descending(confidence, kernels, bits, ties=True, longest=longest)
    return cast(np.ndarray, order), unread


def _descending(
    confidence: np.ndarray,
    kernels: SimpleNamespace,
    bits: int | None,
    ties: bool,
    longest: int,
) -> tuple[np.ndarray | None, bool]:
    n = confidence.size
    shape = kernels.monotone(confidence)
    if shape == ASCENDING or (shape == NON_DECREASING and ties):
        return np.arange(n - 1, -1, -1, dtype=np.int32), False
    if shape == NON_DECREASING:
        return None, False
    if shape == DESCENDING:
        return np.arange(n, dtype=np.int32), False
    bits = max(1, (n - 1).bit_length()) if bits is None else bits
    u = confidence.view(np.uint64)
    bounds = np.empty(3, dtype=np.uint64)
    kernels.key_range(u, bounds)
    spread = int(bounds[2])
    shared = max(0, (spread & -spread).bit_length() - 1)  # low bits all patterns have alike
    span = (int(bounds[1]) - int(bounds[0])) >> shared  # exact: the difference has them 0
    dropped = max(0, span.bit_length() - (64 - bits))
    keys = np.empty(n, dtype=np.uint64)
    kernels.packed_keys(u, bounds[0], shared + dropped, bits, keys)
    keys.sort()
    unread = kernels.order_runs(keys, bits, confidence, ties, longest, dropped == 0)
    if unread < 0:
        return None, False
    order = np.empty(n, dtype=np.int32)
    kernels.descending_positions(keys, bits, order)
    return order, unread > 0


#: Strided samples :func:`descending_distinct_numpy` looks at for ties before it sorts.
_TIE_PROBE = 1 << 14


def descending_distinct_numpy(
    confidence: np.ndarray, *, bits: int | None = None
) -> np.ndarray | None:
    """:func:`descending_distinct` by NumPy passes: ``np.argsort(confidence)[::-1]`` (a view
    of int64 positions) when no two confidences are equal, else ``None`` (the caller
    arg-sorts).

    ``confidence``: finite float64; ``bits`` as :func:`descending_distinct`'s. The same keys
    as the compiled passes (-0.0 taken as 0.0 by adding 0.0) are sorted by ``np.sort``; the
    rare runs of keys with equal high parts (distinct confidences closer than the keys
    resolve) are put in value order by one ``np.lexsort`` of their members, which also finds
    a tie. ``_TIE_PROBE`` strided samples with a repeated value (heavy ties, e.g. rounded
    confidences) return ``None`` before any sort; sparse ties are found after it (a sort
    spent, about half an ``np.argsort`` on AVX-512).
    """
    n = confidence.size
    probe = np.sort(confidence[:: max(1, n // _TIE_PROBE)])  # np.unique imports numpy.ma
    if np.any(probe[1:] == probe[:-1]):
        return None
    bits = max(1, (n - 1).bit_length()) if bits is None else bits
    low = np.uint64((1 << bits) - 1)
    keys = np.add(confidence, 0.0).view(np.uint64)
    if confidence.min() < 0:
        flip = keys >> np.uint64(63)
        np.negative(flip, out=flip)
        flip |= np.uint64(_SIGN)
        keys ^= flip
        del flip
    else:
        keys |= np.uint64(_SIGN)
    lo, hi = int(keys.min()), int(keys.max())
    keys -= np.uint64(lo)
    keys >>= np.uint64(max(0, (hi - lo).bit_length() - (64 - bits)))
    keys <<= np.uint64(bits)
    keys |= np.arange(n, dtype=np.uint64)
    keys.sort()
    high = keys >> np.uint64(bits)
    equal = np.flatnonzero(high[1:] == high[:-1])
    del high
    if equal.size:
        members = np.union1d(equal, equal + 1)
        runs = np.cumsum(np.diff(members, prepend=-2) != 1)
        values = confidence[(keys[members] & low).astype(np.intp)]
        by_value = np.lexsort((values, runs))
        values, runs = values[by_value], runs[by_value]
        if np.any((values[1:] == values[:-1]) & (runs[1:] == runs[:-1])):
            return None
        keys[members] = keys[members][by_value]
    keys &= low
    return keys.view(np.int64)[::-1]
