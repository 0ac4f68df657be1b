"""The one selection rule of dense figures (:mod:`fdbench.report.selection`) against brute-force
definitions, and the rank-distribution figure of a selection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fdbench.report.selection import (
    csf_ranking,
    csf_references,
    select,
    top_and_references,
)

NAMES = [f"m{i}" for i in range(30)]


@given(
    st.permutations(NAMES),
    st.sets(st.sampled_from([*NAMES, "absent"]), max_size=5),
    st.integers(1, 35),
)
def test_top_and_references_is_the_top_k_then_the_references_in_ranking_order(
    ranked, references, top
):
    chosen = top_and_references(ranked, references, top)
    wanted = [n for i, n in enumerate(ranked) if i < top or n in references]
    assert chosen == wanted


@pytest.mark.parametrize("top", [0, -1, True, 2.0])
def test_top_must_be_a_positive_integer(top):
    with pytest.raises(ValueError, match="top"):
        top_and_references(NAMES, [], top)


def test_caption_states_the_selection_or_that_all_are_drawn():
    partial = select(NAMES, ["m25", "m1", "absent"], "mean rank", top=3)
    assert partial.shown == ["m0", "m1", "m2", "m25"]
    assert partial.caption() == "the top 3 of 30 CSFs by mean rank, plus the references m25, m1"
    one = select(NAMES, ["m20"], "mean rank", top=2)
    assert one.caption() == "the top 2 of 30 CSFs by mean rank, plus the reference m20"
    whole = select(NAMES[:3], ["m1"], "mean rank", top=3)
    assert not whole.partial and whole.caption("scores") == "all 3 scores"


def test_references_are_the_own_head_and_the_baseline_that_were_run():
    assert csf_references(["PE", "MSR", "DG-Res", "DG-Res-MCD"]) == ["DG-Res", "MSR"]
    assert csf_references(["ENS-MSR", "ENS-PE"]) == ["ENS-MSR"]
    assert csf_references(["PE"]) == []


def test_csf_ranking_is_the_mean_rank_over_studies_of_the_seed_mean_augrc():
    rng = np.random.default_rng(1)
    csfs = ["a", "b", "c", "d"]
    rows = [
        ("d1", "m", seed, csf, study, metric, rng.uniform())
        for seed in (0, 1)
        for csf in csfs
        for study in ("iid", "cor", "other")
        for metric in ("augrc", "aurc")
    ]
    results = pd.DataFrame(
        rows, columns=["dataset", "method", "seed", "csf", "study", "metric", "value"]
    )
    ranked, by = csf_ranking(results, [*csfs, "never-run"], studies=["iid", "cor"])
    augrc = results[(results["metric"] == "augrc") & results["study"].isin(["iid", "cor"])]
    means = augrc.groupby(["study", "csf"])["value"].mean().unstack("study")
    expected = means.rank(axis=0).mean(axis=1)
    assert ranked[:4] == sorted(csfs, key=lambda c: (expected[c], csfs.index(c)))
    assert ranked[4] == "never-run"
    assert by == "mean rank of the seed-mean AUGRC over 2 studies"
    assert csf_ranking(None, csfs) == (csfs, None)


def test_rank_shares_of_a_selection_gather_the_worse_ranks_in_one_column():
    from fdbench.report.plots import rank_distribution_figure, rank_shares

    ranks = pd.DataFrame(
        {
            "csf": ["a", "a", "b", "b", "z", "z"],
            "resample": [0, 1, 0, 1, 0, 1],
            "rank": [1.0, 2.5, 7.0, 3.0, 1.0, 1.0],
        }
    )
    shares = rank_shares(ranks, ["a", "b"], ranked=8)
    np.testing.assert_array_equal(shares, [[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]])
    # every CSF ranked: no such column, a rank above k is k
    np.testing.assert_array_equal(rank_shares(ranks, ["a", "b"]), [[0.5, 0.5], [0.0, 1.0]])
    assert rank_distribution_figure(ranks, ["a", "b"], "two of eight", ranked=8)[:4] == b"\x89PNG"


def _severity_rows(method: str, names: list[str]) -> list[tuple]:
    return [
        ("d", "corruption", level, f"corruption/{level}", method, name, 0.1 + 0.01 * i, 0.05, 0.2)
        for i, name in enumerate(names)
        for level in (1.0, 2.0, 3.0)
    ]


def test_severity_panels_draw_the_top_10_and_the_references_without_a_collapsed_layout():
    import warnings

    from fdbench.report.sections.severity import drawn_per_method, severity_figure

    many = [f"DG-s{i:02d}" for i in range(34)] + ["DG-Res", "DG-MSR"]
    few = ["ENS-MSR", "ENS-PE", "ENS-EE"]
    curves = pd.DataFrame(
        _severity_rows("dg", many) + _severity_rows("ens", few),
        columns=[
            "dataset",
            "family",
            "level",
            "study",
            "method",
            "scoring_method",
            "value",
            "lower",
            "upper",
        ],
    )
    drawn = drawn_per_method(curves, "augrc")
    by_method = drawn.groupby("method", sort=False)["scoring_method"].unique()
    assert list(by_method["dg"]) == [*many[:10], "DG-Res"]  # lower AUGRC first
    assert list(by_method["ens"]) == few
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert severity_figure(curves, "AUGRC", 1000.0, "every name")[:4] == b"\x89PNG"
