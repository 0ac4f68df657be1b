"""Tests of the softmax precision diagnostics (rounding of MSR to 1.0)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.metrics import roc_auc_score

from fdbench import metrics
from fdbench.csf import msr
from fdbench.csf.precision import precision_diagnostics, softmax_in_precision


def _logits(rng, n=400, k=10):
    labels = rng.integers(0, k, n)
    z = rng.normal(size=(n, k))
    margin = rng.uniform(0, 45, n)
    pred = np.where(rng.random(n) < 0.8, labels, (labels + 1) % k)
    z[np.arange(n), pred] += margin
    return z, labels


def test_rounding_rates_and_metrics():
    rng = np.random.default_rng(0)
    z, y = _logits(rng)
    table = precision_diagnostics(z, y).set_index(["precision", "stage"])
    assert list(table.columns) == [
        "overflow_rate",
        "msr_one_rate",
        "n_distinct",
        "accuracy",
        "aurc",
        "auroc_f",
    ]
    p64 = softmax(z, axis=1)
    residuals = (np.argmax(z, 1) != y).astype(float)
    for precision in ("float16", "float32", "float64"):
        stored = p64.astype(precision).max(axis=1).astype(np.float64)
        row = table.loc[(precision, "stored")]
        assert row["msr_one_rate"] == np.mean(stored == 1.0)
        assert row["aurc"] == pytest.approx(metrics.aurc(residuals, stored), rel=1e-12)
        assert row["auroc_f"] == pytest.approx(roc_auc_score(1 - residuals, stored), rel=1e-12)
    rates = table.xs("stored", level="stage")["msr_one_rate"]
    assert rates["float16"] > rates["float32"] > rates["float64"]
    assert table.loc[("float64", "computed"), "aurc"] == pytest.approx(
        metrics.aurc(residuals, msr(z)), rel=1e-12
    )
    # rounding to 1.0 creates ties that change the ranking metrics
    assert (
        table.loc[("float16", "stored"), "auroc_f"] != table.loc[("float64", "stored"), "auroc_f"]
    )
    assert table.loc[("float16", "stored"), "n_distinct"] < 400


def test_softmax_in_precision_dtype_and_validation():
    z = np.array([[0.0, 12.0, 1.0]])
    p16 = softmax_in_precision(z, "float16")
    assert p16.dtype == np.float16 and p16.max() == 1.0
    assert softmax_in_precision(z, "float64").max() < 1.0
    with pytest.raises(ValueError, match="precision must be one of"):
        softmax_in_precision(z, "bfloat16")
    with pytest.raises(ValueError, match="labels must lie"):
        precision_diagnostics(z, np.array([5]))


def test_logits_beyond_float16_range_give_nan_row_not_an_error():
    # float16 holds |z| <= 65504: a larger logit becomes inf and its softmax NaN, so the
    # float16 'computed' stage has no metrics; every other stage is still measured.
    rng = np.random.default_rng(1)
    z, y = _logits(rng, n=50)
    z[3, 0] = 7e4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = precision_diagnostics(z, y).set_index(["precision", "stage"])
    assert table.loc[("float16", "computed"), "overflow_rate"] == pytest.approx(1 / 50)
    assert table.loc[("float16", "computed"), ["msr_one_rate", "aurc", "auroc_f"]].isna().all()
    others = table.drop(index=[("float16", "computed")])
    assert (others["overflow_rate"] == 0).all()
    assert others[["msr_one_rate", "accuracy", "aurc", "auroc_f"]].notna().all().all()
    with pytest.raises(ValueError, match="logits exceed the float16 range"):
        softmax_in_precision(z, "float16")
