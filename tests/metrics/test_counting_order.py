"""The order by counting is the stable descending arg-sort's, with its tie groups' ends and
thresholds; the counts of samples and failures per value are those of ``np.unique``; and the
0/1 suite from counts equals the value sort's, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.metrics import _blockwise, _valuesort
from fdbench.metrics._counting_order import (
    binary_counts_by_value,
    count_values,
    few_values,
    place,
)

from .test_valuesort import EXTREMES, _assert_identical

pytest.importorskip("numba")

_POOLS = st.sampled_from(
    [
        (0.5,),
        (0.0, -0.0, 1.0),
        (0.1, 0.2, 0.30000000000000004, 0.3),
        tuple(EXTREMES),
        tuple(1.0 - k * 2.0**-53 for k in range(6)),
        tuple(np.round(np.linspace(-1, 2, 40), 3)),
    ]
)


@st.composite
def _few(draw) -> np.ndarray:
    pool = draw(_POOLS)
    n = draw(st.integers(1, 400))
    return np.array(draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)))


@settings(max_examples=300, deadline=None)
@given(c=_few(), data=st.data())
def test_the_stable_descending_order_with_its_groups(kernels, c, data):
    """The order placed by counting is the stable descending arg-sort's; the groups end where
    the confidences in it change, at their thresholds; weights placed in it are the weights
    gathered through it, a failure's negated."""
    groups = count_values(c, kernels)
    w = np.array(data.draw(st.lists(st.floats(0.1, 9.0), min_size=c.size, max_size=c.size)))
    failed = np.array(data.draw(st.lists(st.booleans(), min_size=c.size, max_size=c.size)))
    order, placed = place(groups, kernels, order=True, weights=w, failed=failed.view(np.uint8))
    stable = np.argsort(c, kind="stable")[::-1]
    assert order.dtype == np.int32
    np.testing.assert_array_equal(order, stable)
    assert placed.tobytes() == np.where(failed, -w, w)[stable].tobytes()
    alone, unsigned = place(groups, kernels, order=False, weights=w)
    assert alone is None
    assert unsigned.tobytes() == w[stable].tobytes()
    ranked = c[stable]
    expected_ends = np.append(np.flatnonzero(ranked[1:] != ranked[:-1]) + 1, c.size)
    np.testing.assert_array_equal(groups.ends, expected_ends)
    assert groups.thresholds.tobytes() == ranked[expected_ends - 1].tobytes()  # -0.0 as it is


def test_more_values_than_it_takes_give_none(kernels):
    c = np.arange(300.0) % 50
    assert count_values(c, kernels, most=49) is None
    assert count_values(c, kernels, most=50) is not None
    r = (c > 10).astype(np.float64)
    assert binary_counts_by_value(r, c, kernels, most=49) is None
    assert binary_counts_by_value(r, c, kernels, most=50) is not None


def test_the_probe_tells_few_values_from_many():
    rng = np.random.default_rng(2)
    assert few_values(rng.random(1 << 20).round(3))
    assert few_values(np.zeros(10))
    assert not few_values(rng.random(1 << 20))
    assert not few_values(rng.random(1 << 20).round(6))


@settings(max_examples=300, deadline=None)
@given(c=_few(), data=st.data())
def test_counts_of_samples_and_failures_per_value(kernels, c, data):
    r = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=c.size, max_size=c.size)))
    values, samples, failures = binary_counts_by_value(r, c, kernels)
    distinct, inverse = np.unique(c, return_inverse=True)
    np.testing.assert_array_equal(values, distinct[::-1])
    np.testing.assert_array_equal(samples, np.bincount(inverse)[::-1])
    np.testing.assert_array_equal(failures, np.bincount(inverse, weights=r)[::-1])


def test_a_residual_other_than_0_or_1_or_a_confidence_not_finite_give_none(kernels):
    c = np.array([0.5, 0.5, 0.2])
    assert binary_counts_by_value(np.array([0.0, 0.5, 1.0]), c, kernels) is None
    assert binary_counts_by_value(np.array([0.0, np.nan, 1.0]), c, kernels) is None
    r = np.array([0.0, 1.0, 1.0])
    for bad in (np.nan, np.inf, -np.inf):
        assert binary_counts_by_value(r, np.array([0.5, bad, 0.2]), kernels) is None


def _value_sort(r: np.ndarray, c: np.ndarray) -> dict[str, float]:
    fast = _valuesort.compiled_binary_unit(r, c)
    assert fast is not None
    return fast[2]


@st.composite
def _tied_binary(draw):
    n = draw(st.integers(2, 3000))
    decimals = draw(st.integers(0, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1.0, 3.0, -1.0]))
    c = np.round(rng.random(n) * scale, decimals)
    if draw(st.booleans()):
        c[c == 0.0] = -0.0
    rate = draw(st.sampled_from([0.0, 0.05, 0.5, 1.0]))
    return (rng.random(n) < rate).astype(np.float64), c


@settings(max_examples=200, deadline=None)
@given(inputs=_tied_binary())
def test_counted_binary_suite_equals_the_value_sort(kernels, inputs):
    """0/1 residuals without weights on tie-heavy confidences (some outside [0, 1], signed
    zeros, all or no failures, one value): every entry of the counted suite is the value
    sort's, bit for bit."""
    r, c = inputs
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_valuesort, "COMPILED_MIN_SAMPLES", 1)
        m.setattr(_blockwise, "VALUESORT_MIN_SAMPLES", 1)
        counted = _blockwise.counted_binary_unit(r, c)
        if counted is None:
            assert not few_values(c)
            return
        _assert_identical(dict(sorted(counted[2].items())), dict(sorted(_value_sort(r, c).items())))


def test_evaluate_all_takes_the_counts_on_tied_confidences(kernels, monkeypatch):
    """From the value sort's size on, evaluate_all of tie-heavy 0/1 residuals without weights
    comes from counts: the argsort engine's values, and no sort of the confidences."""
    from fdbench.metrics import suite

    rng = np.random.default_rng(5)
    n = _valuesort.COMPILED_MIN_SAMPLES
    c = rng.random(n).round(2)
    r = (rng.random(n) < 0.3).astype(np.float64)
    sorted_by = []
    monkeypatch.setattr(suite, "compiled_binary_unit", lambda *a, **k: sorted_by.append(1))
    got = M.evaluate_all(r, c)
    assert sorted_by == []
    with monkeypatch.context() as m:
        m.setattr(suite, "MAX_SAMPLES", 0)
        m.setattr(suite, "BLOCKWISE_MAX_SAMPLES", 0)
        want = M.evaluate_all(r, c)
    _assert_identical(got, want)
