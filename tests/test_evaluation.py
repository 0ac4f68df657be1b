"""Tests of the evaluation pipeline on outputs built in the test."""

import numpy as np
import pytest

from fdbench import metrics as M
from fdbench.evaluation.runs import ensemble_log_probs, evaluate_run
from fdbench.outputs import RunOutputs, SplitOutputs


def make_run(seed: int, n: int = 300, k: int = 4) -> RunOutputs:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, k, n)
    base = 2.0 * np.eye(k)[labels]
    noise = np.random.default_rng(seed).normal(size=(n, k))
    new = np.random.default_rng(seed + 100).normal(size=(50, k))
    splits = {
        "val": SplitOutputs(labels=labels[:100], logits=base[:100] + noise[:100], kind="val"),
        "iid": SplitOutputs(labels=labels[100:], logits=base[100:] + noise[100:], kind="iid"),
        "new_class/x": SplitOutputs(labels=np.full(50, -1), logits=new, kind="new_class"),
    }
    return RunOutputs(splits=splits, meta={"dataset": "toy", "method": "ce", "seed": seed})


def test_run_table_matches_direct_metrics():
    run = make_run(1)
    table = evaluate_run(run)
    assert set(table["study"]) == {"iid", "new_class/x"}
    assert {"TEMP-MLS", "MSR"} <= set(table["csf"])
    iid = run.splits["iid"]
    z = iid.logits - iid.logits.max(axis=1, keepdims=True)
    msr = np.exp(z).max(axis=1) / np.exp(z).sum(axis=1)
    residuals = (iid.logits.argmax(axis=1) != iid.labels).astype(float)
    row = table.query("study == 'iid' and csf == 'MSR' and metric == 'augrc'")
    assert row["value"].item() == pytest.approx(M.augrc(residuals, msr), abs=1e-14)
    assert (table["method"] == "ce").all()


def test_logit_scores_once_per_study_equal_per_csf_scores(monkeypatch):
    """NLL, Brier and balanced accuracy, computed once per study in row blocks, are the values
    (and the rows, in order) that evaluate_all gives each CSF from the gathered logits."""
    import fdbench.evaluation.confidences as confidences

    run = make_run(2)
    shared = evaluate_run(run)
    monkeypatch.setattr(confidences, "_logit_scores", lambda es, labels, logits, terms: None)
    per_csf = evaluate_run(run)
    assert shared.equals(per_csf)
    assert {"nll", "brier", "balanced_accuracy"} <= set(shared["metric"])


def test_ensemble_prediction_is_mean_softmax_argmax():
    members = [make_run(s) for s in range(3)]
    logits = [m.splits["iid"].logits for m in members]
    probs = np.mean([np.exp(M.log_softmax(z)) for z in logits], axis=0)
    np.testing.assert_allclose(np.exp(ensemble_log_probs(logits)), probs, rtol=1e-12)
    table = evaluate_run(members)
    assert set(table["csf"]) == {"ENS-MSR", "ENS-PE", "ENS-EE", "ENS-MI"}
    residuals = (probs.argmax(axis=1) != members[0].splits["iid"].labels).astype(float)
    row = table.query("study == 'iid' and csf == 'ENS-MSR' and metric == 'aurc'")
    assert row["value"].item() == pytest.approx(M.aurc(residuals, probs.max(axis=1)), abs=1e-14)
    assert (table["method"] == "ensemble(ce)").all()


def test_ensemble_of_one_is_rejected():
    with pytest.raises(ValueError, match="at least 2"):
        evaluate_run([make_run(0)])


def test_mc_dropout_csfs_are_judged_with_the_mc_mean_prediction():
    run = make_run(2)
    rng = np.random.default_rng(5)
    for split in run.splits.values():
        n, k = split.logits.shape
        split.mcd_logits = split.logits[:, None, :] + rng.normal(0, 2.0, size=(n, 7, k))
    table = evaluate_run(run)
    iid = run.splits["iid"]
    mean = np.mean(
        np.exp(np.stack([M.log_softmax(z) for z in np.moveaxis(iid.mcd_logits, 1, 0)])), 0
    )
    mcd_residuals = (mean.argmax(axis=1) != iid.labels).astype(float)
    net_residuals = (iid.logits.argmax(axis=1) != iid.labels).astype(float)
    assert not np.array_equal(mcd_residuals, net_residuals)
    acc = table.query("study == 'iid' and metric == 'accuracy'").set_index("csf")["value"]
    assert acc["MCD-MSR"] == pytest.approx(1 - mcd_residuals.mean())
    assert acc["MSR"] == pytest.approx(1 - net_residuals.mean())
    row = table.query("study == 'iid' and csf == 'MCD-MSR' and metric == 'aurc'")
    assert row["value"].item() == pytest.approx(M.aurc(mcd_residuals, mean.max(axis=1)), abs=1e-14)
