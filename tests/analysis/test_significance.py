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


def _per_pair(values, alternative, pairs=None):
    """scipy's own p-value of each ordered pair (all pairs, or ``pairs``), one call a pair."""
    k = values.shape[0]
    p = np.full((k, k), np.nan)
    for a, b in pairs or [(a, b) for a in range(k) for b in range(k) if a != b]:
        d = values[a] - values[b]
        p[a, b] = 1.0 if not d.any() else stats.wilcoxon(d, alternative=alternative).pvalue
    return p


@pytest.mark.parametrize("n_resamples", [5, 10, 13, 14, 30, 50, 51])
@pytest.mark.parametrize("metric", ["aurc", "auroc_f"])
def test_wilcoxon_decides_per_pair_as_scipy_does(n_resamples, metric):
    """Pairs with and without zeros or ties in one call: each gets scipy's own per-pair
    method (exact, sign-flip permutation or normal approximation), not the batch's."""
    rng = np.random.default_rng(n_resamples)
    values = rng.normal(size=(6, n_resamples))
    values[1] = values[0] + np.round(rng.normal(size=n_resamples), 1)  # ties among |d|
    values[2, :2] = values[0, :2]  # zeros against CSF 0
    values[3] = values[0]  # identical: p = 1
    values[4] = values[5] + np.where(rng.uniform(size=n_resamples) < 0.5, 0.5, -0.5)
    got = pairwise_wilcoxon(values, metric)
    # scipy's permutation test takes about 0.3 s a pair at 13 resamples: fewer pairs there
    pairs = [(0, 1), (2, 0), (5, 4), (0, 5), (3, 0)]
    expected = _per_pair(
        values, "greater" if metric == "auroc_f" else "less", pairs if n_resamples == 13 else None
    )
    checked = ~np.isnan(expected)
    np.testing.assert_allclose(got[checked], expected[checked], rtol=1e-13, atol=0)
    assert got[0, 3] == got[3, 0] == 1.0


def test_wilcoxon_small_samples_are_fast():
    """Ten resamples of 13 scoring methods over 40 studies, with ties everywhere: scipy's
    per-pair permutation test takes tens of milliseconds a pair, minutes in all."""
    import time

    rng = np.random.default_rng(0)
    values = np.round(rng.normal(size=(40, 13, 10)), 1)
    start = time.process_time()
    maps = [pairwise_wilcoxon(v, "augrc") for v in values]
    assert time.process_time() - start < 5
    pairs = [(0, 1), (1, 0), (3, 7), (12, 4), (5, 11)]
    expected = _per_pair(values[0], "less", pairs)
    checked = ~np.isnan(expected)
    np.testing.assert_allclose(maps[0][checked], expected[checked], rtol=1e-13, atol=0)


@pytest.mark.parametrize("n_resamples", [10, 30, 60])
def test_wilcoxon_nan_difference_gives_nan_as_scipy(n_resamples):
    rng = np.random.default_rng(1)
    values = np.round(rng.normal(size=(3, n_resamples)), 1)
    values[0, 3] = np.nan
    p = pairwise_wilcoxon(values, "aurc")
    assert np.isnan(stats.wilcoxon(values[0] - values[1], alternative="less").pvalue)
    assert np.isnan(p[0, 1]) and np.isnan(p[2, 0])
    assert p[1, 2] == pytest.approx(
        stats.wilcoxon(values[1] - values[2], alternative="less").pvalue, rel=1e-13
    )
