"""AURC, AUGRC, e-AURC/e-AUGRC, NAURC and operating points against brute force from METRICS.md."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.metrics._core import optimal_from_counts

from . import metrics_brute as brute
from .strategies import samples

SETTINGS = settings(max_examples=60, deadline=None)


@SETTINGS
@given(samples())
def test_aurc_augrc_match_brute_force(data):
    r, c, w = data
    assert M.aurc(r, c, sample_weight=w) == pytest.approx(brute.aurc(r, c, w), abs=1e-12)
    assert M.augrc(r, c, sample_weight=w) == pytest.approx(brute.augrc(r, c, w), abs=1e-12)


@SETTINGS
@given(samples())
def test_curve_matches_brute_force(data):
    r, c, w = data
    curve = M.risk_coverage_curve(r, c, sample_weight=w)
    points = np.array(brute.curve_points(r, c, w))
    np.testing.assert_allclose(curve.coverages, points[:, 0], atol=1e-12)
    np.testing.assert_allclose(curve.selective_risks, points[:, 1], atol=1e-12)
    np.testing.assert_allclose(curve.generalized_risks, points[:, 2], atol=1e-12)
    expected_thresholds = np.append(np.unique(c), np.inf)
    np.testing.assert_array_equal(curve.thresholds, expected_thresholds)


@SETTINGS
@given(samples(weights="none"))
def test_excess_metrics_match_brute_force_optimum(data):
    r, c, _ = data
    aurc_opt, augrc_opt = brute.optimal(r)
    assert M.eaurc(r, c) == pytest.approx(brute.aurc(r, c) - aurc_opt, abs=1e-12)
    assert M.eaugrc(r, c) == pytest.approx(brute.augrc(r, c) - augrc_opt, abs=1e-12)
    random = float(np.mean(r))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", M.UndefinedMetricWarning)
        value = M.naurc(r, c)
    if random - aurc_opt > 1e-9:
        expected = (brute.aurc(r, c) - aurc_opt) / (random - aurc_opt)
        assert value == pytest.approx(expected, abs=1e-9)


@SETTINGS
@given(samples(weights="int"))
def test_integer_weights_equal_explicit_repetition(data):
    r, c, w = data
    reps = w.astype(int)
    rr, cc = np.repeat(r, reps), np.repeat(c, reps)
    for fn in (M.aurc, M.augrc):
        assert fn(r, c, sample_weight=w) == pytest.approx(fn(rr, cc), abs=1e-12), fn.__name__
    # the optimum keeps the n samples: weight w is w n / sum w copies (scale-free weights)
    copies = w * r.size / w.sum()
    values = np.unique(r)
    per_value = np.array([[copies[r == v].sum() for v in values]])
    opt_w = M.optimal_aurc_augrc(r, sample_weight=w)
    np.testing.assert_allclose(opt_w, np.ravel(optimal_from_counts(values, per_value)), atol=1e-12)
    np.testing.assert_allclose(
        M.optimal_aurc_augrc(r, sample_weight=7.0 * w), opt_w, rtol=1e-13, atol=1e-15
    )
    assert M.selective_risk_at_coverage(r, c, 0.7, sample_weight=w) == pytest.approx(
        M.selective_risk_at_coverage(rr, cc, 0.7), abs=1e-12
    )


@SETTINGS
@given(samples(weights="none"), st.sampled_from([(0.0, 1.0), (0.1, 0.9), (0.5, 1.0), (0.0, 0.3)]))
def test_aurc_over_coverage_range(data, bounds):
    r, c, _ = data
    value = M.aurc(r, c, coverage_range=bounds)
    assert value == pytest.approx(brute.aurc_range(r, c, *bounds), abs=1e-12)
    if bounds == (0.0, 1.0):
        assert value == pytest.approx(M.aurc(r, c), abs=1e-12)


@SETTINGS
@given(samples(weights="none"), st.sampled_from([(0.0, 1.0), (0.1, 0.9), (0.5, 1.0), (0.0, 0.3)]))
def test_excess_and_normalised_aurc_over_coverage_range(data, bounds):
    r, c, _ = data
    perfect = -np.argsort(np.argsort(r, kind="stable"), kind="stable").astype(float)
    aurc_opt = brute.aurc_range(r, perfect, *bounds)
    value = brute.aurc_range(r, c, *bounds)
    assert M.eaurc(r, c, coverage_range=bounds) == pytest.approx(value - aurc_opt, abs=1e-12)
    assert M.eaurc(r, perfect, coverage_range=bounds) == pytest.approx(0.0, abs=1e-15)
    random = float(np.mean(r))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", M.UndefinedMetricWarning)
        normalised = M.naurc(r, c, coverage_range=bounds)
    if random - aurc_opt > 1e-9:
        expected = (value - aurc_opt) / (random - aurc_opt)
        assert normalised == pytest.approx(expected, abs=1e-9)
    if bounds == (0.0, 1.0):
        assert M.eaurc(r, c, coverage_range=bounds) == pytest.approx(M.eaurc(r, c), abs=1e-12)


@SETTINGS
@given(samples(weights="int"), st.sampled_from([(0.0, 1.0), (0.2, 0.7)]))
def test_excess_aurc_over_range_needs_whole_copies(data, bounds):
    r, c, w = data
    # equal weights are one copy each, whatever their value
    expected = M.eaurc(r, c, coverage_range=bounds)
    assert M.eaurc(r, c, sample_weight=np.full(r.size, 3.0), coverage_range=bounds) == (
        pytest.approx(expected, abs=1e-12)
    )
    if not np.all(w == w[0]):
        with pytest.raises(ValueError, match="coverage_range"):
            M.eaurc(r, c, sample_weight=w, coverage_range=bounds)


@SETTINGS
@given(samples(), st.sampled_from([0.05, 0.3, 0.5, 0.95, 1.0]))
def test_risk_at_coverage_and_coverage_at_risk(data, x):
    r, c, w = data
    assert M.selective_risk_at_coverage(r, c, x, sample_weight=w) == pytest.approx(
        brute.risk_at_coverage(r, c, x, w), abs=1e-12
    )
    assert M.coverage_at_risk(r, c, x, sample_weight=w) == pytest.approx(
        brute.coverage_at_risk(r, c, x, w), abs=1e-12
    )


@pytest.mark.parametrize("n", [25, 29, 41, 49])
def test_risk_at_coverage_exactly_on_a_curve_point(n):
    # k / n * n can round above k (7 / 25 * 25 = 7.000000000000001): the coverage of a point
    # must be compared as the definition states it, accepted weight / total >= coverage.
    rng = np.random.default_rng(n)
    r = (rng.random(n) < 0.4).astype(float)
    c = rng.permutation(n).astype(float)
    for k in range(1, n + 1):
        x = k / n
        assert M.selective_risk_at_coverage(r, c, x) == brute.risk_at_coverage(r, c, x), (k, n)


@pytest.mark.parametrize("n", [7, 25, 29, 41, 49])
def test_coverage_at_risk_exactly_on_a_curve_point(n):
    # A target risk equal to a point's selective risk k/m selects that point: the selective
    # risk is compared as defined, accepted loss / accepted weight <= risk (k/m * m can round
    # below k, e.g. 1/49 * 49, so loss <= risk * weight would miss it).
    rng = np.random.default_rng(n)
    r = (rng.random(n) < 0.5).astype(float)
    c = rng.permutation(n).astype(float)
    curve = M.risk_coverage_curve(r, c)
    for m in range(1, n + 1):
        for k in range(m + 1):
            risk = k / m
            assert M.coverage_at_risk(r, c, risk) == brute.coverage_at_risk(r, c, risk), (k, m)
    for risk in curve.selective_risks:
        assert M.coverage_at_risk(r, c, risk) == brute.coverage_at_risk(r, c, risk)


def test_coverage_at_risk_one_failure_in_m():
    # one failure ranked first among m samples: full coverage has selective risk exactly 1/m
    # (1/49 * 49 rounds below 1)
    for m in range(1, 101):
        first = np.zeros(m)
        first[0] = 1.0
        assert M.coverage_at_risk(first, -np.arange(float(m)), 1 / m) == 1.0, m


@SETTINGS
@given(samples(kind="binary", weights="none"))
def test_augrc_auroc_identity(data):
    r, c, _ = data
    c = c + np.arange(c.size) * 1e-6  # tie-free
    if not np.any(r == 0) or not np.any(r == 1):
        return
    acc = 1 - r.mean()
    expected = (1 - M.auroc_f(r, c)) * acc * (1 - acc) + 0.5 * (1 - acc) ** 2
    assert M.augrc(r, c) == pytest.approx(expected, abs=1e-12)


@SETTINGS
@given(samples(weights="none"))
def test_excess_aurc_zero_for_perfect_and_nonnegative_without_ties(data):
    r, c, _ = data
    distinct = np.argsort(np.argsort(c, kind="stable"), kind="stable").astype(float)
    assert M.eaurc(r, distinct) >= -1e-15
    assert M.eaugrc(r, distinct) >= -1e-15
    perfect = -np.argsort(np.argsort(r, kind="stable"), kind="stable").astype(float)
    assert M.eaurc(r, perfect) == 0.0
    assert M.eaugrc(r, perfect) == 0.0


def test_degenerate_cases():
    r1, c1 = np.zeros(5), np.arange(5.0)
    assert M.aurc(r1, c1) == 0.0 and M.eaurc(r1, c1) == 0.0 and M.augrc(r1, c1) == 0.0
    r0 = np.ones(5)
    assert M.aurc(r0, c1) == pytest.approx(1.0) and M.augrc(r0, c1) == pytest.approx(0.5)
    assert M.eaurc(r0, c1) == pytest.approx(0.0, abs=1e-15)
    with pytest.warns(M.UndefinedMetricWarning):
        assert np.isnan(M.naurc(r1, c1))
    assert M.aurc([1.0], [0.2]) == 1.0 and M.augrc([1.0], [0.2]) == 0.5
    assert M.aurc([0.3, 0.6], [1.0, 1.0]) == pytest.approx(0.45)
    assert M.coverage_at_risk([1.0, 1.0], [0.1, 0.2], 0.05) == 0.0


def test_known_values():
    r = np.array([0.0, 1.0, 0.0, 1.0])
    c = np.array([0.9, 0.8, 0.7, 0.1])
    # points: cov 1 risk 1/2, cov 3/4 risk 1/3, cov 1/2 risk 1/2, cov 1/4 risk 0, end (0, 0)
    expected = 0.25 * ((0.5 + 1 / 3) + (1 / 3 + 0.5) + (0.5 + 0) + 0) / 2
    assert M.aurc(r, c) == pytest.approx(expected, abs=1e-15)
    assert M.selective_risk_at_coverage(r, c, 0.6) == pytest.approx(1 / 3)
    assert M.coverage_at_risk(r, c, 0.4) == pytest.approx(0.75)


@SETTINGS
@given(samples(), st.sampled_from([0.05, 0.3, 0.5, 0.95, 1.0]))
def test_min_risk_at_coverage_matches_brute_force(data, x):
    r, c, w = data
    got = M.min_selective_risk_at_coverage(r, c, x, sample_weight=w)
    assert got == pytest.approx(brute.min_risk_at_coverage(r, c, x, w), abs=1e-12)
    assert got <= M.selective_risk_at_coverage(r, c, x, sample_weight=w)
    if x == 1.0:
        assert got == M.selective_risk_at_coverage(r, c, x, sample_weight=w)


@pytest.mark.parametrize("n", [25, 29, 41, 49])
def test_min_risk_at_coverage_exactly_on_a_curve_point(n):
    rng = np.random.default_rng(n)
    r = (rng.random(n) < 0.4).astype(float)
    c = rng.permutation(n).astype(float)
    for k in range(1, n + 1):
        x = k / n
        got = M.min_selective_risk_at_coverage(r, c, x)
        assert got == brute.min_risk_at_coverage(r, c, x), (k, n)


_N = 100
_FD_SHIFTS_CONFIDS = {
    "all_equal": np.full(_N, 0.37),
    "alternating_01": np.arange(_N) % 2.0,
    "alternating_10": (np.arange(_N) + 1) % 2.0,
    "ascending": np.linspace(0.0, 1.0, _N),
    "ascending_unnormalized": np.arange(-(_N // 2), _N // 2, dtype=float),
    "plateaus": np.repeat([0.2, 0.4, 0.6, 0.8], _N // 4),
}
_FD_SHIFTS_CORRECT = {
    "all_one": np.ones(_N),
    "all_zero": np.zeros(_N),
    "alternating_01": np.arange(_N) % 2.0,
    "plateau_permutation": np.concatenate(  # alternating, permuted within each plateau
        [np.random.default_rng(7).permutation(part) for part in np.split(np.arange(_N) % 2.0, 4)]
    ),
    "ascending": np.linspace(0.0, 1.0, _N),
    "plateaus": np.repeat([0.2, 0.4, 0.6, 0.8], _N // 4),
}
# fd_shifts/tests/utils.py (IML-DKFZ/fd-shifts), RC_STATS_TEST_CASES: (coverage, selective risk,
# threshold) of get_working_point(risk="selective-risk", target_cov=0.5 / 0.95); residuals are
# 1 - correct. "all_equal" stands for their random constant (0.37 here).
_FD_SHIFTS_WORKING_POINTS = {
    ("all_equal", "all_one"): ((1.0, 0.0, 0.37), (1.0, 0.0, 0.37)),
    ("all_equal", "all_zero"): ((1.0, 1.0, 0.37), (1.0, 1.0, 0.37)),
    ("all_equal", "alternating_01"): ((1.0, 0.5, 0.37), (1.0, 0.5, 0.37)),
    ("all_equal", "ascending"): ((1.0, 0.5, 0.37), (1.0, 0.5, 0.37)),
    ("all_equal", "plateaus"): ((1.0, 0.5, 0.37), (1.0, 0.5, 0.37)),
    ("alternating_01", "all_one"): ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
    ("alternating_01", "all_zero"): ((1.0, 1.0, 0.0), (1.0, 1.0, 0.0)),
    ("alternating_01", "alternating_01"): ((0.5, 0.0, 1.0), (1.0, 0.5, 0.0)),
    ("alternating_01", "ascending"): ((0.5, 0.4949495, 1.0), (1.0, 0.5, 0.0)),
    ("alternating_01", "plateaus"): ((0.5, 0.496, 1.0), (1.0, 0.5, 0.0)),
    ("alternating_10", "all_one"): ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
    ("alternating_10", "all_zero"): ((1.0, 1.0, 0.0), (1.0, 1.0, 0.0)),
    ("alternating_10", "alternating_01"): ((1.0, 0.5, 0.0), (1.0, 0.5, 0.0)),
    ("alternating_10", "ascending"): ((1.0, 0.5, 0.0), (1.0, 0.5, 0.0)),
    ("alternating_10", "plateaus"): ((1.0, 0.5, 0.0), (1.0, 0.5, 0.0)),
    ("ascending", "all_one"): ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
    ("ascending", "all_zero"): ((1.0, 1.0, 0.0), (1.0, 1.0, 0.0)),
    ("ascending", "alternating_01"): ((0.51, 0.4901961, 0.4949495), (0.95, 0.4947368, 0.0505051)),
    ("ascending", "ascending"): ((0.5, 0.2474747, 0.5050505), (0.95, 0.4747475, 0.0505051)),
    ("ascending", "plateaus"): ((0.5, 0.3, 0.5050505), (0.95, 0.4842105, 0.0505051)),
    ("ascending_unnormalized", "all_one"): ((1.0, 0.0, -50.0), (1.0, 0.0, -50.0)),
    ("ascending_unnormalized", "all_zero"): ((1.0, 1.0, -50.0), (1.0, 1.0, -50.0)),
    ("ascending_unnormalized", "alternating_01"): (
        (0.51, 0.4901961, -1.0),
        (0.95, 0.4947368, -45.0),
    ),
    ("ascending_unnormalized", "ascending"): ((0.5, 0.2474747, 0.0), (0.95, 0.4747475, -45.0)),
    ("ascending_unnormalized", "plateaus"): ((0.5, 0.3, 0.0), (0.95, 0.4842105, -45.0)),
    ("plateaus", "all_one"): ((1.0, 0.0, 0.2), (1.0, 0.0, 0.2)),
    ("plateaus", "all_zero"): ((1.0, 1.0, 0.2), (1.0, 1.0, 0.2)),
    ("plateaus", "alternating_01"): ((0.75, 0.4933333, 0.4), (1.0, 0.5, 0.2)),
    ("plateaus", "plateau_permutation"): ((0.75, 0.4933333, 0.4), (1.0, 0.5, 0.2)),
    ("plateaus", "ascending"): ((0.5, 0.2474747, 0.6), (1.0, 0.5, 0.2)),
    ("plateaus", "plateaus"): ((0.5, 0.3, 0.6), (1.0, 0.5, 0.2)),
}


@pytest.mark.parametrize(("case", "expected"), list(_FD_SHIFTS_WORKING_POINTS.items()))
def test_min_risk_at_coverage_reproduces_fd_shifts_working_points(case, expected):
    c = _FD_SHIFTS_CONFIDS[case[0]]
    r = 1.0 - _FD_SHIFTS_CORRECT[case[1]]
    curve = M.risk_coverage_curve(r, c)
    for x, (cov, risk, threshold) in zip((0.5, 0.95), expected, strict=True):
        got = M.min_selective_risk_at_coverage(r, c, x)
        assert got == pytest.approx(risk, abs=1e-7)  # their assert_almost_equal (7 decimals)
        # the working point itself: the highest-coverage curve point with that risk
        point = np.flatnonzero((curve.coverages >= x) & (curve.selective_risks == got))[0]
        assert curve.coverages[point] == pytest.approx(cov, abs=1e-7)
        assert curve.thresholds[point] == pytest.approx(threshold, abs=1e-7)


def test_fd_shifts_working_point_ascending_alternating_exact():
    """Issue #19's acceptance case: confidences ascending, failures alternating (1, 0, 1, ...):
    at x = 0.5 the working point is coverage 0.51, risk 25/51 = 0.4902 (the largest threshold
    reaching 0.5 has coverage 0.50 and risk 1/2); at x = 0.95, coverage 0.95, risk 47/95."""
    c = np.linspace(0.0, 1.0, 100)
    r = 1.0 - np.arange(100) % 2
    assert M.min_selective_risk_at_coverage(r, c, 0.5) == 25 / 51
    assert M.selective_risk_at_coverage(r, c, 0.5) == 0.5
    assert M.min_selective_risk_at_coverage(r, c, 0.95) == 47 / 95
    assert M.min_selective_risk_at_coverage(r, c, 1.0) == 0.5


def test_digamma_closed_form_handles_large_counts():
    rng = np.random.default_rng(3)
    r = rng.random(40)
    w = rng.integers(1, 60, size=40).astype(float)
    expected = brute.optimal(list(np.repeat(r, w.astype(int))))
    order = np.argsort(r)
    got = optimal_from_counts(r[order], w[order][None, :])
    np.testing.assert_allclose(np.ravel(got), expected, atol=1e-12)
    # counts summing to the number of samples are copies through the public function too
    draws = rng.integers(0, 40, size=40)
    counts = np.bincount(draws, minlength=40).astype(float)
    drawn = np.repeat(r, counts.astype(int))
    np.testing.assert_allclose(
        np.ravel(optimal_from_counts(r[order], counts[order][None, :], 40)),
        brute.optimal(list(drawn)),
        atol=1e-12,
    )


@SETTINGS
@given(samples(), st.integers(2, 4))
def test_class_balanced_variants(data, k):
    r, c, w = data
    labels = np.arange(r.size) % k
    factor = np.ones(r.size)
    weights = np.ones(r.size) if w is None else w
    for cls in range(k):
        mask = labels == cls
        if mask.any():
            factor[mask] = weights.sum() / (len(np.unique(labels)) * weights[mask].sum())
    rb = r * factor
    np.testing.assert_allclose(M.balanced_residuals(r, labels, sample_weight=w), rb)
    assert M.aurc_balanced_residuals(r, c, labels, sample_weight=w) == pytest.approx(
        brute.aurc(rb, c, w), abs=1e-12
    )
    assert M.augrc_ba(r, c, labels, sample_weight=w) == pytest.approx(
        brute.augrc(rb, c, w), abs=1e-12
    )


@SETTINGS
@given(samples(), st.lists(st.sampled_from([-3, 0, 1, 2, 70000]), min_size=25, max_size=25))
def test_aurc_ba_matches_brute_force(data, label_pool):
    r, c, w = data
    labels = np.array(label_pool[: r.size])
    expected = brute.aurc_ba(list(r), list(c), list(labels), w)
    assert M.aurc_ba(r, c, labels, sample_weight=w) == pytest.approx(expected, abs=1e-14)


def test_aurc_ba_hand_computed_example():
    """Issue #19 and FD-Shifts' "toy-case" (fd_shifts/tests/utils.py): accepted at thresholds
    0, 1, 2, 3: class risks (1/2, 1/2), (1, 1/2), (0 [none accepted], 1/2), (0, 1) give
    balanced risks 1/2, 3/4, 1/4, 1/2 at coverages 1, 3/4, 1/2, 1/4, then (0, 1/2):
    AURC-BA = 1/4 (5/8 + 1/2 + 3/8 + 1/2) = 1/2."""
    c, r, labels = [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 0.0, 1.0], [0, 0, 1, 1]
    assert M.aurc_ba(r, c, labels) == 0.5
    assert M.augrc_ba(r, c, labels) == 0.3125
    # the re-weighted-residual AURC: residuals stay 0/1 (balanced classes); risks
    # 1/2, 2/3, 1/2, 1 then 1: 1/4 (7/12 + 7/12 + 3/4 + 1) = 35/48
    assert M.aurc_balanced_residuals(r, c, labels) == pytest.approx(35 / 48, abs=1e-15)


def test_aurc_ba_special_cases():
    rng = np.random.default_rng(11)
    r = (rng.random(200) < 0.3).astype(float)
    c = np.round(rng.random(200), 2)
    # one class: the plain AURC
    assert M.aurc_ba(r, c, np.zeros(200, int)) == pytest.approx(M.aurc(r, c), abs=1e-14)
    # constant confidence: one point, the balanced error rate 1 - balanced accuracy
    labels = rng.integers(0, 5, 200)
    per_class = [r[labels == k].mean() for k in range(5)]
    assert M.aurc_ba(r, np.ones(200), labels) == pytest.approx(np.mean(per_class), abs=1e-15)
    # integer weights are copies; zero weights drop the sample (and a class only it had)
    w = rng.integers(0, 4, 200).astype(float)
    reps = w.astype(int)
    expected = M.aurc_ba(np.repeat(r, reps), np.repeat(c, reps), np.repeat(labels, reps))
    assert M.aurc_ba(r, c, labels, sample_weight=w) == pytest.approx(expected, abs=1e-14)
    only = np.r_[labels[:-1], 9]
    w[-1] = 0.0
    assert M.aurc_ba(r, c, only, sample_weight=w) == M.aurc_ba(r, c, labels, sample_weight=w)


def _aurc_ba_numpy_reference(r, c, labels, w):
    """O(T N) reference: a boolean accepted mask per distinct threshold."""
    classes = np.unique(labels)
    onehot = labels[None, :] == classes[:, None]
    points = []
    for tau in np.unique(c):
        accepted = (c >= tau) * w
        weight = onehot @ accepted
        loss = onehot @ (accepted * r)
        risk = np.divide(loss, weight, out=np.zeros_like(loss), where=weight > 0).mean()
        points.append((accepted.sum() / w.sum(), risk))
    points.append((0.0, points[-1][1]))
    cov, risk = np.array(points).T
    return float(np.sum((cov[:-1] - cov[1:]) * (risk[:-1] + risk[1:])) / 2)


@pytest.mark.parametrize("weighted", [False, True])
def test_aurc_ba_many_classes_against_reference(weighted):
    rng = np.random.default_rng(5)
    n = 3000
    labels = rng.choice(np.r_[-7, np.arange(300) * 1000], n)  # sparse and negative labels
    r = (rng.random(n) < 0.25).astype(float) if not weighted else rng.random(n)
    c = np.round(rng.random(n), 2)
    w = rng.random(n) * 2 + 0.01 if weighted else np.ones(n)
    expected = _aurc_ba_numpy_reference(r, c, labels, w)
    got = M.aurc_ba(r, c, labels, sample_weight=w if weighted else None)
    assert got == pytest.approx(expected, abs=1e-13)


def test_aurc_ba_light_class_after_heavy_ones():
    """Per-class sums must not round relative to the running sum over all classes: class 1
    (weights ~1e-3, all failures, ranked first) comes after 10^9 of class-0 weight (no
    failures) in class-major order. Its risk is 1 at every point, the balanced risk 1/2."""
    rng = np.random.default_rng(4)
    r = np.r_[np.zeros(1000), np.ones(50)]
    c = np.r_[rng.random(1000), 2.0 + rng.random(50)]
    w = np.r_[np.full(1000, 1e6) * (1 + rng.random(1000)), 1e-3 * (1 + rng.random(50))]
    labels = np.r_[np.zeros(1000, int), np.ones(50, int)]
    assert M.aurc_ba(r, c, labels, sample_weight=w) == pytest.approx(0.5, abs=1e-15)
    soft = np.r_[np.zeros(1000), np.full(50, 0.3)]
    assert M.aurc_ba(soft, c, labels, sample_weight=w) == pytest.approx(0.15, abs=1e-15)


def test_aurc_ba_memory_is_linear_in_n():
    """N = 10^5 samples of K = 5000 classes: a per-class curve (N x K) would need 4 GB."""
    import tracemalloc

    rng = np.random.default_rng(2)
    n = 100_000
    r = (rng.random(n) < 0.2).astype(float)
    c = rng.random(n)
    labels = rng.integers(0, 5000, n)
    tracemalloc.start()
    M.aurc_ba(r, c, labels)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 200 * n


def test_balanced_residuals_full_coverage_is_balanced_error():
    labels = np.array([0, 0, 0, 0, 1, 1])
    r = np.array([1.0, 0, 0, 0, 1, 0])
    rb = M.balanced_residuals(r, labels)
    assert rb.mean() == pytest.approx(0.5 * (1 / 4 + 1 / 2))


def test_zero_weight_samples_do_not_exist():
    r = np.array([0.0, 1.0, 1.0, 0.0])
    c = np.array([0.4, 0.9, 0.2, 0.1])
    w = np.array([1.0, 0.0, 2.0, 1.0])
    keep = w > 0
    for fn in (M.aurc, M.augrc, M.eaurc, M.eaugrc):
        assert fn(r, c, sample_weight=w) == pytest.approx(
            fn(r[keep], c[keep], sample_weight=w[keep]), abs=1e-15
        )


def test_ties_can_pass_below_the_strict_optimum():
    # one success above two tied failures: the tie is one linear step of the curve, below the
    # strict optimum's intermediate point (coverage 2/3, risk 1/2): 2/9 - 5/18
    assert M.eaurc([0.0, 1.0, 1.0], [1.0, 0.0, 0.0]) == pytest.approx(-1 / 18, abs=1e-15)
    assert M.eaurc([0.0, 1.0, 1.0], [1.0, 0.0, -1.0]) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize(
    ("n_ok", "n_fail"), [(0, 1), (1, 0), (5, 3), (1000, 1), (100_000, 7), (0, 50), (30, 2000)]
)
def test_optimum_of_binary_residuals_exact(n_ok, n_fail):
    """Against exact rational arithmetic, down to a few failures among many successes."""
    from fractions import Fraction

    r = np.r_[np.zeros(n_ok), np.ones(n_fail)]
    n = r.size
    risks = [Fraction(max(0, j - n_ok), j) for j in range(1, n + 1)]
    aurc = (sum(risks) + risks[0] / 2 - risks[-1] / 2) / n
    augrc = Fraction(n_fail**2, 2 * n**2)
    got = M.optimal_aurc_augrc(r)
    assert got[0] == pytest.approx(float(aurc), rel=1e-14, abs=1e-300)
    assert got[1] == pytest.approx(float(augrc), rel=1e-15, abs=1e-300)


def test_weighted_binary_optimum_is_the_same_on_any_number_of_blas_threads():
    """The failures' weight of the weighted 0/1 optimum is einsum's sum of products, not
    BLAS's dot, which OpenBLAS splits across its threads at this size (a different sum on
    one thread and on two)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from fdbench.metrics.selective import _optimum

    rng = np.random.default_rng(11)
    n = 1_000_000
    r = (rng.random(n) < 0.2).astype(np.float64)
    w = rng.random(n) * 2.0
    got = _optimum(r, w, binary=True)
    with threadpoolctl.threadpool_limits(1):
        assert _optimum(r, w, binary=True) == got
    fail = float(np.einsum("i,i->", w, r))
    aurc, augrc = optimal_from_counts(np.array([0.0, 1.0]), np.array([[w.sum() - fail, fail]]), n)
    assert got == (float(aurc[0]), float(augrc[0]))
