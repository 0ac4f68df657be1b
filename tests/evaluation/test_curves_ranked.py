"""The risk-coverage curve drawn from ``evaluate_all``'s own ranking (``on_ranking``) equals the
curve of a sort of its own, bit for bit, and so do the curve tables built from it."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fdbench import metrics as M
from fdbench.evaluation.confidences import confidence_curves, evaluate_confidences
from fdbench.evaluation.curves import (
    binary_unit_curve,
    ranked_thinned_curve,
    ranked_unit_curve,
    thin_curve,
)

_CONFIDENCES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 0.5, -1e300, 1e300, 5e-324]),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _ranked_curve(residuals, confidence, labels):
    seen = []
    values = M.evaluate_all(
        residuals,
        confidence,
        labels=labels,
        on_ranking=lambda W, L: seen.append(ranked_unit_curve(W, L)),
    )
    assert len(seen) == 1
    return values, seen[0]


#: 0/1 residuals, confidences and class labels of one length (1 to 300).
_INPUTS = st.integers(1, 300).flatmap(
    lambda n: st.tuples(
        arrays(np.float64, n, elements=st.sampled_from([0.0, 1.0])),
        arrays(np.float64, n, elements=_CONFIDENCES),
        arrays(np.int64, n, elements=st.integers(0, 3)),
    )
)


@settings(max_examples=150, deadline=None)
@given(data=_INPUTS)
def test_ranked_unit_curve_equals_binary_unit_curve(data):
    """Heavy ties, signed zeros, extreme values, N = 1, one class, all failures or none."""
    residuals, confidence, labels = data
    values, points = _ranked_curve(residuals, confidence, labels)
    for got, want in zip(points, binary_unit_curve(residuals, confidence), strict=True):
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
    expected = M.evaluate_all(residuals, confidence, labels=labels)
    assert list(values) == list(expected)
    np.testing.assert_array_equal(list(values.values()), list(expected.values()))


@settings(max_examples=150, deadline=None)
@given(data=_INPUTS, max_points=st.integers(2, 40))
def test_ranked_thinned_curve_equals_the_thinned_full_curve(data, max_points):
    """Only the kept points divided: the same float64 values as thinning the full curve, for
    curves shorter and longer than ``max_points`` (ties, one group, N = 1)."""
    residuals, confidence, labels = data
    seen = []
    M.evaluate_all(
        residuals,
        confidence,
        labels=labels,
        on_ranking=lambda W, L: seen.append(
            (
                ranked_thinned_curve(W, L, max_points),
                thin_curve(ranked_unit_curve(W, L), max_points),
            )
        ),
    )
    ((got, want),) = seen
    for a, b in zip(got, want, strict=True):
        assert a.dtype == np.float64
        assert a.tobytes() == b.tobytes()


def test_on_ranking_leaves_every_value_unchanged_and_is_not_called_by_the_value_sort():
    rng = np.random.default_rng(5)
    residuals = (rng.random(5_001) < 0.3).astype(np.float64)
    confidence = rng.random(5_001).round(2)
    labels = rng.integers(0, 4, 5_001)
    values, _ = _ranked_curve(residuals, confidence, labels)
    expected = M.evaluate_all(residuals, confidence, labels=labels)
    assert list(values) == list(expected)
    np.testing.assert_array_equal(list(values.values()), list(expected.values()))
    calls = []
    M.evaluate_all(residuals, confidence, on_ranking=lambda W, L: calls.append(1))
    assert calls == []
    for n, value in ((1, 0.5), (6, 0.3)):
        _, points = _ranked_curve(np.ones(n), np.full(n, value), np.zeros(n, dtype=np.int64))
        for got, want in zip(points, binary_unit_curve(np.ones(n), np.full(n, value)), strict=True):
            np.testing.assert_array_equal(got, want)


def _splits(rng):
    labels, predictions, confidences = {}, {}, {}
    for split, n in (("iid", 3_001), ("new", 700), ("corruption/blur/1", 900)):
        y = rng.integers(0, 5, n) if split != "new" else np.full(n, -1)
        pred = rng.integers(0, 5, n)
        labels[split], predictions[split] = y, pred
        confidences[split] = {
            "a": rng.random(n).round(2),
            "b": rng.standard_normal(n),
            "tied": np.full(n, 0.25),
        }
    return labels, predictions, confidences


def test_evaluate_confidences_curves_equal_confidence_curves():
    """The in-distribution studies draw their curves from the ranking, the new-class and
    pooled ones from their own sort; the table is frame-equal to ``confidence_curves``, thinned
    or not, and the results equal those without curves."""
    rng = np.random.default_rng(6)
    labels, predictions, confidences = _splits(rng)
    info = {"dataset": "d", "method": "m", "seed": 3}
    for protocol in ("failure_detection", "unknown_detection"):
        for max_points in (2000, 7):
            common = {"protocol": protocol, "run_info": info}
            results, curves = evaluate_confidences(
                labels,
                predictions,
                confidences,
                return_curves=True,
                max_points=max_points,
                **common,
            )
            expected = confidence_curves(
                labels, predictions, confidences, max_points=max_points, **common
            )
            pd.testing.assert_frame_equal(curves, expected, check_exact=True)
            plain = evaluate_confidences(labels, predictions, confidences, **common)
            pd.testing.assert_frame_equal(results, plain, check_exact=True)


def test_suites_on_threads_equal_the_sequential_suites(monkeypatch):
    """From THREADS_MIN_SAMPLES on, the CSFs' suites run on threads: the same tables."""
    from fdbench.core.threads import THREADS_ENV
    from fdbench.evaluation import confidences as module

    rng = np.random.default_rng(8)
    labels, predictions, confidences = _splits(rng)
    used = []
    real = module.thread_map
    monkeypatch.setattr(module, "THREADS_MIN_SAMPLES", 1000)
    monkeypatch.setattr(
        module,
        "thread_map",
        lambda f, items, threads, **kw: (
            used.append(threads) or real(f, items, threads=threads, **kw)
        ),
    )
    tables = {}
    for threads in ("1", "2"):
        monkeypatch.setenv(THREADS_ENV, threads)
        tables[threads] = evaluate_confidences(
            labels, predictions, confidences, return_curves=True, protocol="unknown_detection"
        )
    assert 2 in used and 1 in used
    for sequential, threaded in zip(tables["1"], tables["2"], strict=True):
        pd.testing.assert_frame_equal(threaded, sequential, check_exact=True)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5000), st.integers(2, 3000))
def test_thinned_positions_are_the_unique_rounded_spacing(size, max_points):
    """The positions a thinned curve keeps: ``np.unique`` of the rounded even spacing (both
    ends kept), found without a sort."""
    from fdbench.evaluation.curves import _thinned_positions

    expected = np.unique(np.linspace(0, size - 1, min(size, max_points)).round().astype(int))
    got = _thinned_positions(size, max_points)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    if size:
        assert got[0] == 0 and got[-1] == size - 1
