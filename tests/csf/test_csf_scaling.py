"""Tests of Platt scaling and the never-saturating sigmoid."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import _sigmoid_calibration

from fdbench.csf import PlattScaling, fit_platt, safe_sigmoid


def test_safe_sigmoid_never_reaches_one():
    z = np.array([1e308, np.inf, 1e20, 745.0, 40.0, 37.0, 36.0, 30.0])
    p = safe_sigmoid(z)
    assert np.all(p < 1.0)
    assert np.all(np.diff(p[::-1]) >= 0)
    assert p[-1] < p[-2]  # distinct where float64 can tell them apart
    low = safe_sigmoid(np.array([-np.inf, -1e308, -800.0]))
    assert np.all(low > 0.0)
    with pytest.raises(ValueError, match="NaN"):
        safe_sigmoid(np.array([np.nan]))


def test_platt_preserves_order_and_stays_below_one():
    scaling = PlattScaling(a=3.0, b=-1.0)
    c = np.concatenate([np.linspace(-5, 5, 101), [1e6, 1e300]])
    p = scaling(c)
    assert np.all(p < 1.0) and np.all(p > 0.0)
    assert np.all(np.diff(p) >= 0)
    assert np.all(np.diff(p[:101]) > 0)
    assert np.all(np.diff(PlattScaling(a=-2.0, b=0.0)(c[:101])) < 0)
    with np.errstate(all="raise"):
        extreme = scaling(np.array([-1.7e308, 0.0, 1.7e308]))
    assert 0.0 < extreme[0] < extreme[1] < extreme[2] < 1.0


def test_fit_platt_matches_sklearn_sigmoid_calibration():
    rng = np.random.default_rng(0)
    c = rng.normal(size=500) * 10 + 50
    correct = rng.random(500) < 1 / (1 + np.exp(-(c - 50) / 5))
    fit = fit_platt(c, correct)
    a_sk, b_sk = _sigmoid_calibration(c, correct.astype(int))
    # scikit-learn's convention is p = 1 / (1 + exp(a f + b))
    assert fit.a == pytest.approx(-a_sk, rel=1e-4)
    assert fit.b == pytest.approx(-b_sk, rel=1e-4, abs=1e-4)
    assert fit.a > 0


def test_fit_platt_constant_and_validation():
    fit = fit_platt(np.full(10, 0.3), np.r_[np.ones(7), np.zeros(3)])
    assert fit.a == 0.0
    assert fit(np.array([0.3]))[0] == pytest.approx((7 * 8 / 9 + 3 / 5) / 10, rel=1e-6)
    with pytest.raises(ValueError, match="0/1"):
        fit_platt(np.arange(3.0), np.array([0, 2, 1]))
    with pytest.raises(ValueError, match="shape"):
        fit_platt(np.arange(3.0), np.array([0, 1]))


@pytest.mark.parametrize("scale", [1e6, 1e150, 1e250, 1e306])
def test_fit_platt_handles_huge_confidences(scale):
    # Unbounded CSFs (distances, logits) can take huge values; the fit must not overflow into
    # a degenerate constant map, and the mapped values must stay strictly inside (0, 1).
    rng = np.random.default_rng(1)
    c = rng.normal(size=300)
    correct = (c > 0) ^ (rng.random(300) < 0.1)
    reference = fit_platt(c, correct)
    with np.errstate(all="raise"):
        fit = fit_platt(c * scale, correct)
        p = fit(c * scale)
    assert fit.a * scale == pytest.approx(reference.a, rel=1e-6)
    assert fit.b == pytest.approx(reference.b, rel=1e-6, abs=1e-9)
    np.testing.assert_allclose(p, reference(c), rtol=1e-6)
    assert np.all((p > 0.0) & (p < 1.0))
