"""Wilcoxon/Holm significance maps against a direct per-pair scipy computation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from fdbench.analysis import holm, pairwise_wilcoxon, significance_matrix


def _holm_direct(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * p[i]))
        adjusted[i] = running
    return adjusted


def test_holm_known_values():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 0.2, 17)
    np.testing.assert_allclose(holm(p), _holm_direct(list(p)))
    with pytest.raises(ValueError, match="p_values"):
        holm([0.1, np.nan])


@pytest.mark.parametrize("metric", ["aurc", "auroc_f"])
def test_significance_matches_direct_scipy(bootstrap_table, metric):
    result = significance_matrix(bootstrap_table, metric, alpha=0.05)
    alternative = "greater" if metric == "auroc_f" else "less"
    for study in bootstrap_table.study.unique():
        part = bootstrap_table[
            (bootstrap_table.study == study) & (bootstrap_table.metric == metric)
        ]
        means = part.groupby(["csf", "resample"]).value.mean().unstack()
        csfs = list(means.index)
        pairs, pvals = [], []
        for a in csfs:
            for b in csfs:
                if a == b:
                    continue
                d = means.loc[a].to_numpy() - means.loc[b].to_numpy()
                p = 1.0 if not d.any() else stats.wilcoxon(d, alternative=alternative).pvalue
                pairs.append((a, b))
                pvals.append(p)
        adjusted = _holm_direct(pvals)
        got = result[result.study == study].set_index(["csf_a", "csf_b"])
        assert len(got) == len(pairs) == 12
        for (a, b), p, q in zip(pairs, pvals, adjusted, strict=True):
            assert got.loc[(a, b), "p_value"] == pytest.approx(p, rel=1e-9, abs=1e-15)
            assert got.loc[(a, b), "p_holm"] == pytest.approx(q, rel=1e-9, abs=1e-15)
            assert got.loc[(a, b), "significant"] == (q <= 0.05)
    iid = result[result.study == "iid"].set_index(["csf_a", "csf_b"]).significant
    assert iid[("MSR", "PE")] and not iid[("PE", "MSR")]
    assert not iid[("MSR", "DOCTOR")] and not iid[("DOCTOR", "MSR")]


def test_pairwise_wilcoxon_shape_and_diagonal():
    values = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.0, 3.0, 4.0, 5.0, 6.0, 7.5]])
    p = pairwise_wilcoxon(values, "aurc")
    assert np.isnan(np.diag(p)).all()
    assert p[0, 1] == pytest.approx(
        stats.wilcoxon(values[0] - values[1], alternative="less").pvalue
    )
    assert p[1, 0] > 0.5
    with pytest.raises(ValueError, match="CSFs x resamples"):
        pairwise_wilcoxon(values[0], "aurc")


@pytest.mark.parametrize("n_resamples", [30, 500])
def test_vectorised_wilcoxon_equals_per_pair_calls_with_zeros_and_ties(n_resamples):
    rng = np.random.default_rng(n_resamples)
    values = rng.normal(size=(4, n_resamples)).round(1)
    values[1, : n_resamples // 3] = values[0, : n_resamples // 3]
    p = pairwise_wilcoxon(values, "augrc")
    for a in range(4):
        for b in range(4):
            if a != b:
                direct = stats.wilcoxon(values[a] - values[b], alternative="less").pvalue
                assert p[a, b] == pytest.approx(direct, rel=1e-12, abs=1e-300)
