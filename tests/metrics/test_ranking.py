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
