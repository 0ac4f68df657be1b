"""Tests of the logit CSFs and temperature scaling against direct computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import logsumexp

from fdbench.csf import doctor, energy, fit_temperature, mls, msr, pe, temp_mls

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
    np.testing.assert_allclose(temp_mls(z, 0.37), msr(z / 0.37), rtol=1e-15)


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


@pytest.mark.parametrize("method", ["exact", "fd-shifts"])
@pytest.mark.parametrize("case", ["noisy", "separable", "constant"])
def test_fitted_temperature_keeps_the_predicted_class(case, method):
    # T > 0 only rescales the logits: the scaled softmax has the same arg-max, and TEMP-MLS is
    # the scaled probability of that (unchanged) predicted class.
    rng = np.random.default_rng(3)
    z = rng.normal(size=(200, 5)) * 3
    labels = rng.integers(0, 5, 200)
    if case == "separable":  # every prediction right: the NLL falls as T -> 0 (lower bound)
        labels = np.argmax(z, axis=1)
    elif case == "constant":
        z = np.zeros_like(z)
    t = fit_temperature(z, labels, method=method)
    assert np.isfinite(t) and t > 0
    pred = np.argmax(z, axis=1)
    scaled = np.array([_naive_softmax(row / t) for row in z])
    if case != "constant":
        np.testing.assert_array_equal(np.argmax(scaled, axis=1), pred)
    np.testing.assert_allclose(temp_mls(z, t), scaled[np.arange(200), pred], rtol=1e-12)


def test_temp_mls_hand():
    # max_c softmax(z / T)_c at T = 2, by hand: [1, 2, 3] / 2 -> 1 / (1 + e^-0.5 + e^-1);
    # [10, -3, 2] / 2 -> 1 / (1 + e^-6.5 + e^-4); all-equal logits -> 1/3 at any T.
    got = temp_mls(HAND, 2.0)
    assert got[0] == pytest.approx(1 / 3, rel=1e-15)
    assert got[1] == pytest.approx(0.5064804, abs=5e-8)
    assert got[1] == pytest.approx(1 / (1 + math.exp(-0.5) + math.exp(-1)), rel=1e-15)
    assert got[3] == pytest.approx(1 / (1 + math.exp(-6.5) + math.exp(-4)), rel=1e-15)
    np.testing.assert_allclose(got, [max(_naive_softmax(r / 2)) for r in HAND], rtol=1e-15)
    with pytest.raises(ValueError, match="temperature"):
        temp_mls(HAND, 0.0)
    with pytest.raises(ValueError, match="labels must lie"):
        fit_temperature(HAND, [0, 1, 2, 3])
    with pytest.raises(ValueError, match="method must be"):
        fit_temperature(HAND, [0, 1, 2, 0], method="adam")


def test_temp_mls_ranks_unlike_mls():
    # a: max logit 5 but a close runner-up; b: max logit 1 far above the rest. MLS trusts a
    # more; the temperature-scaled softmax (T = 2) trusts b more:
    # a: [2.5, 2.45, 0] -> 1 / (1 + e^-0.05 + e^-2.5) = 0.49181; b: [0.5, -1.5, -1.5] ->
    # 1 / (1 + 2 e^-2) = 0.7869860.
    z = np.array([[5.0, 4.9, 0.0], [1.0, -3.0, -3.0]])
    assert mls(z)[0] > mls(z)[1]
    got = temp_mls(z, 2.0)
    np.testing.assert_allclose(got, [0.4918079, 0.7869860], atol=5e-8)
    assert got[0] < got[1]


def _torch_lbfgs_temperature(z, labels):
    # FD-Shifts' TemperatureScaling (fd_shifts/analysis/__init__.py) re-typed with its settings
    torch = pytest.importorskip("torch")
    temperature = torch.ones(1).requires_grad_(True)
    logits, target = torch.tensor(z), torch.tensor(labels).long()
    optimizer = torch.optim.LBFGS([temperature], lr=0.01, max_iter=50)

    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(logits / temperature, target)
        loss.backward()
        return loss

    optimizer.step(closure)
    return temperature.item()


@pytest.mark.parametrize("scale", [0.05, 0.3, 1.0, 3.0, 8.0, 50.0])
def test_fd_shifts_temperature_fit_matches_torch_lbfgs(scale):
    rng = np.random.default_rng(int(scale * 100))
    labels = rng.integers(0, 10, 1000)
    z = rng.normal(size=(1000, 10)) * scale
    z[np.arange(1000), labels] += scale * rng.uniform(0, 3, 1000)
    expected = _torch_lbfgs_temperature(z, labels)
    # torch keeps T and its gradient in float32: agreement to float32 precision
    assert fit_temperature(z, labels, method="fd-shifts") == pytest.approx(expected, rel=1e-6)


def test_fd_shifts_fit_stops_short_of_the_nll_minimum():
    # 50 fixed steps of 0.01 × the quasi-Newton step: far from T = 1 the NLL minimum is not
    # reached (here the minimum is near T = 6.5, FD-Shifts' fit ends near T = 1.28)
    rng = np.random.default_rng(300)
    labels = rng.integers(0, 10, 1000)
    z = rng.normal(size=(1000, 10)) * 8
    z[np.arange(1000), labels] += 8 * rng.uniform(0, 3, 1000)
    exact = fit_temperature(z, labels)
    short = fit_temperature(z, labels, method="fd-shifts")
    assert 5 < exact < 8
    assert 1.1 < short < 1.5
    nll = lambda t: np.mean(logsumexp(z / t, axis=1) - z[np.arange(1000), labels] / t)  # noqa: E731
    assert nll(exact) < nll(short) < nll(1.0)


def test_input_validation():
    with pytest.raises(ValueError, match="logits must be 2-dimensional"):
        msr(np.zeros(3))
    with pytest.raises(ValueError, match="logits must be finite"):
        pe(np.array([[np.nan, 1.0]]))


def test_fd_shifts_fit_falls_back_to_the_nll_minimum_below_zero():
    # nearly constant dNLL/dT: the secant step of the 29th iteration throws T to about -53
    # (torch.optim.LBFGS does the same: FD-Shifts would use a negative temperature)
    labels = np.random.default_rng(0).integers(0, 4, 300)[:100]
    z = 2.0 * np.eye(4)[labels] + np.random.default_rng(1).normal(size=(300, 4))[:100]
    assert _torch_lbfgs_temperature(z, labels) < 0
    with pytest.warns(RuntimeWarning, match="ended at T <= 0"):
        t = fit_temperature(z, labels, method="fd-shifts")
    assert t == fit_temperature(z, labels)
