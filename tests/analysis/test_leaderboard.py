"""Tests of the leaderboard across scoring methods: columns, seed summary, ranks, paired Δ."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fdbench.analysis.leaderboard import (
    ALL_STUDIES,
    column_bootstrap,
    leaderboard_ranks,
    leaderboard_significance,
    paired_delta,
    paired_deltas,
    seed_summary,
    study_column,
)


@pytest.mark.parametrize(
    ("study", "column"),
    [
        ("iid", "iid"),
        ("corruption/3", "corruption"),
        ("corruption/gaussian_noise/3", None),
        ("val", None),
        ("subclass", "sub-class"),
        ("new_class/semantic", "new-class semantic"),
        ("new_class/mnist", "new-class non-semantic"),
        ("cood/1", "cood/1"),
    ],
)
def test_study_columns(study, column):
    assert study_column(study) == column


def _results():
    rows = []
    for seed, (a, b) in enumerate([(1.0, 3.0), (2.0, 5.0)]):
        for study, shift in (("iid", 0.0), ("corruption/1", 10.0), ("corruption/2", 20.0)):
            rows.append(("d", "ce", seed, "MSR", study, "augrc", a + shift))
            rows.append(("d", "deepgamblers", seed, "DG-Res", study, "augrc", b + shift))
        rows.append(("d", "ce", seed, "MSR", "corruption/x/1", "augrc", 99.0))
    return pd.DataFrame(
        rows, columns=["dataset", "method", "seed", "csf", "study", "metric", "value"]
    )


def test_seed_summary_by_hand():
    out = seed_summary(_results()).set_index(["study", "scoring_method"])
    # corruption: per seed the mean of the two pooled levels (the per-type study left out)
    assert out.loc[("corruption", "MSR"), "mean"] == pytest.approx((16.0 + 17.0) / 2)
    assert out.loc[("corruption", "MSR"), "std"] == pytest.approx(np.std([16.0, 17.0], ddof=1))
    assert out.loc[("iid", "DG-Res"), "mean"] == pytest.approx(4.0)
    assert set(out["n_seeds"]) == {2}
    per_study = seed_summary(_results(), by_column=False)
    assert set(per_study["study"]) == {"iid", "corruption/1", "corruption/2"}


def _paired(rng, names, studies, n_resamples=60, shift=None):
    rows = []
    for study in studies:
        for k, name in enumerate(names):
            base = 0.1 + 0.02 * k if shift is None else shift[name]
            rows.append(
                pd.DataFrame(
                    {
                        "dataset": "d",
                        "study": study,
                        "scoring_method": name,
                        "metric": "augrc",
                        "resample": np.arange(n_resamples),
                        "value": base + 0.03 * rng.normal(size=n_resamples),
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def test_ranks_equal_brute_force_and_columns_weigh_equally():
    rng = np.random.default_rng(3)
    names = ["MSR", "DG-Res", "ConfidNet", "PE"]
    studies = ["iid", "corruption/1", "corruption/2", "new_class/semantic", "new_class/a"]
    paired = _paired(rng, names, studies)
    columns = column_bootstrap(paired)
    assert set(columns["study"]) == {
        "iid",
        "corruption",
        "new-class semantic",
        "new-class non-semantic",
    }
    ranks = leaderboard_ranks(columns, "augrc").set_index(["study", "scoring_method"])
    wide = {
        s: paired[paired["study"] == s]
        .pivot(index="resample", columns="scoring_method", values="value")[names]
        .to_numpy()
        for s in studies
    }
    cor = (wide["corruption/1"] + wide["corruption/2"]) / 2
    per_column = {
        "iid": wide["iid"],
        "corruption": cor,
        "new-class semantic": wide["new_class/semantic"],
        "new-class non-semantic": wide["new_class/a"],
    }
    column_ranks = {c: stats.rankdata(v, axis=1) for c, v in per_column.items()}
    for column, r in column_ranks.items():
        for j, name in enumerate(names):
            assert ranks.loc[(column, name), "mean_rank"] == pytest.approx(r[:, j].mean())
    overall = stats.rankdata(np.mean(list(column_ranks.values()), axis=0), axis=1)
    for j, name in enumerate(names):
        assert ranks.loc[(ALL_STUDIES, name), "mean_rank"] == pytest.approx(overall[:, j].mean())


def test_significance_over_all_scoring_methods():
    rng = np.random.default_rng(4)
    names = ["MSR", "DG-Res", "ConfidNet"]
    columns = column_bootstrap(
        _paired(rng, names, ["iid"], shift={"MSR": 0.1, "DG-Res": 0.2, "ConfidNet": 0.3})
    )
    maps = leaderboard_significance(columns, "augrc").set_index(
        ["scoring_method_a", "scoring_method_b"]
    )
    assert len(maps) == 6
    assert maps.loc[("MSR", "ConfidNet"), "significant"]
    assert not maps.loc[("ConfidNet", "MSR"), "significant"]


def test_paired_delta_interval_and_zero_for_identical_methods():
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    delta, lo, hi = paired_delta(a, a)
    assert np.all(delta == 0) and lo == 0 and hi == 0
    delta, lo, hi = paired_delta(a, np.zeros(5), confidence_level=0.5)
    assert (lo, hi) == (np.percentile(a, 25), np.percentile(a, 75))
    with pytest.raises(ValueError, match="values_a"):
        paired_delta(a, a[:3])
    with pytest.raises(ValueError, match="confidence_level"):
        paired_delta(a, a, confidence_level=1.0)


def test_paired_deltas_against_the_baseline_per_column_and_overall():
    rng = np.random.default_rng(5)
    names = ["MSR", "DG-Res"]
    paired = _paired(rng, names, ["iid", "corruption/1", "new_class/semantic"])
    twin = paired[paired["scoring_method"] == "MSR"].assign(scoring_method="TWIN")
    columns = column_bootstrap(pd.concat([paired, twin], ignore_index=True))
    deltas = paired_deltas(columns, ["augrc"]).set_index(["study", "scoring_method"])
    assert set(deltas["reference"]) == {"MSR"}
    assert deltas.loc[(ALL_STUDIES, "TWIN"), ["mean_delta", "lower", "upper"]].tolist() == [0, 0, 0]
    value = columns.pivot_table(
        index=["study", "resample"], columns="scoring_method", values="value"
    )
    diff = (value["DG-Res"] - value["MSR"]).unstack("study")
    overall = diff.mean(axis=1)
    lo, hi = np.percentile(overall, [2.5, 97.5])
    assert deltas.loc[(ALL_STUDIES, "DG-Res"), "lower"] == pytest.approx(lo)
    assert deltas.loc[(ALL_STUDIES, "DG-Res"), "upper"] == pytest.approx(hi)
    assert deltas.loc[("iid", "DG-Res"), "mean_delta"] == pytest.approx(diff["iid"].mean())
    pairs = paired_deltas(columns, ["augrc"], reference=None)
    assert len(pairs) == 4 * 3 * 2
    with pytest.raises(ValueError, match="reference"):
        paired_deltas(columns, ["augrc"], reference="nobody")
