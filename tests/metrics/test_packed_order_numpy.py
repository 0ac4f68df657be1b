"""The packed order by NumPy passes (``evaluate_all``'s argsort engine with labels, no numba):
np.argsort's descending order of distinct confidences, element for element; None for any tie
(-0.0 and 0.0 included); runs of keys whose high bits agree (forced with more position bits,
or crowded values across a wide range) put in value order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fdbench import metrics as M
from fdbench.metrics import _blockwise
from fdbench.metrics._packed_order import descending_distinct_numpy

_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e308, -1e308, 0.5]),
    st.integers(0, 40).map(lambda k: 1.0 + k * 2.0**-52),
    st.integers(0, 40).map(lambda k: -(1.0 + k * 2.0**-52)),
)


def _argsort_descending(c: np.ndarray) -> np.ndarray:
    return np.argsort(c)[::-1]


@settings(max_examples=400, deadline=None)
@given(
    c=st.integers(1, 300).flatmap(lambda n: arrays(np.float64, n, elements=_FLOATS)),
    bits=st.sampled_from([None, 48, 60, 63]),
)
def test_distinct_confidences_give_np_argsort_order_and_ties_none(c, bits):
    got = descending_distinct_numpy(c, bits=bits)
    if np.unique(c).size == c.size:
        assert got is not None
        np.testing.assert_array_equal(got, _argsort_descending(c))
    else:
        assert got is None
    _, first = np.unique(c, return_index=True)  # -0.0 and 0.0 are one value
    distinct = c[np.sort(first)]
    np.testing.assert_array_equal(
        descending_distinct_numpy(distinct, bits=bits), _argsort_descending(distinct)
    )


def test_crowded_values_signed_zeros_and_heavy_ties():
    rng = np.random.default_rng(3)
    crowded = 1.0 - rng.permutation(70_000) * 2.0**-53  # neighbouring floats below 1
    wide = np.concatenate([crowded, [-1e300, 1e300, -3.0, 0.0]])[rng.permutation(70_004)]
    for c in (crowded, wide, -wide):
        for bits in (None, 60, 63):
            np.testing.assert_array_equal(
                descending_distinct_numpy(c, bits=bits), _argsort_descending(c)
            )
    assert descending_distinct_numpy(np.array([0.0, 1.0, -0.0])) is None
    spread = rng.standard_normal(100_000)
    spread[[10, 70_000]] = 0.25  # one tie among distinct values: found after the sort
    assert descending_distinct_numpy(spread) is None
    assert descending_distinct_numpy(rng.random(100_000).round(3)) is None  # by the probe
    extremes = np.array([5e-324, -5e-324, 1e308, -1e308, 0.0, 2.0**-1022])
    np.testing.assert_array_equal(
        descending_distinct_numpy(extremes), _argsort_descending(extremes)
    )


def test_evaluate_all_with_labels_takes_it_with_the_same_values(monkeypatch):
    """From RANK_NUMPY_PACKED_MIN_SAMPLES on (numba not asked for below
    RANK_PACKED_MIN_SAMPLES), the labelled suite ranks by the NumPy packed order: the same
    entries bit for bit as by np.argsort, with and without ties and weights."""
    rng = np.random.default_rng(6)
    n = _blockwise.RANK_NUMPY_PACKED_MIN_SAMPLES + 5
    labels = rng.integers(0, 7, n)
    r = (rng.random(n) < 0.3).astype(np.float64)
    w = rng.random(n) + 0.5
    taken = []
    real = _blockwise.descending_distinct_numpy
    monkeypatch.setattr(
        _blockwise,
        "descending_distinct_numpy",
        lambda c, **kw: taken.append(c.size) or real(c, **kw),
    )
    for c in (rng.standard_normal(n), rng.random(n).round(3), np.exp(rng.standard_normal(n))):
        for weights in (None, w):
            got = M.evaluate_all(r, c, labels=labels, sample_weight=weights)
            with monkeypatch.context() as m:
                m.setattr(_blockwise, "RANK_NUMPY_PACKED_MIN_SAMPLES", n + 1)
                want = M.evaluate_all(r, c, labels=labels, sample_weight=weights)
            assert list(got) == list(want)
            assert np.array(list(got.values())).tobytes() == np.array(list(want.values())).tobytes()
    assert taken == [n] * 6
