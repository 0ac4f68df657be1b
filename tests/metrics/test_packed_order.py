"""The descending order of distinct confidences from one sort of packed keys is np.argsort's,
element for element; any tie (-0.0 and 0.0 included) gives None, and descending_stable gives the
stable arg-sort's order; runs of keys whose high bits agree (forced with more position bits)
are put in value order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fdbench import metrics as M
from fdbench.metrics import _blockwise_kernel
from fdbench.metrics._packed_order import (
    descending_distinct,
    descending_stable,
    descending_stable_unread,
)

pytest.importorskip("numba")

_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e308, -1e308, 0.5]),
    st.integers(0, 40).map(lambda k: 1.0 + k * 2.0**-52),
    st.integers(0, 40).map(lambda k: -(1.0 + k * 2.0**-52)),
)


def _argsort_descending(c: np.ndarray) -> np.ndarray:
    return np.argsort(c)[::-1].astype(np.int32)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_FLOATS, min_size=1, max_size=300), bits=st.sampled_from([None, 48, 60]))
def test_distinct_confidences_give_np_argsort_order(kernels, values, bits):
    c = np.array(values, dtype=np.float64)
    _, first = np.unique(c, return_index=True)  # -0.0 and 0.0 are one value
    c = c[np.sort(first)]
    got = descending_distinct(c, kernels, bits=bits)
    assert got is not None
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, _argsort_descending(c))


@settings(max_examples=200, deadline=None)
@given(
    c=st.integers(2, 200).flatmap(lambda n: arrays(np.float64, n, elements=_FLOATS)),
    bits=st.sampled_from([None, 48, 60]),
)
def test_any_tie_gives_none(kernels, c, bits):
    distinct = np.unique(c).size == c.size
    got = descending_distinct(c, kernels, bits=bits)
    if distinct:
        np.testing.assert_array_equal(got, _argsort_descending(c))
    else:
        assert got is None


@settings(max_examples=200, deadline=None)
@given(
    c=st.integers(1, 200).flatmap(lambda n: arrays(np.float64, n, elements=_FLOATS)),
    bits=st.sampled_from([None, 48, 60]),
)
def test_with_ties_the_stable_argsort_order(kernels, c, bits):
    got = descending_stable(c, kernels, bits=bits)
    np.testing.assert_array_equal(got, np.argsort(c, kind="stable")[::-1].astype(np.int32))


@settings(max_examples=200, deadline=None)
@given(
    c=st.integers(1, 200).flatmap(lambda n: arrays(np.float64, n, elements=_FLOATS)),
    bits=st.sampled_from([None, 48, 60]),
    longest=st.sampled_from([1, 2, 8]),
)
def test_runs_left_unread_are_stable_exactly_when_the_order_descends(kernels, c, bits, longest):
    """Runs of more than ``longest`` keys with equal high parts are left in position order:
    where none was, the order is the stable one; where some were, it is the stable one if and
    only if the confidences in it never increase (what the compiled walk checks)."""
    got, unread = descending_stable_unread(c, kernels, bits=bits, longest=longest)
    stable = np.argsort(c, kind="stable")[::-1].astype(np.int32)
    descends = bool(np.all(c[got][1:] <= c[got][:-1]))
    assert np.array_equal(got, stable) == (descends or not unread)
    assert np.array_equal(np.sort(got), np.arange(c.size))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(1, 12), min_size=3, max_size=3))
def test_runs_across_the_blocks_of_the_run_search(kernels, seed, sizes):
    """Runs of keys with equal high parts that straddle the blocks in which _order_runs looks
    for runs (a tie of m samples and m values a few ulps apart, shuffled: read where short,
    left unread where longer than 8); the blocks between them hold none."""
    from fdbench.metrics._packed_order import RUN_BLOCK

    rng = np.random.default_rng(seed)
    parts: list[np.ndarray] = []
    for k, m in enumerate(sizes):  # cluster k straddles the pair (k + 1) RUN_BLOCK - 1
        spread = rng.random((k + 1) * RUN_BLOCK - m - sum(map(len, parts)))
        parts.append(2.0 * k + spread)
        tie = np.full(m, 2.0 * k + 1.0)
        near = 2.0 * k + 1.0 + rng.integers(1, 3 * m, m) * 2.0**-52
        parts.append(np.concatenate([tie, near]))
    c = rng.permutation(np.concatenate([*parts, 7.0 + rng.random(50)]))
    stable = np.argsort(c, kind="stable")[::-1].astype(np.int32)
    np.testing.assert_array_equal(descending_stable(c, kernels), stable)
    got, unread = descending_stable_unread(c, kernels, longest=8)
    if any(m > 8 for m in sizes):
        assert unread
    descends = bool(np.all(c[got][1:] <= c[got][:-1]))
    assert np.array_equal(got, stable) == (descends or not unread)
    assert descending_distinct(c, kernels) is None  # the ties
    distinct = rng.permutation(np.unique(c))
    np.testing.assert_array_equal(
        descending_distinct(distinct, kernels), _argsort_descending(distinct)
    )


_NARROW = st.one_of(
    st.floats(width=32, allow_nan=False, allow_infinity=False),
    st.floats(width=16, allow_nan=False, allow_infinity=False),
    st.integers(-64, 64).map(lambda k: k / 8),
)


@settings(max_examples=300, deadline=None)
@given(
    c=st.integers(1, 200).flatmap(lambda n: arrays(np.float64, n, elements=_NARROW)),
    bits=st.sampled_from([None, 40, 56, 62]),
)
def test_confidences_sharing_low_bits_take_exact_keys(kernels, c, bits):
    """float32, float16 and binary-fraction values (low bits shared, dropped from the keys;
    with 62 position bits the rest does not fit and runs are read): the stable order, and
    np.argsort's order or None by the same rule as any other values."""
    stable = np.argsort(c, kind="stable")[::-1].astype(np.int32)
    np.testing.assert_array_equal(descending_stable(c, kernels, bits=bits), stable)
    got, _ = descending_stable_unread(c, kernels, bits=bits, longest=1)
    assert np.array_equal(got, stable) or np.any(c[got][1:] > c[got][:-1])
    distinct = descending_distinct(c, kernels, bits=bits)
    if np.unique(c).size == c.size:
        np.testing.assert_array_equal(distinct, _argsort_descending(c))
    else:
        assert distinct is None


def test_float32_values_with_long_ties_are_ordered_without_reading(kernels):
    """Softmax maxima of float32 logits, rounded to float16 for long runs of ties: the keys
    hold every bit in which they differ, so every run is a tie, none is left unread (the
    walk need not check the order) and the order is the stable one; with a float64 value
    among them the keys are not exact and the long runs are left unread."""
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(1 << 17, 10)).astype(np.float32)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    c = (e.max(axis=1) / e.sum(axis=1)).astype(np.float16).astype(np.float64)
    assert np.unique(c).size < c.size // 10
    got, unread = descending_stable_unread(c, kernels)
    assert not unread
    np.testing.assert_array_equal(got, np.argsort(c, kind="stable")[::-1])
    assert descending_distinct(c, kernels) is None
    c[0] = 0.1
    got, unread = descending_stable_unread(c, kernels)
    assert unread
    np.testing.assert_array_equal(got, np.argsort(c, kind="stable")[::-1])


def _clustered(rng: np.random.Generator, n: int, cluster: int) -> np.ndarray:
    """Uniform confidences with ``cluster`` neighbouring floats above 0.5 among them, shuffled:
    the keys cannot tell the cluster's values apart, so they form one run out of value order."""
    c = rng.random(n)
    c[rng.choice(n, cluster, replace=False)] = 0.5 + rng.permutation(cluster) * 2.0**-53
    return c


def test_runs_of_ties_are_left_unread_and_short_runs_read(kernels):
    """Confidences rounded to 3 decimals: every sample is in a run of equal high parts, none
    is read, and the order is the stable one. Uniform confidences: the few runs (of 2) are
    read and ordered. A cluster of 200 neighbouring floats: one run left unread, out of
    order, which the confidences in the order show by an increase."""
    rng = np.random.default_rng(8)
    rounded = rng.random(20_000).round(3)
    got, unread = descending_stable_unread(rounded, kernels)
    assert unread
    np.testing.assert_array_equal(got, np.argsort(rounded, kind="stable")[::-1])
    uniform = rng.random(1 << 20)
    got, unread = descending_stable_unread(uniform, kernels)
    assert not unread
    np.testing.assert_array_equal(got, _argsort_descending(uniform))
    clustered = _clustered(rng, 20_000, 200)
    got, unread = descending_stable_unread(clustered, kernels)
    assert unread
    assert np.any(clustered[got][1:] > clustered[got][:-1])
    np.testing.assert_array_equal(
        descending_stable(clustered, kernels), _argsort_descending(clustered)
    )


def test_signed_zeros_are_a_tie_and_crowded_values_are_ordered(kernels):
    assert descending_distinct(np.array([0.0, 1.0, -0.0]), kernels) is None
    kept = descending_stable(np.array([0.0, 1.0, -0.0]), kernels)
    np.testing.assert_array_equal(kept, [1, 2, 0])
    crowded_ties = np.repeat(1.0 - np.arange(3000) * 2.0**-53, 3)[::-1].copy()
    np.testing.assert_array_equal(
        descending_stable(crowded_ties, kernels, bits=60),
        np.argsort(crowded_ties, kind="stable")[::-1],
    )
    rng = np.random.default_rng(3)
    crowded = 1.0 - rng.permutation(50_000) * 2.0**-53  # 50,000 neighbouring floats below 1
    for bits in (None, 60, 63):
        np.testing.assert_array_equal(
            descending_distinct(crowded, kernels, bits=bits), _argsort_descending(crowded)
        )


def test_weighted_and_soft_suites_take_it_with_the_same_values(kernels, monkeypatch):
    """The compiled walk's values with the packed order equal the argsort engine's: for
    distinct confidences as they are, with ties under a stable ``np.argsort`` (the packed
    order keeps a tie group's samples in position order)."""
    import functools

    from fdbench.metrics import _blockwise, suite

    rng = np.random.default_rng(4)
    n = 20_000
    monkeypatch.setattr(_blockwise_kernel, "MIN_SAMPLES", 0)
    calls = []
    counted = []
    real = _blockwise.descending_stable_unread
    monkeypatch.setattr(
        _blockwise,
        "descending_stable_unread",
        lambda *a, **k: calls.append(real(*a, **k)) or calls[-1],
    )
    real_counting = _blockwise.count_values
    monkeypatch.setattr(
        _blockwise,
        "count_values",
        lambda *a, **k: counted.append(real_counting(*a, **k)) or counted[-1],
    )
    r = (rng.random(n) < 0.2).astype(np.float64)
    soft = rng.random(n)
    w = rng.random(n) + 0.1
    for c in (rng.standard_normal(n), rng.random(n).round(3)):
        for residuals, weights in ((r, w), (soft, None), (soft, w)):
            got = M.evaluate_all(residuals, c, sample_weight=weights)
            with monkeypatch.context() as m:
                m.setattr(suite, "BLOCKWISE_MAX_SAMPLES", 0)
                m.setattr(np, "argsort", functools.partial(np.argsort, kind="stable"))
                want = M.evaluate_all(residuals, c, sample_weight=weights)
            assert list(got) == list(want)
            assert np.array(list(got.values())).tobytes() == np.array(list(want.values())).tobytes()
    assert len(calls) == 3  # the normal confidences
    assert sum(x is not None for x in counted) == 3  # the rounded ones: 1,001 values


def test_a_run_left_out_of_order_is_read_and_walked_again(kernels, monkeypatch):
    """Where the walk finds a run left unread out of value order (a cluster of neighbouring
    floats), it takes descending_stable and walks again: the argsort engine's values."""
    from fdbench.metrics import _blockwise, suite

    rng = np.random.default_rng(9)
    n = 20_000
    monkeypatch.setattr(_blockwise_kernel, "MIN_SAMPLES", 0)
    calls = []
    real = _blockwise.descending_stable
    monkeypatch.setattr(
        _blockwise, "descending_stable", lambda *a, **k: calls.append(real(*a, **k)) or calls[-1]
    )
    c = _clustered(rng, n, 500)
    r = (rng.random(n) < 0.2).astype(np.float64)
    soft = rng.random(n)
    w = rng.random(n) + 0.1
    for residuals, weights in ((r, w), (soft, None), (soft, w)):
        got = M.evaluate_all(residuals, c, sample_weight=weights)
        with monkeypatch.context() as m:
            m.setattr(suite, "BLOCKWISE_MAX_SAMPLES", 0)
            want = M.evaluate_all(residuals, c, sample_weight=weights)
        assert list(got) == list(want)
        assert np.array(list(got.values())).tobytes() == np.array(list(want.values())).tobytes()
    assert len(calls) == 3


def test_rank_takes_it_from_packed_min_samples_with_the_same_values(kernels, monkeypatch):
    """evaluate_all's argsort engine (labels) ranks by the packed order from
    RANK_PACKED_MIN_SAMPLES on: the same suite, bit for bit, with and without ties."""
    from fdbench.metrics import _blockwise

    rng = np.random.default_rng(6)
    n = 30_000
    labels = rng.integers(0, 7, n)
    r = (rng.random(n) < 0.3).astype(np.float64)
    w = rng.random(n) + 0.5
    for c in (rng.standard_normal(n), rng.random(n).round(3)):
        for weights in (None, w):
            want = M.evaluate_all(r, c, labels=labels, sample_weight=weights)
            with monkeypatch.context() as m:
                m.setattr(_blockwise, "RANK_PACKED_MIN_SAMPLES", 0)
                assert (_blockwise.packed_descending(c) is None) == (np.unique(c).size < n)
                got = M.evaluate_all(r, c, labels=labels, sample_weight=weights)
            assert list(got) == list(want)
            assert np.array(list(got.values())).tobytes() == np.array(list(want.values())).tobytes()


def test_confidences_already_in_order_take_no_sort(kernels, monkeypatch):
    """Ascending, descending and non-decreasing confidences (ties, signed zeros): the orders of
    np.argsort and of its stable kind, with no keys packed and sorted."""
    rng = np.random.default_rng(12)
    ascending = np.sort(rng.random(3000))
    ties = np.sort(np.round(rng.random(3000), 2) - 0.5)
    ties[np.flatnonzero(ties == 0.0)[:2]] = -0.0
    packed = []
    real = kernels.packed_keys
    monkeypatch.setattr(kernels, "packed_keys", lambda *a: packed.append(1) or real(*a))
    for c in (ascending, ascending[::-1].copy()):
        np.testing.assert_array_equal(descending_distinct(c, kernels), _argsort_descending(c))
        np.testing.assert_array_equal(
            descending_stable(c, kernels), np.argsort(c, kind="stable")[::-1]
        )
    assert descending_distinct(ties, kernels) is None
    np.testing.assert_array_equal(
        descending_stable(ties, kernels), np.argsort(ties, kind="stable")[::-1]
    )
    assert packed == []
    descending_stable(ties[::-1].copy(), kernels)  # descending with ties: packed and sorted
    assert packed == [1]
