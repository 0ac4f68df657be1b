"""SGR thresholds: the binomial bound and the risk guarantee in seeded simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from fdbench.analysis import risk_excess, risk_upper_bound, selective_outcome, sgr_threshold


@pytest.mark.parametrize(("errors", "n", "delta"), [(0, 50, 0.05), (7, 200, 0.01), (30, 31, 0.2)])
def test_bound_inverts_the_binomial_tail(errors, n, delta):
    b = risk_upper_bound(errors, n, delta)
    assert stats.binom.cdf(errors, n, b) == pytest.approx(delta, rel=1e-8)
    assert b > errors / n
    assert risk_upper_bound(n, n, delta) == 1.0


def _algorithm1(r, c, target, delta):
    """Geifman & El-Yaniv (2017), Algorithm 1, written out with 1-based z and the bound solved
    numerically: returns every (θ_i, b*_i) the binary search tests."""
    order = np.argsort(c, kind="stable")
    m = len(c)
    k = int(np.ceil(np.log2(m)))
    z_min, z_max = 1, m
    tested = []
    for _ in range(k):
        z = int(np.ceil((z_min + z_max) / 2))
        theta = c[order[z - 1]]
        accepted = c >= theta
        n, e = int(accepted.sum()), int(r[accepted].sum())
        if e == n:
            bound = 1.0
        else:
            bound = optimize.brentq(
                lambda b, e=e, n=n: stats.binom.cdf(e, n, b) - delta / k, e / n, 1.0, xtol=1e-14
            )
        tested.append((theta, bound))
        if bound <= target:
            z_max = z
        else:
            z_min = z
    return tested


@pytest.mark.parametrize("seed", range(6))
def test_sgr_follows_algorithm_1(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(50, 3000))
    c = rng.uniform(size=m).round(int(rng.integers(2, 5)))  # ties for some seeds
    r = (rng.uniform(size=m) < 0.25 * (1 - c)).astype(np.float64)
    target, delta = float(rng.uniform(0.06, 0.15)), float(rng.uniform(0.01, 0.2))
    tested = _algorithm1(r, c, target, delta)
    fit = sgr_threshold(r, c, target, delta)
    passing = [(theta, b) for theta, b in tested if b <= target]
    assert passing and passing != tested  # the search both accepts and rejects thresholds
    # the last passing threshold of the search is the one with the largest coverage
    theta, bound = passing[-1]
    assert fit.feasible and fit.threshold == theta
    assert fit.bound == pytest.approx(bound, rel=1e-9)
    assert fit.coverage == np.mean(c >= theta)
    assert fit.risk == r[c >= theta].mean()


def _draw(rng, n):
    """Confidence ~ U(0, 1), P(failure | c) = 0.4·(1 − c): true risk above θ is 0.2·(1 − θ)."""
    c = rng.uniform(size=n)
    r = (rng.uniform(size=n) < 0.4 * (1 - c)).astype(np.float64)
    return r, c


def _naive_threshold(r, c, target):
    order = np.argsort(-c)
    risk = np.cumsum(r[order]) / np.arange(1, r.size + 1)
    ok = np.nonzero(risk <= target)[0]
    return c[order][ok[-1]]


def test_sgr_guarantee_holds_in_simulation():
    rng = np.random.default_rng(2017)
    target, delta, trials = 0.1, 0.1, 200
    true_excess = test_excess = naive_excess = 0
    coverages = []
    for _ in range(trials):
        r_val, c_val = _draw(rng, 5000)
        fit = sgr_threshold(r_val, c_val, target, delta)
        assert fit.feasible and fit.bound <= target and fit.bound >= fit.risk
        coverages.append(fit.coverage)
        true_excess += 0.2 * (1 - fit.threshold) > target
        r_test, c_test = _draw(rng, 20000)
        test_excess += selective_outcome(r_test, c_test, fit.threshold)[0] > target
        naive = _naive_threshold(r_val, c_val, target)
        naive_excess += 0.2 * (1 - naive) > target
    assert true_excess / trials <= delta
    assert test_excess / trials <= delta
    # the same check catches a threshold without the bound: it violates the target far too often
    assert naive_excess / trials > 3 * delta
    # and SGR is not trivially conservative: the best possible coverage at r* = 0.1 is 0.5
    assert 0.3 < np.mean(coverages) < 0.5


def test_sgr_infeasible_and_ties():
    r = np.ones(100)
    fit = sgr_threshold(r, np.linspace(0, 1, 100), 0.1, 0.05)
    assert not fit.feasible and fit.coverage == 0.0 and fit.threshold == np.inf
    r = np.zeros(400)
    c = np.repeat([0.2, 0.5, 0.9, 1.0], 100)
    fit = sgr_threshold(r, c, 0.05, 0.05)
    assert fit.coverage in {0.25, 0.5, 0.75, 1.0}
    assert fit.coverage == 1.0
    with pytest.raises(ValueError, match="0/1"):
        sgr_threshold(np.full(10, 0.5), np.arange(10.0), 0.1, 0.1)
    with pytest.raises(ValueError, match="target_risk"):
        sgr_threshold(r, c, 1.5, 0.1)


def test_risk_excess_table():
    rng = np.random.default_rng(5)
    val = _draw(rng, 3000)
    r_shift, c_shift = _draw(rng, 3000)
    r_shift = np.maximum(r_shift, (rng.uniform(size=3000) < 0.2)).astype(np.float64)
    table = risk_excess(
        val, {"iid": _draw(rng, 3000), "shift": (r_shift, c_shift)}, [0.05, 0.1], 0.1
    )
    assert len(table) == 4
    assert set(table.columns) >= {"study", "target_risk", "risk", "coverage", "excess"}
    np.testing.assert_allclose(table.excess, table.risk - table.target_risk)
    shifted = table[table.study == "shift"]
    assert (shifted.excess > 0).all()
