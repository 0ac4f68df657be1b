"""Rankings and rank-then-aggregate against a direct scipy computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fdbench.analysis import (
    bootstrap_ranks,
    higher_is_better,
    overall_bootstrap_ranks,
    overall_ranks,
    rank_csfs,
    rank_distribution,
    rank_then_aggregate,
)


def _direct_mean_ranks(table: pd.DataFrame, metric: str) -> dict[tuple[str, str], float]:
    sign = -1.0 if higher_is_better(metric) else 1.0
    out: dict[tuple[str, str], list[float]] = {}
    rows = table[table.metric == metric]
    for study in rows.study.unique():
        part = rows[rows.study == study]
        csfs = sorted(part.csf.unique())
        for resample in sorted(part["resample"].unique()):
            r = part[part["resample"] == resample]
            means = [r[r.csf == c].value.mean() for c in csfs]
            ranks = stats.rankdata(sign * np.array(means), method="average")
            for c, rank in zip(csfs, ranks, strict=True):
                out.setdefault((study, c), []).append(rank)
    return {k: float(np.mean(v)) for k, v in out.items()}


@pytest.mark.parametrize("metric", ["aurc", "auroc_f"])
def test_rank_then_aggregate_matches_scipy(bootstrap_table, metric):
    result = rank_then_aggregate(bootstrap_table, metric)
    expected = _direct_mean_ranks(bootstrap_table, metric)
    assert len(result) == len(expected)
    for row in result.itertuples():
        assert row.mean_rank == pytest.approx(expected[(row.study, row.csf)], abs=1e-12)
        assert row.n_resamples == 40
    # the tied pair MSR/DOCTOR shares an average rank in every resample
    ranks = bootstrap_ranks(bootstrap_table, metric)
    msr = ranks[ranks.csf == "MSR"]["rank"].to_numpy()
    doctor = ranks[ranks.csf == "DOCTOR"]["rank"].to_numpy()
    np.testing.assert_array_equal(msr, doctor)
    assert set(np.unique(msr)) <= {1.5, 2.5, 3.5}


def test_aurc_and_auroc_give_the_same_order_on_linked_values(bootstrap_table):
    a = rank_then_aggregate(bootstrap_table, "aurc").set_index(["study", "csf"]).mean_rank
    b = rank_then_aggregate(bootstrap_table, "auroc_f").set_index(["study", "csf"]).mean_rank
    pd.testing.assert_series_equal(a.sort_index(), b.sort_index())
    assert a.loc[("iid", "PE")] > a.loc[("iid", "MLS")] > a.loc[("iid", "MSR")]


def test_rank_distribution_and_overall(bootstrap_table):
    ranks = bootstrap_ranks(bootstrap_table, "aurc")
    dist = rank_distribution(ranks)
    sums = dist.groupby(["study", "csf"]).frequency.sum()
    np.testing.assert_allclose(sums.to_numpy(), 1.0)
    overall = overall_ranks(ranks)
    assert set(overall.csf) == {"MSR", "MLS", "PE", "DOCTOR"}
    assert "study" not in overall.columns
    direct = []
    for resample in range(40):
        r = ranks[ranks["resample"] == resample]
        means = r.groupby("csf")["rank"].mean().sort_index()
        direct.append(pd.Series(stats.rankdata(means.to_numpy()), index=means.index))
    expected = pd.concat(direct, axis=1).mean(axis=1)
    got = overall.set_index("csf").mean_rank.sort_index()
    np.testing.assert_allclose(got.to_numpy(), expected.sort_index().to_numpy())
    per_resample = overall_bootstrap_ranks(ranks)
    for resample in (0, 17, 39):
        part = per_resample[per_resample["resample"] == resample].set_index("csf")["rank"]
        pd.testing.assert_series_equal(
            part.sort_index(), direct[resample].sort_index(), check_names=False
        )
    overall_dist = rank_distribution(per_resample, by=())
    assert set(overall_dist.csf) == {"MSR", "MLS", "PE", "DOCTOR"}
    np.testing.assert_allclose(overall_dist.groupby("csf").frequency.sum().to_numpy(), 1.0)


def test_rank_csfs_direction():
    table = pd.DataFrame(
        {
            "study": ["iid"] * 6,
            "seed": [0, 1, 0, 1, 0, 1],
            "csf": ["a", "a", "b", "b", "c", "c"],
            "metric": ["auroc_f"] * 6,
            "value": [0.9, 0.8, 0.7, 0.7, 0.95, 0.93],
        }
    )
    ranks = rank_csfs(table, "auroc_f").set_index("csf")["rank"]
    assert ranks.to_dict() == {"c": 1.0, "a": 2.0, "b": 3.0}
    table["metric"] = "aurc"
    ranks = rank_csfs(table, "aurc").set_index("csf")["rank"]
    assert ranks.to_dict() == {"c": 3.0, "a": 2.0, "b": 1.0}


def test_every_metric_of_the_engine_has_a_direction():
    from fdbench.metrics import LABEL_KEYS, LOGIT_KEYS, METRIC_KEYS, SOFT_METRIC_KEYS

    lower = {"risk@95cov", "selective_risk@95cov", "mean_residual", "aurc_ba", "augrc_ba"}
    lower |= {"nll", "brier", "mce"}
    higher = {"coverage@risk5", "balanced_accuracy", "ap_f_success"}
    keys = {*METRIC_KEYS, *SOFT_METRIC_KEYS, *LABEL_KEYS, *LOGIT_KEYS}
    assert lower | higher <= keys
    for key in keys:
        assert higher_is_better(key) == (key in higher or key.startswith(("auroc", "ap_", "acc")))


def test_directions_and_errors(bootstrap_table):
    assert not higher_is_better("aurc") and not higher_is_better("fpr@95tpr")
    assert not higher_is_better("eaugrc") and not higher_is_better("brier")
    assert higher_is_better("auroc_f") and higher_is_better("ap_f_error")
    assert higher_is_better("accuracy")
    with pytest.raises(ValueError, match="no known direction"):
        higher_is_better("mystery")
    with pytest.raises(ValueError, match="no rows for metric 'nll'"):
        rank_then_aggregate(bootstrap_table, "nll")
    with pytest.raises(ValueError, match="resample"):
        bootstrap_ranks(bootstrap_table.drop(columns="resample"), "aurc")
