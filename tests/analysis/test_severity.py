"""Severity curves: level studies, seed means and bootstrap percentile bands."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fdbench.analysis.severity import severity_curves, severity_level


def test_severity_level():
    assert severity_level("corruption/3") == ("corruption", 3.0)
    assert severity_level("cood/12.5") == ("cood", 12.5)
    assert severity_level("cood/0") == ("cood", 0.0)
    for other in ("corruption/gaussian_noise/3", "cor", "iid", "new_class/semantic", "cood/x"):
        assert severity_level(other) is None
    with pytest.raises(TypeError, match="study"):
        severity_level(3)


def _tables():
    rng = np.random.default_rng(5)
    results, boot = [], []
    studies = ["iid", "corruption/1", "corruption/2", "corruption/gaussian_noise/1", "cood/50"]
    for method, csf in (("ce", "MSR"), ("dg", "DG-Res")):
        for seed in (0, 1, 2):
            for s_i, study in enumerate(studies):
                base = 0.01 * (s_i + 1) + (0.005 if method == "dg" else 0.0) + 0.001 * seed
                info = {"dataset": "d", "method": method, "seed": seed, "csf": csf}
                info["study"] = study
                results.append({**info, "metric": "augrc", "value": base})
                results.append({**info, "metric": "aurc", "value": 2 * base})
                if study == "corruption/gaussian_noise/1":
                    continue
                for resample in range(50):
                    value = base + rng.normal(0, 0.002)
                    boot.append({**info, "metric": "augrc", "resample": resample, "value": value})
    return pd.DataFrame(results), pd.DataFrame(boot)


def test_severity_curves_values_and_bands():
    results, boot = _tables()
    curves = severity_curves(results, boot, "augrc")
    assert set(curves["study"]) == {"corruption/1", "corruption/2", "cood/50"}
    assert list(curves["scoring_method"].unique()) == ["MSR", "DG-Res"]
    first = curves[(curves.family == "corruption") & (curves.scoring_method == "MSR")]
    assert list(first["level"]) == [1.0, 2.0]
    row = curves[(curves.study == "corruption/2") & (curves.scoring_method == "DG-Res")].iloc[0]
    sel = results[
        (results.study == "corruption/2") & (results.method == "dg") & (results.metric == "augrc")
    ]
    assert row["value"] == sel["value"].mean()
    assert row["n_seeds"] == 3 and row["n_resamples"] == 50
    part = boot[(boot.study == "corruption/2") & (boot.method == "dg")]
    per_resample = part.groupby("resample")["value"].mean().to_numpy()
    assert row["lower"] == pytest.approx(np.percentile(per_resample, 2.5), rel=1e-12)
    assert row["upper"] == pytest.approx(np.percentile(per_resample, 97.5), rel=1e-12)
    assert row["lower"] < row["value"] < row["upper"]
    narrow = severity_curves(results, boot, "augrc", confidence_level=0.5)
    wide = curves.set_index(["study", "scoring_method"])
    narrow = narrow.set_index(["study", "scoring_method"])
    assert (narrow["upper"] - narrow["lower"] < wide["upper"] - wide["lower"]).all()


def test_without_bootstrap_rows_the_band_is_nan():
    results, boot = _tables()
    curves = severity_curves(results, boot, "aurc")
    assert curves["lower"].isna().all() and curves["upper"].isna().all()
    assert (curves["n_resamples"] == 0).all()
    alone = severity_curves(results, None, "augrc")
    assert alone["lower"].isna().all()
    with_boot = severity_curves(results, boot, "augrc")
    np.testing.assert_array_equal(alone["value"], with_boot["value"])


def test_bad_inputs():
    results, _ = _tables()
    with pytest.raises(ValueError, match="confidence_level"):
        severity_curves(results, None, "augrc", confidence_level=1.0)
    with pytest.raises(ValueError, match="no rows for metric"):
        severity_curves(results, None, "auroc_f")
    with pytest.raises(ValueError, match="lacks column"):
        severity_curves(results.drop(columns="study"), None, "augrc")
