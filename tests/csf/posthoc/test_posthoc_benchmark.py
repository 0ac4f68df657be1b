"""The benchmark's evaluation with ``posthoc:``: the post-hoc scores join the results with their
chosen values in ``csf_params``; without it the results keep their columns; the comparison's
tables."""

import json

import numpy as np
import pandas as pd

from fdbench.config.schema import PostHocConfig
from fdbench.core.io import read_table
from fdbench.csf.posthoc import posthoc_scores
from fdbench.jobs.benchmark import CSF_PARAMS_COLUMN, evaluate_runs
from fdbench.jobs.posthoc_comparison import write_posthoc_comparison
from fdbench.outputs import write_outputs

from .conftest import make_run


def _store(tmp_path):
    run = make_run(seed=1)
    run.meta |= {"method": "ce", "dataset": "toy", "seed": 0}
    write_outputs(tmp_path / "store", run)
    return tmp_path / "store"


def test_posthoc_scores_join_the_results_with_their_chosen_values(tmp_path):
    store = _store(tmp_path)
    plain = read_table(evaluate_runs([store], tmp_path / "plain"))
    assert CSF_PARAMS_COLUMN not in plain.columns
    assert not set(posthoc_scores()) & set(plain["csf"])
    table = read_table(evaluate_runs([store], tmp_path / "posthoc", posthoc=PostHocConfig()))
    assert set(posthoc_scores()) <= set(table["csf"])
    builtin = table[~table["csf"].isin(list(posthoc_scores()))]
    pd.testing.assert_frame_equal(
        builtin.drop(columns=CSF_PARAMS_COLUMN).reset_index(drop=True), plain
    )
    assert (builtin[CSF_PARAMS_COLUMN] == "").all()
    react = table.loc[table["csf"] == "ReAct", CSF_PARAMS_COLUMN].unique()
    assert len(react) == 1 and set(json.loads(react[0])) == {"percentile"}


def test_validation_ood_splits_are_no_test_study(tmp_path):
    run = make_run(seed=2)
    run.meta |= {"method": "ce", "dataset": "toy", "seed": 0}
    run.splits["val_ood"] = run.splits["new_class"]
    write_outputs(tmp_path / "store", run)
    config = PostHocConfig(mode="ood", val_ood=["val_ood"])
    table = read_table(evaluate_runs([tmp_path / "store"], tmp_path / "out", posthoc=config))
    assert "val_ood" not in set(table["study"]) and "new_class" in set(table["study"])


def test_the_comparison_tables(tmp_path):
    rng = np.random.default_rng(0)
    rows = [
        {
            "dataset": "d",
            "method": "ce",
            "seed": seed,
            "csf": csf,
            "study": study,
            "metric": metric,
            "value": base + rng.random(),
            "protocol": "failure_detection",
            CSF_PARAMS_COLUMN: '{"p": 1}' if csf == "GEN" else "",
        }
        for seed in (0, 1)
        for study in ("iid", "subclass", "new_class/a", "corruption/5", "corruption/x/5")
        for csf, base in (("MSR", 0.0), ("GEN", 0.2), ("KLM", 2.0))
        for metric in ("aurc", "augrc")
    ]
    out = write_posthoc_comparison(
        pd.DataFrame(rows), tmp_path, ["iid", "subclass", "new_class/*", "corruption/5"]
    )
    board = read_table(out / "leaderboard_aurc.csv")
    assert list(board["scoring_method"])[-1].endswith("KLM")
    friedman = read_table(out / "friedman_augrc.csv")
    assert friedman.loc[0, "n_blocks"] == 4 and friedman.loc[0, "n_methods"] == 3
    conover = read_table(out / "conover_holm_aurc.csv").set_index("scoring_method")
    assert np.diag(conover.to_numpy()).tolist() == [1.0, 1.0, 1.0]
    params = read_table(out / "hyperparameters.csv")
    assert list(params["csf"]) == ["GEN", "GEN"]
    assert (out / "groups_aurc.csv").exists() and (out / "nemenyi_aurc.csv").exists()


def test_a_comparison_where_every_study_ties_every_method_is_written(tmp_path):
    rows = pd.DataFrame(
        [
            {"dataset": "d", "study": s, "method": "ce", "seed": 0, "csf": c, "metric": m}
            for s in ("iid", "new_class")
            for c in ("MSR", "PE", "ENERGY")
            for m in ("aurc", "augrc")
        ]
    ).assign(value=0.25)
    out = write_posthoc_comparison(rows, tmp_path, ["*"])
    friedman = pd.read_csv(out / "friedman_aurc.csv")
    # tie-corrected chi2 is 0/0 here: Demšar's uncorrected formula gives 0, p = 1
    assert friedman.loc[0, "statistic"] == 0.0
    assert friedman.loc[0, "p_value"] == 1.0
    groups = pd.read_csv(out / "groups_aurc.csv")
    assert sorted(groups["members"].iloc[0].split(",")) == ["ENERGY", "MSR", "PE"]
    assert len(groups) == 2  # one group per test: nothing separates the methods
