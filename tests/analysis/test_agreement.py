"""Kendall's τ between metric-induced rankings against scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fdbench.analysis import ranking_agreement


def test_kendall_tau_matches_scipy():
    rng = np.random.default_rng(3)
    rows = []
    csfs = [f"csf{i}" for i in range(8)]
    for study in ("iid", "shift"):
        for seed in range(2):
            for csf in csfs:
                for metric in ("aurc", "augrc", "auroc_f"):
                    rows.append((study, seed, csf, metric, rng.uniform()))
    table = pd.DataFrame(rows, columns=["study", "seed", "csf", "metric", "value"])
    result = ranking_agreement(table, "aurc", "augrc").set_index("study")
    for study in ("iid", "shift"):
        part = table[table.study == study]
        a = part[part.metric == "aurc"].groupby("csf").value.mean().sort_index()
        b = part[part.metric == "augrc"].groupby("csf").value.mean().sort_index()
        expected = stats.kendalltau(a.to_numpy(), b.to_numpy())
        assert result.loc[study, "tau"] == pytest.approx(expected.statistic)
        assert result.loc[study, "p_value"] == pytest.approx(expected.pvalue)
        assert result.loc[study, "n_csfs"] == 8
        c = part[part.metric == "auroc_f"].groupby("csf").value.mean().sort_index()
        opposite = stats.kendalltau(a.to_numpy(), -c.to_numpy()).statistic
        got = ranking_agreement(part, "aurc", "auroc_f").tau.iloc[0]
        assert got == pytest.approx(opposite)
