"""Population-AURC estimators: hand cases, the per-sample definition, ties, and the rate."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench.metrics.population import population_aurc, population_aurc_interval


def _per_sample_aurc(r, c):
    """Mean over k of the selective risk of the k most confident samples (Geifman's code)."""
    order = np.argsort(-c, kind="stable")
    risks = np.cumsum(r[order]) / np.arange(1, r.size + 1)
    return risks.mean()


def test_by_hand():
    c, r = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 1.0])
    # harmonic weights H3 - H_{3-i}: 1/3, 5/6, 11/6; (1/3)(1/3 + 11/6) = 13/18
    assert population_aurc(r, c) == pytest.approx(13 / 18, rel=1e-12)
    # the per-sample AURC: top-1 risk 1, top-2 1/2, top-3 2/3, mean 13/18
    assert _per_sample_aurc(r, c) == pytest.approx(13 / 18, rel=1e-12)
    expected_ln = (-math.log(3 / 4) - math.log(1 / 4)) / 3
    assert population_aurc(r, c, estimator="ln") == pytest.approx(expected_ln, rel=1e-12)


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**31))
def test_harmonic_estimator_is_the_per_sample_aurc_for_distinct_confidences(n, seed):
    rng = np.random.default_rng(seed)
    c = rng.permutation(n).astype(float)
    r = rng.uniform(size=n) * (rng.uniform(size=n) < 0.4)
    assert population_aurc(r, c) == pytest.approx(_per_sample_aurc(r, c), rel=1e-10, abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 6), seed=st.integers(0, 2**31), estimator=st.sampled_from(["harmonic", "ln"])
)
def test_ties_get_the_mean_over_every_order(n, seed, estimator):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 3, size=n).astype(float)
    r = (rng.uniform(size=n) < 0.5).astype(float)
    values = []
    for perm in itertools.permutations(range(n)):
        tie_break = np.empty(n)
        tie_break[list(perm)] = np.arange(n) * 1e-3
        values.append(population_aurc(r, c + tie_break, estimator=estimator))
    assert population_aurc(r, c, estimator=estimator) == pytest.approx(np.mean(values), rel=1e-10)


def test_counts_are_copies():
    rng = np.random.default_rng(0)
    c, r = rng.normal(size=30), (rng.uniform(size=30) < 0.3).astype(float)
    counts = rng.integers(0, 4, size=30)
    for estimator in ("harmonic", "ln"):
        weighted = population_aurc(r, c, estimator=estimator, sample_weight=counts)
        copies = population_aurc(np.repeat(r, counts), np.repeat(c, counts), estimator=estimator)
        assert weighted == pytest.approx(copies, rel=1e-12)
    with pytest.raises(ValueError, match="sample_weight"):
        population_aurc(r, c, sample_weight=np.full(30, 0.5))
    with pytest.raises(ValueError, match="estimator"):
        population_aurc(r, c, estimator="nope")


# The synthetic model: confidence g ~ U(0, 1), P(failure | g) = P0 + P1·(1 − g)^K. With
# v = 1 − g ~ U(0, 1), the population AURC E[η(g)·(−ln(1 − g))] = P0 + P1 ∫ v^K (−ln v) dv
# = P0 + P1/(K + 1)^2.
P0, P1, K = 0.02, 0.5, 2
TRUE_AURC = P0 + P1 / (K + 1) ** 2


def _draw(rng, replicates, n):
    g = rng.uniform(size=(replicates, n))
    failures = rng.uniform(size=(replicates, n)) < P0 + P1 * (1 - g) ** K
    return failures.astype(float), g


def test_the_closed_form_by_numerical_integration():
    from scipy import integrate

    value, _ = integrate.quad(lambda v: (P0 + P1 * v**K) * -math.log(v), 0, 1)
    assert value == pytest.approx(TRUE_AURC, rel=1e-9)


@pytest.mark.parametrize("estimator", ["harmonic", "ln"])
def test_error_shrinks_at_the_stated_rate(estimator):
    """Root mean squared error at n = 100, 1,000, 10,000 (300 replicates each) against the
    rate O(√(ln n / n)) of Zhou et al.: the error at 10,000 is within 1.5 times the rate's
    ratio of the error at 100 (the rate predicts 0.141; sampling noise of the RMSE over 300
    replicates is about 4 %)."""
    rng = np.random.default_rng(7)
    rmse = {}
    for n in (100, 1000, 10000):
        r, c = _draw(rng, 300, n)
        errors = [population_aurc(r[k], c[k], estimator=estimator) - TRUE_AURC for k in range(300)]
        rmse[n] = float(np.sqrt(np.mean(np.square(errors))))
    assert rmse[100] > rmse[1000] > rmse[10000]
    rate = math.sqrt((math.log(10000) / 10000) / (math.log(100) / 100))
    assert rmse[10000] / rmse[100] <= 1.5 * rate


def test_interval_covers_the_population_value():
    rng = np.random.default_rng(11)
    r, c = _draw(rng, 100, 400)
    covered = 0
    for k in range(100):
        estimate, low, high = population_aurc_interval(
            r[k], c[k], level=0.9, n_resamples=200, seed=k
        )
        assert low <= estimate <= high
        covered += low <= TRUE_AURC <= high
    # nominal 90 %; the binomial 1st percentile of 100 draws at 0.9 is 82
    assert covered >= 82


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 80), seed=st.integers(0, 2**31))
def test_empirical_aurc_differs_from_the_harmonic_estimate_by_the_end_term(n, seed):
    """For distinct confidences, the trapezoidal AURC of METRICS.md minus the harmonic estimate
    (a right Riemann sum over coverages k/n) is (R_1 − R_n)/(2n): the top-1 risk minus the
    overall risk over 2n, at most 1/(2n) for 0/1 residuals (docs/metrics.md)."""
    from fdbench import metrics as M

    rng = np.random.default_rng(seed)
    c = rng.permutation(n).astype(float)
    r = (rng.uniform(size=n) < 0.3).astype(float)
    top1 = r[np.argmax(c)]
    expected = (top1 - r.mean()) / (2 * n)
    assert M.aurc(r, c) - population_aurc(r, c) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**31))
def test_harmonic_estimator_is_aurc_per_sample_for_distinct_confidences(n, seed):
    from fdbench import metrics as M

    rng = np.random.default_rng(seed)
    c = rng.permutation(n).astype(float)
    r = (rng.uniform(size=n) < 0.3).astype(float)
    assert population_aurc(r, c) == pytest.approx(M.aurc_per_sample(r, c), rel=1e-10, abs=1e-15)
