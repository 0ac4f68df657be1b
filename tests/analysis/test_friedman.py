"""Friedman test and Nemenyi post-hoc against scipy and the worked example of Demšar (2006)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from fdbench.analysis.friedman import (
    block_ranks,
    friedman_nemenyi,
    friedman_test,
    nemenyi_critical_difference,
    nemenyi_p_values,
    nemenyi_q,
)

DEMSAR_METHODS = ("C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf")
# Demšar (2006), Table 6: AUC of four C4.5 variants on fourteen UCI data sets (adult (sample),
# breast cancer, breast cancer wisconsin, cmc, ionosphere, iris, liver disorders, lung cancer,
# lymphography, mushroom, primary tumor, rheum, voting, wine). The table prints the AUC to three
# digits and each cell's rank; on voting the two printed 0.975 are ranked 2 (C4.5+cf) and 3
# (C4.5+m+cf), as their unrounded values differ, so C4.5+cf is written 0.9751 here to keep the
# printed ranks (with 0.975 twice the average ranks would be 2.929 and 1.929, not as printed).
DEMSAR_AUC = np.array(
    [
        [0.763, 0.768, 0.771, 0.798],
        [0.599, 0.591, 0.590, 0.569],
        [0.954, 0.971, 0.968, 0.967],
        [0.628, 0.661, 0.654, 0.657],
        [0.882, 0.888, 0.886, 0.898],
        [0.936, 0.931, 0.916, 0.931],
        [0.661, 0.668, 0.609, 0.685],
        [0.583, 0.583, 0.563, 0.625],
        [0.775, 0.838, 0.866, 0.875],
        [1.000, 1.000, 1.000, 1.000],
        [0.940, 0.962, 0.965, 0.962],
        [0.619, 0.666, 0.614, 0.669],
        [0.972, 0.981, 0.9751, 0.975],
        [0.957, 0.978, 0.946, 0.970],
    ]
)


def test_demsar_worked_example():
    """Section 3.2.4: average ranks 3.143, 2.000, 2.893, 1.964; χ²_F = 9.28; F_F = 3.69;
    q_0.05 = 2.569 and CD = 1.25 for k = 4, N = 14."""
    result = friedman_test(DEMSAR_AUC, higher_is_better=True, tie_correction=False)
    np.testing.assert_array_equal(np.round(result.average_ranks, 3), [3.143, 2.000, 2.893, 1.964])
    assert round(result.statistic, 2) == 9.28
    assert round(result.f_statistic, 2) == 3.69
    assert (result.n_blocks, result.n_methods) == (14, 4)
    # "the critical value of F(3, 39) for α = 0.05 is 2.85, so we reject the null-hypothesis"
    assert round(stats.f.ppf(0.95, 3, 39), 2) == 2.85
    assert result.f_p_value < 0.05
    assert round(nemenyi_q(4, 0.05), 3) == 2.569
    assert round(nemenyi_critical_difference(4, 14, 0.05), 2) == 1.25
    # Section 3.2.4 at α = 0.10: q = 2.291, CD = 1.12; only C4.5 vs C4.5+m and C4.5+m+cf differ
    assert round(nemenyi_q(4, 0.10), 3) == 2.291
    assert round(nemenyi_critical_difference(4, 14, 0.10), 2) == 1.12
    p = nemenyi_p_values(DEMSAR_AUC, higher_is_better=True)
    rows, columns = np.nonzero(p < 0.10)
    significant = {
        (DEMSAR_METHODS[a], DEMSAR_METHODS[b]) for a, b in zip(rows, columns, strict=True) if a < b
    }
    assert significant == {("C4.5", "C4.5+m"), ("C4.5", "C4.5+m+cf")}
    assert not (p < 0.05).any()


def test_tie_corrected_statistic_is_scipys():
    result = friedman_test(DEMSAR_AUC, higher_is_better=True)
    expected = stats.friedmanchisquare(*DEMSAR_AUC.T)
    assert result.statistic == expected.statistic
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-12)
    # the table has ties (mushroom, iris, lung cancer, primary tumor): the correction matters
    assert result.statistic > friedman_test(DEMSAR_AUC, tie_correction=False).statistic


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(2, 8), st.integers(3, 6)),
        elements=st.floats(0, 1, allow_nan=False),
    ),
    st.booleans(),
)
def test_friedman_agrees_with_scipy_and_brute_force(values, higher):
    if np.all(values == values[:, :1]):
        with pytest.raises(ValueError, match="every block ties"):
            friedman_test(values)
        return
    result = friedman_test(values, higher_is_better=higher)
    assert result.statistic == pytest.approx(
        stats.friedmanchisquare(*values.T).statistic, rel=1e-12, abs=1e-12
    )
    # brute force: rank 1 to the best of every row by counting, ties averaged
    n, k = values.shape
    signed = -values if higher else values
    brute = np.array(
        [
            [np.sum(row < row[j]) + (np.sum(row == row[j]) + 1) / 2 for j in range(k)]
            for row in signed
        ]
    )
    np.testing.assert_allclose(block_ranks(values, higher_is_better=higher), brute)
    np.testing.assert_allclose(result.average_ranks, brute.mean(axis=0))
    uncorrected = friedman_test(values, higher_is_better=higher, tie_correction=False)
    direct = 12 * n / (k * (k + 1)) * (np.sum(brute.mean(0) ** 2) - k * (k + 1) ** 2 / 4)
    assert uncorrected.statistic == pytest.approx(direct, rel=1e-12, abs=1e-12)
    if all(np.unique(row).size == k for row in values):  # no ties: the correction is 1
        assert uncorrected.statistic == pytest.approx(result.statistic, rel=1e-12, abs=1e-12)


def test_nemenyi_p_below_alpha_exactly_beyond_the_critical_difference():
    rng = np.random.default_rng(3)
    values = rng.normal(size=(25, 6)) + np.linspace(0, 1.5, 6)
    ranks = block_ranks(values).mean(axis=0)
    cd = nemenyi_critical_difference(6, 25, 0.05)
    p = nemenyi_p_values(values)
    gaps = np.abs(ranks[:, None] - ranks[None, :])
    np.testing.assert_array_equal(p < 0.05, gaps > cd)
    assert (gaps > cd).any() and ((gaps < cd) & (gaps > 0)).any()
    np.testing.assert_array_equal(np.diag(p), 1.0)
    # a higher-is-better metric mirrors the ranks, not the p-values
    np.testing.assert_allclose(nemenyi_p_values(-values, higher_is_better=True), p)


def test_bad_inputs():
    with pytest.raises(ValueError, match="at least 2 blocks"):
        friedman_test(np.ones((1, 4)))
    with pytest.raises(ValueError, match="3 methods"):
        friedman_test(np.ones((5, 2)))
    assert friedman_test(np.ones((3, 4)), tie_correction=False).statistic == 0
    with pytest.raises(ValueError, match="finite"):
        friedman_test([[1, 2, np.nan], [1, 2, 3]])
    with pytest.raises(TypeError, match="real numbers"):
        friedman_test([["a", "b", "c"], ["a", "b", "c"]])
    with pytest.raises(ValueError, match="alpha"):
        nemenyi_q(4, 1.5)
    with pytest.raises(ValueError, match="n_methods"):
        nemenyi_q(1)
    with pytest.raises(ValueError, match="n_blocks"):
        nemenyi_critical_difference(4, 0)


def _results() -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(1)
    for study_i, study in enumerate(("iid", "cor", "subclass", "new_class/semantic")):
        for method, csfs in (("ce", ("MSR", "PE")), ("dg", ("MSR", "DG-Res"))):
            for csf_i, csf in enumerate(csfs):
                for seed in (0, 1):
                    value = 0.1 * study_i + 0.01 * csf_i + rng.uniform(0, 0.001)
                    rows.append(
                        {
                            "dataset": "d",
                            "method": method,
                            "seed": seed,
                            "csf": csf,
                            "study": study,
                            "metric": "augrc",
                            "value": value + (0.02 if method == "dg" else 0.0),
                        }
                    )
    rows.append({**rows[0], "csf": "ViM", "study": "iid"})
    return pd.DataFrame(rows)


def test_friedman_nemenyi_of_a_results_table():
    results = _results()
    out = friedman_nemenyi(results, "augrc")
    assert out.dropped == ("ViM",)
    assert list(out.values.columns) == ["MSR", "PE", "dg-MSR", "DG-Res"]
    assert out.values.shape == (4, 4)
    # seed means, blocks = dataset × study
    seed_mean = results[
        (results.method == "ce") & (results.csf == "PE") & (results.study == "cor")
    ].value.mean()
    assert out.values.loc[("d", "cor"), "PE"] == seed_mean
    direct = friedman_test(out.values.to_numpy())
    assert out.friedman.statistic == direct.statistic
    assert list(out.average_ranks.index) == ["MSR", "PE", "dg-MSR", "DG-Res"]
    np.testing.assert_array_equal(out.average_ranks.to_numpy(), [1.0, 2.0, 3.0, 4.0])
    assert out.critical_difference == nemenyi_critical_difference(4, 4)
    assert out.p_values.loc["MSR", "DG-Res"] < 0.05
    with pytest.raises(ValueError, match="at least 3 scoring methods"):
        friedman_nemenyi(results[results.method == "ce"], "augrc")
    with pytest.raises(ValueError, match="no rows for metric"):
        friedman_nemenyi(results, "aurc")
