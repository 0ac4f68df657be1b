"""The value-sort risk-coverage curve of 0/1 residuals equals the metric engine's bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fdbench import metrics as M
from fdbench.evaluation.curves import binary_unit_curve, curve_table


def _assert_curve_equal(residuals: np.ndarray, confidence: np.ndarray) -> None:
    curve = M.risk_coverage_curve(residuals, confidence)
    points = binary_unit_curve(residuals, confidence)
    expected = (curve.coverages, curve.selective_risks, curve.generalized_risks)
    for got, want in zip(points, expected, strict=True):
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


@settings(max_examples=150, deadline=None)
@given(
    data=st.integers(1, 300).flatmap(
        lambda n: st.tuples(
            arrays(np.float64, n, elements=st.sampled_from([0.0, 1.0])),
            arrays(
                np.float64,
                n,
                elements=st.one_of(
                    st.sampled_from([0.0, -0.0, 1.0, 0.5, -1e300, 1e300, 5e-324]),
                    st.floats(allow_nan=False, allow_infinity=False),
                ),
            ),
        )
    )
)
def test_binary_unit_curve_equals_risk_coverage_curve(data):
    """Heavy ties, signed zeros, extreme values, N = 1, all failures or all successes."""
    residuals, confidence = data
    _assert_curve_equal(residuals, confidence)


def test_binary_unit_curve_all_equal_and_large():
    rng = np.random.default_rng(3)
    _assert_curve_equal(np.ones(7), np.full(7, 0.3))
    _assert_curve_equal(np.zeros(7), np.full(7, 0.3))
    residuals = (rng.random(200_003) < 0.2).astype(np.float64)
    _assert_curve_equal(residuals, rng.random(200_003).round(3))
    _assert_curve_equal(residuals, rng.standard_normal(200_003))


def test_curve_table_keeps_the_engine_path_for_soft_and_weighted_residuals():
    rng = np.random.default_rng(4)
    residuals, confidence = rng.random(500), rng.random(500).round(2)
    weights = rng.random(500)
    table = curve_table(residuals, {"a": confidence}, study="s", max_points=10**6)
    curve = M.risk_coverage_curve(residuals, confidence)
    np.testing.assert_array_equal(table["selective_risk"], curve.selective_risks)
    binary = (residuals < 0.3).astype(np.float64)
    weighted = curve_table(
        binary, {"a": confidence}, study="s", max_points=10**6, sample_weight=weights
    )
    curve = M.risk_coverage_curve(binary, confidence, sample_weight=weights)
    expected = pd.Series(curve.generalized_risks, name="generalized_risk")
    pd.testing.assert_series_equal(weighted["generalized_risk"], expected, check_exact=True)
