"""Tests of the logit CSFs and temperature scaling against direct computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import logsumexp

from fdbench.csf import doctor, energy, fit_temperature, mls, msr, pe, temp_mls, temp_msr

HAND = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [-4.0, 0.5, 0.25], [10.0, -3.0, 2.0]])


def _naive_softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    return [v / sum(e) for v in e]


def test_msr_mls_hand():
    expected = [max(_naive_softmax(r)) for r in HAND]
    np.testing.assert_allclose(msr(HAND), expected, rtol=1e-14)
    assert msr(HAND)[0] == pytest.approx(1 / 3, rel=1e-15)
    np.testing.assert_array_equal(mls(HAND), [0.0, 3.0, 0.5, 10.0])


def test_pe_hand_and_uniform():
    expected = [sum(p * math.log(p) for p in _naive_softmax(r)) for r in HAND]
    np.testing.assert_allclose(pe(HAND), expected, rtol=1e-13)
    for k in (2, 7, 1000):
        assert pe(np.full((1, k), 3.5))[0] == pytest.approx(-math.log(k), rel=1e-13)


def test_energy_is_logsumexp():
    expected = [math.log(sum(math.exp(v) for v in r)) for r in HAND]
    np.testing.assert_allclose(energy(HAND), expected, rtol=1e-14)
    huge = np.array([[1000.0, 999.0, -1000.0]])
    assert energy(huge)[0] == pytest.approx(1000 + math.log1p(math.exp(-1)), rel=1e-15)


def test_doctor_hand():
    sums = [sum(p * p for p in _naive_softmax(r)) for r in HAND]
    expected = [-(1 - s) / s for s in sums]
    np.testing.assert_allclose(doctor(HAND), expected, rtol=1e-12, atol=1e-15)
    assert doctor(np.zeros((1, 4)))[0] == pytest.approx(1 - 4)
    near_one = doctor(np.array([[40.0, 0.0]]))[0]
    assert near_one < 0 and near_one == pytest.approx(-2 * math.exp(-40), rel=1e-6)


logit_matrices = arrays(
    np.float64,
    st.tuples(st.integers(1, 6), st.integers(2, 6)),
    elements=st.floats(-500, 500, allow_nan=False),
)


@settings(max_examples=40, deadline=None)
@given(logit_matrices)
def test_properties(z):
    m = msr(z)
    assert np.all((m > 0) & (m <= 1))
    np.testing.assert_allclose(energy(z), logsumexp(z, axis=1), rtol=1e-15)
    k = z.shape[1]
    p = pe(z)
    assert np.all((p <= 1e-12) & (p >= -math.log(k) - 1e-12))
    d = doctor(z)
    assert np.all((d <= 0) & (d >= 1 - k - 1e-9))
    np.testing.assert_allclose(temp_msr(z, 0.37), msr(z / 0.37), rtol=1e-15)


def test_temperature_recovers_generating_temperature():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(4000, 6)) * 4
    p = np.exp(z / 2.5 - logsumexp(z / 2.5, axis=1, keepdims=True))
    labels = np.minimum((p.cumsum(axis=1) < rng.random((len(p), 1))).sum(axis=1), 5)
    t = fit_temperature(z, labels)
    assert t == pytest.approx(2.5, rel=0.08)
    grid = np.exp(np.linspace(np.log(1.5), np.log(4), 1001))
    nll = [np.mean(logsumexp(z / g, axis=1) - z[np.arange(len(z)), labels] / g) for g in grid]
    assert t == pytest.approx(grid[int(np.argmin(nll))], rel=2e-3)


@pytest.mark.parametrize("case", ["noisy", "separable", "constant"])
def test_fitted_temperature_keeps_the_predicted_class(case):
    # T > 0 only rescales the logits: the scaled softmax has the same arg-max, and TEMP-MSR is
    # the scaled probability of that (unchanged) predicted class.
    rng = np.random.default_rng(3)
    z = rng.normal(size=(200, 5)) * 3
    labels = rng.integers(0, 5, 200)
    if case == "separable":  # every prediction right: the NLL falls as T -> 0 (lower bound)
        labels = np.argmax(z, axis=1)
    elif case == "constant":
        z = np.zeros_like(z)
    t = fit_temperature(z, labels)
    assert np.isfinite(t) and t > 0
    pred = np.argmax(z, axis=1)
    scaled = np.array([_naive_softmax(row / t) for row in z])
    if case != "constant":
        np.testing.assert_array_equal(np.argmax(scaled, axis=1), pred)
    np.testing.assert_allclose(temp_msr(z, t), scaled[np.arange(200), pred], rtol=1e-12)
    np.testing.assert_allclose(temp_mls(z, t), z[np.arange(200), pred] / t, rtol=1e-15)


def test_temperature_scaled_csfs_keep_argmax_and_validate():
    z = HAND
    np.testing.assert_allclose(temp_mls(z, 2.0), mls(z) / 2)
    np.testing.assert_allclose(temp_msr(z, 2.0), [max(_naive_softmax(r / 2)) for r in z])
    with pytest.raises(ValueError, match="temperature"):
        temp_msr(z, 0.0)
    with pytest.raises(ValueError, match="labels must lie"):
        fit_temperature(z, [0, 1, 2, 3])


def test_input_validation():
    with pytest.raises(ValueError, match="logits must be 2-dimensional"):
        msr(np.zeros(3))
    with pytest.raises(ValueError, match="logits must be finite"):
        pe(np.array([[np.nan, 1.0]]))
