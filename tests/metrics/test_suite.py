"""evaluate_all: same values as the single functions, key sets, degenerate data, permutations."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M

from .strategies import samples


def _single(r, c, w, binary, in_unit):
    kw = {"sample_weight": w}
    out = {
        "aurc": M.aurc(r, c, **kw),
        "augrc": M.augrc(r, c, **kw),
        "eaurc": M.eaurc(r, c, **kw),
        "eaugrc": M.eaugrc(r, c, **kw),
        "naurc": M.naurc(r, c, **kw),
        "risk@95cov": M.min_selective_risk_at_coverage(r, c, 0.95, **kw),
        "selective_risk@95cov": M.selective_risk_at_coverage(r, c, 0.95, **kw),
        "coverage@risk5": M.coverage_at_risk(r, c, 0.05, **kw),
    }
    if binary:
        out.update(
            {
                "auroc_f": M.auroc_f(r, c, **kw),
                "ap_f_success": M.ap_f_success(r, c, **kw),
                "ap_f_error": M.ap_f_error(r, c, **kw),
                "fpr@95tpr": M.fpr_at_tpr(r, c, 0.95, **kw),
                "fpr@80tpr": M.fpr_at_tpr(r, c, 0.80, **kw),
                "accuracy": 1 - np.average(r, weights=w),
            }
        )
        if in_unit:
            out["ece"] = M.ece(r, c, **kw)
            out["mce"] = M.mce(r, c, **kw)
    else:
        out["mean_residual"] = np.average(r, weights=w)
    return out


@settings(max_examples=60, deadline=None)
@given(samples())
def test_evaluate_all_equals_single_functions(data):
    r, c, w = data
    c = (c - c.min()) / (np.ptp(c) + 1.0) if c.size % 2 else c
    binary = bool(np.all((r == 0) | (r == 1)))
    in_unit = bool(c.min() >= 0 and c.max() <= 1)
    result = M.evaluate_all(r, c, sample_weight=w)
    assert tuple(result) == M.metric_keys(binary=binary)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", M.UndefinedMetricWarning)
        expected = _single(r, c, w, binary, in_unit)
    for key, value in result.items():
        if key in expected:
            np.testing.assert_allclose(value, expected[key], atol=1e-12, err_msg=key)
        else:
            assert np.isnan(value), key


@settings(max_examples=40, deadline=None)
@given(samples())
def test_permutation_invariance(data):
    r, c, w = data
    perm = np.random.default_rng(r.size).permutation(r.size)
    labels = np.arange(r.size) % 3
    a = M.evaluate_all(r, c, sample_weight=w, labels=labels)
    b = M.evaluate_all(
        r[perm], c[perm], sample_weight=None if w is None else w[perm], labels=labels[perm]
    )
    assert a.keys() == b.keys()
    np.testing.assert_allclose(list(a.values()), list(b.values()), atol=1e-12)


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_all_correct_or_all_wrong_does_not_crash(value):
    r = np.full(10, value)
    c = np.linspace(0, 1, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = M.evaluate_all(r, c)
    assert np.isnan(result["auroc_f"]) and np.isnan(result["naurc"])
    assert result["aurc"] == pytest.approx(value)
    assert result["accuracy"] == pytest.approx(1 - value)


def test_labels_and_logits_add_their_keys():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(50, 4))
    labels = rng.integers(0, 4, size=50)
    r = (logits.argmax(axis=1) != labels).astype(float)
    c = M.log_softmax(logits).max(axis=1)
    result = M.evaluate_all(r, np.exp(c), labels=labels, logits=logits)
    assert tuple(result) == M.metric_keys(labels=True, logits=True)
    assert result["aurc_ba"] == M.aurc_ba(r, np.exp(c), labels)
    assert result["augrc_ba"] == pytest.approx(M.augrc_ba(r, np.exp(c), labels), abs=1e-15)
    assert result["nll"] == pytest.approx(M.nll(labels, logits))
    assert result["balanced_accuracy"] == pytest.approx(M.balanced_accuracy(labels, logits))
    assert result["accuracy"] == pytest.approx(M.accuracy(labels, logits))
    with pytest.raises(ValueError, match="logits"):
        M.evaluate_all(r, c, logits=logits)


def test_ece_nan_outside_unit_interval():
    result = M.evaluate_all([0.0, 1.0, 0.0], [0.2, -0.5, 3.0])
    assert np.isnan(result["ece"]) and np.isnan(result["mce"])
    assert not np.isnan(result["auroc_f"])


def _fresh(r, c):
    """evaluate_all in a new thread: its own, empty scratch pool."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(M.evaluate_all, r, c).result()


def test_scratch_reuse_across_sizes_and_threads():
    rng = np.random.default_rng(7)
    cases = []
    for n in (5000, 40, 5000, 1, 700, 12):
        r = (rng.random(n) < 0.2).astype(float)
        c = rng.random(n) if n % 2 else np.round(rng.random(n), 1)
        cases.append((r, c, _fresh(r, c)))
    for r, c, expected in cases:
        np.testing.assert_equal(M.evaluate_all(r, c), expected)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda case: M.evaluate_all(case[0], case[1]), cases * 8))
    for (_, _, expected), got in zip(cases * 8, results, strict=True):
        np.testing.assert_equal(got, expected)


def test_scratch_views_do_not_leak_into_results():
    rng = np.random.default_rng(8)
    r, c = (rng.random(300) < 0.3).astype(float), rng.random(300)
    first = M.evaluate_all(r, c)
    M.evaluate_all(1 - r, 1 - c)
    assert M.evaluate_all(r, c) == first
    assert all(isinstance(v, float) for v in first.values())


@pytest.mark.parametrize("weighted", [False, True])
def test_ece_from_the_ranking_on_bin_edges(weighted):
    """evaluate_all bins the sorted thresholds; confidences on the edges j/15 (and 0, 1) must
    land in the same bins as in ``ece``: (j-1)/M < c <= j/M, 0 in the first bin."""
    rng = np.random.default_rng(3)
    edges = np.arange(16) / 15
    c = np.concatenate([edges, np.nextafter(edges[1:], 0), rng.choice(edges, 200)])
    r = (rng.random(c.size) < 0.3).astype(float)
    w = rng.integers(0, 4, c.size) + rng.random(c.size) if weighted else None
    got = M.evaluate_all(r, c, sample_weight=w)
    assert got["ece"] == pytest.approx(M.ece(r, c, sample_weight=w), abs=1e-14)
    assert got["mce"] == pytest.approx(M.mce(r, c, sample_weight=w), abs=1e-14)
    only_top = M.evaluate_all(r[:16], np.where(edges > 0, 1.0, 0.0))
    assert only_top["ece"] == pytest.approx(M.ece(r[:16], np.where(edges > 0, 1.0, 0.0)))


@settings(max_examples=40, deadline=None)
@given(samples(), st.integers(1, 4))
def test_evaluate_all_class_balanced_keys_equal_single_functions(data, k):
    r, c, w = data
    labels = (np.arange(r.size) * 7) % (k + 1) - 1  # a label -1 too
    result = M.evaluate_all(r, c, labels=labels, sample_weight=w)
    assert result["aurc_ba"] == M.aurc_ba(r, c, labels, sample_weight=w)
    expected = M.augrc_ba(r, c, labels, sample_weight=w)
    assert result["augrc_ba"] == pytest.approx(expected, abs=1e-15)


def test_evaluate_all_fd_shifts_class_aware_toy_case():
    """FD-Shifts' own class-aware test case (fd_shifts/tests/utils.py,
    RC_STATS_CLASS_AWARE_TEST_CASES "toy-case"): AURC-BA 0.5, AUGRC-BA 0.3125."""
    correct = np.array([1, 0, 1, 0])
    result = M.evaluate_all(1.0 - correct, [0.0, 1.0, 2.0, 3.0], labels=[0, 0, 1, 1])
    assert result["aurc_ba"] == 0.5
    assert result["augrc_ba"] == 0.3125


def test_evaluate_all_working_point_keys():
    # FD-Shifts' ascending/alternating case: risk@95cov is the lowest selective risk with
    # coverage >= 0.95 (at coverage 0.95: 47/95); selective_risk@95cov the risk at the largest
    # threshold reaching 0.95 (the same point here) and at 0.5 they differ (see test_selective)
    c = np.linspace(0.0, 1.0, 100)
    r = 1.0 - np.arange(100) % 2
    result = M.evaluate_all(r, c)
    assert result["risk@95cov"] == 47 / 95
    assert result["selective_risk@95cov"] == 47 / 95
    # ten failures ranked first, successes last: rejecting raises the risk, so the working
    # point is full coverage (10/100) while the largest threshold reaching 0.95 has 10/95
    r2 = np.r_[np.ones(10), np.zeros(90)]
    c2 = -np.arange(100.0)
    result = M.evaluate_all(r2, c2)
    assert result["risk@95cov"] == 0.1
    assert result["selective_risk@95cov"] == 10 / 95
