"""Conover–Holm post-hoc p-values against scikit-posthocs and by hand; the groups of
indistinguishable methods."""

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fdbench.analysis.conover import (
    compare_scoring_methods,
    conover_p_values,
    indistinguishable_groups,
)
from fdbench.analysis.friedman import block_ranks


@settings(max_examples=40, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(2, 8), st.integers(3, 6)),
        elements=st.integers(0, 5).map(float),
    )
)
def test_conover_matches_scikit_posthocs(values):
    ranks = block_ranks(values)
    expected = scikit_posthocs.posthoc_conover_friedman(ranks, p_adjust="holm").to_numpy()
    got = conover_p_values(values)
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-9, atol=1e-12)


def test_conover_by_hand():
    # 3 blocks, 3 methods, ranks (1, 2, 3), (1, 3, 2), (2, 1, 3): R = (4, 6, 8)
    values = np.array([[1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [2.0, 1.0, 3.0]])
    n, k = 3, 3
    s2 = (np.sum(block_ranks(values) ** 2) - k * n * (k + 1) ** 2 / 4) / (k - 1)  # (42 - 36)/2 = 3
    t2 = ((4 - 6) ** 2 + 0 + (8 - 6) ** 2) / s2  # 8 / 3
    df = n * k - k - n + 1  # 4
    scale = np.sqrt(s2 * 2 * n * (k - 1) / df * (1 - t2 / (n * (k - 1))))
    from scipy import stats

    raw = {(0, 1): 2 * stats.t.sf(2 / scale, df), (0, 2): 2 * stats.t.sf(4 / scale, df)}
    raw[(1, 2)] = raw[(0, 1)]
    ordered = sorted(raw.values())
    holm = [min(1, 3 * ordered[0]), max(min(1, 3 * ordered[0]), min(1, 2 * ordered[1]))]
    got = conover_p_values(values)
    assert got[0, 2] == pytest.approx(holm[0])
    assert got[0, 1] == pytest.approx(max(holm[1], min(1, ordered[2])))
    assert got[1, 1] == 1.0 and got[1, 0] == got[0, 1]


def test_groups_are_maximal_runs_of_indistinguishable_methods():
    ranks = pd.Series({"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0})
    p = pd.DataFrame(1.0, index=list("abcd"), columns=list("abcd"))
    for x, y in (("a", "c"), ("a", "d"), ("b", "d")):
        p.loc[x, y] = p.loc[y, x] = 0.01
    assert indistinguishable_groups(ranks, p) == [["a", "b"], ["b", "c"], ["c", "d"]]
    p.loc["b", "c"] = p.loc["c", "b"] = 0.01
    assert indistinguishable_groups(ranks, p) == [["a", "b"], ["c", "d"]]


def test_compare_scoring_methods_on_a_results_table():
    rng = np.random.default_rng(0)
    rows = [
        {"dataset": "d", "study": f"s{i}", "csf": c, "metric": "aurc", "value": v + rng.random()}
        for i in range(6)
        for c, v in (("A", 0.0), ("B", 0.5), ("C", 3.0))
    ]
    out = compare_scoring_methods(pd.DataFrame(rows), "aurc")
    assert out.nemenyi.average_ranks.index[0] == "A"
    assert out.conover.loc["A", "C"] < 0.05
    assert out.conover_groups[-1][-1] == "C"
