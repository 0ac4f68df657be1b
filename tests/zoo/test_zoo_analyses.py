"""Analyses across a zoo: Spearman with member bootstrap, TS split by T, p-norm gain, ranks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from fdbench.zoo import analyses as A


def _members(n: int = 12, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    accuracy = rng.uniform(0.6, 0.95, n)
    return pd.DataFrame(
        {
            "accuracy": accuracy,
            "auroc_f": 0.5 + 0.4 * accuracy + rng.normal(0, 0.02, n),
            "auroc_f_ts": 0.5 + 0.4 * accuracy + rng.normal(0, 0.02, n),
            "aurc": 1 - accuracy + rng.normal(0, 0.01, n),
            "aurc_ts": 1 - accuracy,
            "eaurc": rng.uniform(0, 0.05, n),
            "eaurc_ts": rng.uniform(0, 0.05, n),
            "ece": rng.uniform(0, 0.2, n),
            "ece_ts": rng.uniform(0, 0.05, n),
            "temperature": np.r_[np.full(5, 0.7), np.full(7, 1.6)][:n],
            "family": ["a", "b", "c"] * (n // 3),
        },
        index=pd.Index([f"m{i}" for i in range(n)], name="member"),
    )


def test_spearman_matches_scipy_and_interval_covers_it():
    members = _members()
    table = A.spearman_table(members, ("accuracy", "auroc_f", "ece"), n_bootstrap=300)
    assert len(table) == 3
    for row in table.itertuples():
        expected = spearmanr(members[row.x], members[row.y]).statistic
        assert row.spearman == pytest.approx(expected, abs=1e-12)
        assert row.ci_lower <= row.spearman <= row.ci_upper
    again = A.spearman_table(members, ("accuracy", "auroc_f", "ece"), n_bootstrap=300)
    pd.testing.assert_frame_equal(table, again)  # seeded


def test_ts_effect_splits_by_temperature():
    members = _members()
    table = A.ts_effect(members)
    assert list(table.index) == ["T < 1", "T > 1"]
    assert table.loc["T < 1", "members"] == 5
    low = members[members["temperature"] < 1]
    assert table.loc["T < 1", "mean Δauroc_f"] == pytest.approx(
        (low["auroc_f_ts"] - low["auroc_f"]).mean()
    )
    improved = (low["auroc_f_ts"] > low["auroc_f"]).mean()
    assert table.loc["T < 1", "share AUROC_f improved"] == pytest.approx(improved)


def test_group_comparison_and_missing_metadata():
    members = _members()
    table = A.group_comparison(members, "family")
    assert table["members"].tolist() == [4, 4, 4]
    assert table.loc["a", "accuracy"] == members[members["family"] == "a"]["accuracy"].median()
    assert A.group_comparison(members, "regime").empty


def _results() -> pd.DataFrame:
    rows = []
    for member, (msr, pnorm) in {"a": (0.10, 0.08), "b": (0.05, 0.06)}.items():
        for csf, value in (("MSR", msr), ("MaxLogit-pNorm", pnorm)):
            rows.append((member, csf, "none", "iid", "aurc", value))
        rows.append((member, "", "none", "val", "pnorm_p", 2.0 if member == "a" else np.nan))
        for level, auroc in enumerate((0.9, 0.8, 0.7) if member == "a" else (0.85, 0.82, 0.6)):
            rows.append((member, "MSR", "none", f"cood/{level * 50}", "auroc_cood", auroc))
    columns = ["member", "csf", "calibration", "study", "metric", "value"]
    return pd.DataFrame(rows, columns=columns)


def test_pnorm_gain_per_member():
    gain = A.pnorm_gain(_results())
    assert gain.loc["a", "gain_MaxLogit-pNorm"] == pytest.approx(0.02)
    assert gain.loc["b", "gain_MaxLogit-pNorm"] == pytest.approx(-0.01)
    assert gain.loc["a", "relative_gain_MaxLogit-pNorm"] == pytest.approx(0.2)
    assert gain.loc["a", "pnorm_p"] == 2.0 and np.isnan(gain.loc["b", "pnorm_p"])


def test_cood_curves_and_ranks():
    curves = A.cood_curves(_results(), "MSR")
    assert list(curves.columns) == [0.0, 50.0, 100.0]
    ranks = A.cood_ranks(curves)
    assert ranks.loc["a"].tolist() == [1.0, 2.0, 1.0]
    assert A.cood_curves(_results(), "PE").empty
