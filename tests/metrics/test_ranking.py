"""AUROC_f, AP_f and FPR@TPR against scikit-learn and brute force; OOD variants."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from fdbench import metrics as M

from . import metrics_brute as brute
from .strategies import both_classes, samples

SETTINGS = settings(max_examples=60, deadline=None)


@SETTINGS
@given(samples(kind="binary"))
def test_against_sklearn(data):
    r, c, w = data
    assume(both_classes(r))
    ok = 1 - r
    assert M.auroc_f(r, c, sample_weight=w) == pytest.approx(
        roc_auc_score(ok, c, sample_weight=w), abs=1e-12
    )
    assert M.auroc_f(r, c, sample_weight=w) == pytest.approx(brute.auroc(r, c, w), abs=1e-12)
    assert M.ap_f_success(r, c, sample_weight=w) == pytest.approx(
        average_precision_score(ok, c, sample_weight=w), abs=1e-12
    )
    assert M.ap_f_error(r, c, sample_weight=w) == pytest.approx(
        average_precision_score(r, -c, sample_weight=w), abs=1e-12
    )
    fpr, tpr, _ = roc_curve(ok, c, sample_weight=w, drop_intermediate=False)
    for x in (0.95, 0.8, 0.5, 1.0):
        expected = fpr[tpr >= x].min()
        assert M.fpr_at_tpr(r, c, x, sample_weight=w) == pytest.approx(expected, abs=1e-12)


@SETTINGS
@given(samples(kind="binary", weights="none"))
def test_ood_variants_are_the_failure_metrics_with_ood_labels(data):
    is_ood, c, _ = data
    assume(both_classes(is_ood))
    assert M.auroc_out(is_ood, c) == pytest.approx(roc_auc_score(1 - is_ood, c), abs=1e-12)
    fpr, tpr, _ = roc_curve(1 - is_ood, c, drop_intermediate=False)
    assert M.fpr_at_tpr_out(is_ood, c) == pytest.approx(fpr[tpr >= 0.95].min(), abs=1e-12)


@pytest.mark.parametrize("fn", [M.auroc_f, M.ap_f_success, M.ap_f_error, M.fpr_at_tpr])
@pytest.mark.parametrize("r", [np.zeros(4), np.ones(4)])
def test_one_class_gives_nan_with_warning(fn, r):
    if (fn is M.ap_f_success and r[0] == 0) or (fn is M.ap_f_error and r[0] == 1):
        assert np.isfinite(fn(r, np.arange(4.0)))
        return
    with pytest.warns(M.UndefinedMetricWarning):
        assert np.isnan(fn(r, np.arange(4.0)))


def test_ties_count_half():
    assert M.auroc_f([0.0, 1.0], [0.5, 0.5]) == 0.5
    assert M.auroc_f([0.0, 1.0, 0.0], [0.5, 0.5, 0.9]) == pytest.approx(0.75)


def test_binary_metrics_reject_soft_residuals():
    with pytest.raises(ValueError, match="residuals"):
        M.auroc_f([0.5, 1.0], [0.1, 0.2])
    with pytest.raises(ValueError, match="is_ood"):
        M.auroc_out([0.5, 1.0], [0.1, 0.2])


@given(st.floats(-1, 2).filter(lambda x: not 0 < x <= 1))
@settings(max_examples=10, deadline=None)
def test_tpr_out_of_range(x):
    with pytest.raises(ValueError, match="tpr"):
        M.fpr_at_tpr([0.0, 1.0], [0.1, 0.2], x)


@pytest.mark.parametrize("n", [10, 25, 49])
def test_fpr_at_tpr_exactly_on_a_curve_point(n):
    # TPR k/P compared as defined (accepted successes / successes >= x) for x = k/P.
    rng = np.random.default_rng(n)
    r = (rng.random(n) < 0.4).astype(float)
    r[:2] = [0.0, 1.0]
    c = rng.permutation(n).astype(float)
    fpr, tpr, _ = roc_curve(1 - r, c, drop_intermediate=False)
    positives = int((r == 0).sum())
    for k in range(1, positives + 1):
        x = k / positives
        assert M.fpr_at_tpr(r, c, x) == fpr[tpr >= x].min(), (k, positives)


def test_fpr_at_full_tpr_with_rounding_weights():
    # With float weights, (W - L) at the threshold that accepts every success rounds below
    # the total success weight W_tot - F; the TPR must be the success weight accepted (a sum of
    # success weights, as in roc_curve), which reaches exactly 1 there.
    r = np.array([0.0, 0.0, 1.0])
    c = np.array([-0.8102990613264937, 0.08546798405284294, -1.4681570658869638])
    w = np.array([2.6473227810049536, 0.32667626615049405, 2.4571931751867173])
    assert M.fpr_at_tpr(r, c, 1.0, sample_weight=w) == 0.0
    assert M.evaluate_all(r, c, sample_weight=w)["fpr@95tpr"] == 0.0
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 30))
        r = (rng.random(n) < 0.5).astype(float)
        r[:2] = [0.0, 1.0]
        c = np.round(rng.normal(size=n), int(rng.integers(0, 3)))
        w = rng.random(n) * 3 + 0.01
        fpr, tpr, _ = roc_curve(1 - r, c, sample_weight=w, drop_intermediate=False)
        for x in (1.0, 0.95, 0.8):
            assert M.fpr_at_tpr(r, c, x, sample_weight=w) == pytest.approx(
                fpr[tpr >= x].min(), abs=1e-12
            ), (x, r, c, w)
        boot = M.bootstrap(r, c, metrics=["fpr@95tpr"], n_resamples=3, sample_weight=w)
        for b, counts in enumerate(M.bootstrap_counts(n, 3)):
            if 0 < counts @ r < counts.sum():
                ww = counts * w
                fpr, tpr, _ = roc_curve(1 - r, c, sample_weight=ww, drop_intermediate=False)
                expected = fpr[tpr >= 0.95].min()
                assert boot["fpr@95tpr"].iloc[b] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("tpr", [5e-324, 1e-320, 1e-300, 0.3, 1.0])
def test_fpr_at_tpr_for_any_fraction_matches_roc_curve(tpr):
    """The threshold search is exact also where tpr · P is subnormal (no walk over ulps)."""
    rng = np.random.default_rng(5)
    r = (rng.random(20_000) < 0.2).astype(float)
    c = np.round(rng.random(r.size) - 0.3 * r, 3)
    fpr, tpr_curve, _ = roc_curve(1 - r, c)
    assert M.fpr_at_tpr(r, c, tpr) == fpr[np.argmax(tpr_curve >= tpr)]
