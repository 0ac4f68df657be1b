"""Certified operating points against their papers' definitions, brute force and MAPIE."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fdbench.metrics.operating_points import (
    apply_operating_point,
    binomial_p_value,
    calibration_split,
    certify,
    crc_threshold,
    fixed_sequence_testing,
    hoeffding_bentkus_p_value,
    ltt_grid,
    ltt_threshold,
    sgr_operating_point,
    sgr_threshold,
)


def test_binomial_p_value_by_hand():
    # no failure among 22 accepted samples at alpha = 0.1: P(Binom(22, 0.1) <= 0) = 0.9^22
    assert binomial_p_value(0, 22, 0.1) == pytest.approx(0.9**22, rel=1e-12)
    assert binomial_p_value(3, 10, 0.5) == pytest.approx((1 + 10 + 45 + 120) / 1024, rel=1e-12)
    assert binomial_p_value(0, 0, 0.1) == 1.0


def test_hoeffding_bentkus_p_value_by_hand():
    n, r, a = 100, 0.02, 0.1
    h1 = r * math.log(r / a) + (1 - r) * math.log((1 - r) / (1 - a))
    bentkus = math.e * sum(math.comb(n, k) * a**k * (1 - a) ** (n - k) for k in range(3))
    assert hoeffding_bentkus_p_value(r, n, a) == pytest.approx(
        min(math.exp(-n * h1), bentkus), rel=1e-10
    )
    # above alpha the Hoeffding term is exp(0) = 1 and the p-value is 1 at most
    assert hoeffding_bentkus_p_value(0.5, 50, 0.1) <= 1.0
    assert hoeffding_bentkus_p_value(0.0, 0, 0.1) == 1.0


def test_fixed_sequence_stops_at_the_first_p_value_above_delta():
    assert fixed_sequence_testing([0.01, 0.02, 0.2, 0.01], 0.05) == 2
    assert fixed_sequence_testing([0.3, 0.01], 0.05) == 0
    assert fixed_sequence_testing([0.01, 0.05], 0.05) == 2


def test_crc_by_hand():
    # n = 9, alpha = 0.3: 9/10 R + 1/10 <= 0.3 holds when at most 2 accepted failures
    c = np.arange(1.0, 10.0)
    r = np.isin(c, (2, 5, 7)).astype(float)
    point = crc_threshold(r, c, 0.3)
    assert point.threshold == 3.0
    assert point.coverage == pytest.approx(7 / 9)
    assert point.risk == pytest.approx(2 / 7)
    assert point.feasible and math.isnan(point.delta)
    # 1/(n + 1) > alpha: not even accepting nothing passes the condition of the theorem
    assert not crc_threshold(r, c, 0.05).feasible


def test_ltt_by_hand():
    # 40 samples, confidences 40..1; failures at the confidences 1, 2, 3, 10, 20
    c = np.arange(40.0, 0.0, -1)
    r = np.isin(c, (1, 2, 3, 10, 20)).astype(float)
    grid = np.array([30.0, 21.0, 15.0, 5.0, 1.0])
    point = ltt_threshold(r, c, 0.2, 0.1, p_value="binomial", thresholds=grid)
    # accepted (n, failures) and P(Binom(n, 0.2) <= failures):
    # (11, 0) 0.0859, (20, 0) 0.0115, (26, 1) 0.0227, (36, 2) 0.0160, (40, 5) 0.1613 > 0.1
    assert stats.binom.cdf(5, 40, 0.2) > 0.1 > max(0.8**11, stats.binom.cdf(2, 36, 0.2))
    assert point.threshold == 5.0
    assert point.coverage == pytest.approx(36 / 40)
    assert point.risk == pytest.approx(2 / 36)
    assert point.bound == 0.2 and point.feasible
    # at delta = 0.05 the first hypothesis (11 accepted, p = 0.0859) already stops the sequence
    assert not ltt_threshold(r, c, 0.2, 0.05, p_value="binomial", thresholds=grid).feasible


def _brute_ltt(r, c, alpha, delta, grid, binary):
    last = None
    for lam in grid:
        acc = c >= lam
        n = int(acc.sum())
        if binary:
            p = stats.binom.cdf(r[acc].sum(), n, alpha) if n else 1.0
        else:
            rh = r[acc].mean() if n else 0.0
            p = float(hoeffding_bentkus_p_value(rh, n, alpha)) if n else 1.0
        if not p <= delta:
            break
        last = lam
    return last


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(5, 120),
    seed=st.integers(0, 2**31),
    alpha=st.sampled_from([0.05, 0.1, 0.3]),
    delta=st.sampled_from([0.05, 0.2]),
    binary=st.booleans(),
)
def test_ltt_equals_brute_force(n, seed, alpha, delta, binary):
    rng = np.random.default_rng(seed)
    c = np.round(rng.normal(size=n), 1)
    r = (rng.uniform(size=n) < 0.3 * (c < 0)).astype(float)
    grid = np.unique(c)[::-1]
    point = ltt_threshold(
        r, c, alpha, delta, p_value="binomial" if binary else "hoeffding_bentkus", thresholds=grid
    )
    expected = _brute_ltt(r, c, alpha, delta, grid, binary)
    if expected is None:
        assert not point.feasible and point.threshold == np.inf
    else:
        assert point.threshold == expected


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 80), seed=st.integers(0, 2**31), alpha=st.sampled_from([0.1, 0.3, 0.6]))
def test_crc_equals_the_definition(n, seed, alpha):
    rng = np.random.default_rng(seed)
    c = np.round(rng.normal(size=n), 1)
    r = rng.uniform(size=n) * (rng.uniform(size=n) < 0.5)
    point = crc_threshold(r, c, alpha)
    ok = [
        lam for lam in np.unique(c) if n / (n + 1) * (r * (c >= lam)).mean() + 1 / (n + 1) <= alpha
    ]
    if ok:
        assert point.threshold == min(ok)
    else:
        assert point.threshold == np.inf and not point.feasible


def test_ltt_grid_uses_only_confidences_and_starts_where_a_test_can_pass():
    c = np.linspace(1, 0, 1000)
    grid = ltt_grid(c, 0.1, 0.1, n_levels=100)
    sizes = np.arange(1, 1001)
    first = sizes[stats.binom.cdf(np.floor(sizes * 0.05), sizes, 0.1) <= 0.1][0]
    assert (np.diff(grid) < 0).all()
    assert (c >= grid[0]).sum() == math.ceil(first / 10) * 10
    assert (c >= grid[-1]).sum() == 1000
    assert ltt_grid(c[:5], 0.1, 0.1).size == 0


def test_sgr_operating_point_is_sgr_threshold():
    rng = np.random.default_rng(3)
    c = rng.normal(size=500)
    r = (rng.uniform(size=500) < 0.3 * (c < 0)).astype(float)
    fit = sgr_threshold(r, c, 0.1, 0.05)
    point = sgr_operating_point(r, c, 0.1, 0.05)
    assert (point.threshold, point.bound, point.coverage) == (
        fit.threshold,
        fit.bound,
        fit.coverage,
    )
    assert point.bound <= 0.1


def test_calibration_split_is_disjoint_seeded_and_sized():
    mask = calibration_split(101, 0.3, seed=4)
    assert mask.sum() == 30
    assert np.array_equal(mask, calibration_split(101, 0.3, seed=4))
    assert not np.array_equal(mask, calibration_split(101, 0.3, seed=5))
    with pytest.raises(ValueError, match="calibration_fraction"):
        calibration_split(3, 0.1, seed=0)


def test_apply_operating_point():
    c = np.arange(1.0, 10.0)
    r = np.isin(c, (2, 5, 7)).astype(float)
    point = crc_threshold(r, c, 0.3)
    out = apply_operating_point(point, r, c)
    assert (out.risk, out.coverage) == (pytest.approx(2 / 7), pytest.approx(7 / 9))
    assert out.generalized_risk == pytest.approx(2 / 9) and out.held


@pytest.mark.parametrize("method", ["sgr", "ltt_hb", "ltt_binomial", "crc"])
def test_bad_arguments_name_themselves(method):
    r, c = np.zeros(30), np.linspace(0, 1, 30)
    with pytest.raises(ValueError, match=r"alpha|target_risk"):
        certify(r, c, 1.5, 0.1, method)
    with pytest.raises(ValueError, match="confidence"):
        certify(r, np.full(30, np.nan), 0.1, 0.1, method)
    with pytest.raises(ValueError, match="method"):
        certify(r, c, 0.1, 0.1, "nope")


mapie = pytest.importorskip("mapie")


@pytest.mark.parametrize("binary", [False, True])
def test_p_values_equal_mapie(binary):
    from mapie.risk_control.methods import compute_hoeffding_bentkus_p_value

    rng = np.random.default_rng(0)
    n = rng.integers(1, 400, size=50)
    errors = rng.binomial(n, rng.uniform(0, 0.4, size=50))
    r_hat = errors / n
    # MAPIE takes ceil(n * r_hat) in floating point, which is errors + 1 where n * (errors / n)
    # rounds above errors; the definition's count is errors: compare where the two agree
    exact = np.ceil(n * r_hat) == errors
    assert exact.sum() > 40
    for alpha in (0.05, 0.1, 0.3):
        theirs = compute_hoeffding_bentkus_p_value(r_hat, n.astype(float), alpha, binary)[:, 0]
        if binary:
            ours = binomial_p_value(errors, n, alpha)
        else:
            ours = hoeffding_bentkus_p_value(r_hat, n, alpha)
        np.testing.assert_allclose(ours[exact], theirs[exact], rtol=1e-12)


def test_fixed_sequence_equals_mapie():
    from mapie.risk_control import control_fwer

    rng = np.random.default_rng(1)
    for _ in range(50):
        p = np.sort(rng.uniform(0, 0.3, size=20)) * rng.uniform(0.5, 1.5, size=20)
        k = fixed_sequence_testing(p, 0.1)
        assert list(control_fwer(p, 0.1, fwer_method="fixed_sequence")) == list(range(k))
