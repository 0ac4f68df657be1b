"""Kim et al.'s pooled unknown-detection protocol: pools, OoD metrics, and the acceptance check
against a brute-force AURC computed directly on the arrays of an outputs store."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.evaluation.runs import evaluate_run
from fdbench.evaluation.tables import evaluate_table
from fdbench.outputs import RunOutputs, SplitOutputs, read_outputs, write_outputs
from fdbench.protocol import (
    FAR_OOD_STUDY,
    NEAR_OOD_STUDY,
    UNKNOWN_STUDY,
    Protocol,
    build_evaluation_set,
    unknown_detection_pools,
)
from fdbench.report import unknown_detection_display, unknown_detection_summary

K = 3
SPLITS = (
    ("iid", "iid", 60),
    ("near_ood/a", "near_ood", 25),
    ("far_ood/b", "far_ood", 15),
    ("far_ood/c", "far_ood", 20),
)


def brute_force_aurc(errors: np.ndarray, confidence: np.ndarray) -> float:
    """AURC by its definition (Geifman et al., 2019; /work/shared/METRICS.md): for every
    distinct threshold t (ascending: coverage 1 first), accept c >= t; coverage = accepted / N,
    selective risk = errors among accepted / accepted; trapezoids between consecutive points,
    then a last point at coverage 0 repeating the last risk."""
    n = errors.size
    coverages, risks = [], []
    for t in np.unique(confidence):
        accepted = confidence >= t
        coverages.append(accepted.sum() / n)
        risks.append(errors[accepted].sum() / accepted.sum())
    coverages.append(0.0)
    risks.append(risks[-1])
    area = 0.0
    for i in range(1, len(coverages)):
        area += (coverages[i - 1] - coverages[i]) * (risks[i - 1] + risks[i]) / 2
    return area


def make_store(path, seed: int = 0):
    rng = np.random.default_rng(seed)
    splits = {}
    for name, kind, n in (("train", "train", 80), ("val", "val", 30), *SPLITS):
        labels = rng.integers(0, K, n) if kind in ("iid", "train", "val") else np.full(n, -1)
        logits = rng.normal(size=(n, K))
        if kind in ("iid", "train", "val"):
            logits[np.arange(n), labels] += rng.uniform(0, 3, n)
        logits[:5] = logits[0]  # ties across samples
        splits[name] = SplitOutputs(labels=labels.astype(np.int64), logits=logits, kind=kind)
    write_outputs(path, RunOutputs(splits, {"dataset": "toy", "method": "ce", "seed": seed}))
    return path


def test_pools_follow_the_study_roles():
    kinds = {name: kind for name, kind, _ in SPLITS}
    pools = unknown_detection_pools(kinds)
    assert pools == {
        UNKNOWN_STUDY: ("near_ood/a", "far_ood/b", "far_ood/c"),
        NEAR_OOD_STUDY: ("near_ood/a",),
        FAR_OOD_STUDY: ("far_ood/b", "far_ood/c"),
    }
    legacy = {"iid": "iid", "new_class/x": "new_class_semantic", "corruption/a/1": "corruption"}
    assert unknown_detection_pools(legacy) == {UNKNOWN_STUDY: ("new_class/x",)}
    assert unknown_detection_pools({"iid": "iid"}) == {}
    with pytest.raises(TypeError, match="kinds"):
        unknown_detection_pools(["iid"])


def test_pooled_set_keeps_every_sample_and_counts_ood_as_errors():
    labels = {"iid": np.array([0, 1, 1]), "o1": np.array([-1, -1]), "o2": np.array([-1])}
    predictions = {"iid": np.array([0, 0, 1]), "o1": np.array([0, 1]), "o2": np.array([1])}
    pools = {UNKNOWN_STUDY: ("o1", "o2")}
    es = build_evaluation_set(
        UNKNOWN_STUDY, labels, predictions, protocol=Protocol.UNKNOWN_DETECTION, pools=pools
    )
    assert [name for name, _ in es.parts] == ["iid", "o1", "o2"]
    np.testing.assert_array_equal(es.residuals, [0, 1, 0, 1, 1, 1])
    np.testing.assert_array_equal(es.is_new_class, [0, 0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match="needs splits"):
        build_evaluation_set("p", labels, predictions, pools={"p": ("missing",)})


def test_pooled_unknown_detection_aurc_matches_brute_force_on_the_store(tmp_path):
    store = make_store(tmp_path / "outputs.zarr")
    results = evaluate_run(read_outputs(store), protocol="unknown_detection")
    # independently: arrays straight from the store, the MSR by hand, errors by Kim's rule
    raw = read_outputs(store)
    names = [name for name, _, _ in SPLITS]
    logits = np.concatenate([np.asarray(raw.splits[n].logits) for n in names])
    labels = np.concatenate([np.asarray(raw.splits[n].labels) for n in names])
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    errors = ((labels == -1) | (logits.argmax(axis=1) != labels)).astype(float)
    expected = brute_force_aurc(errors, probs.max(axis=1))
    row = results[
        (results["study"] == UNKNOWN_STUDY)
        & (results["csf"] == "MSR")
        & (results["metric"] == "aurc")
    ]
    assert len(row) == 1
    assert row["value"].iloc[0] == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert row["n_samples"].iloc[0] == labels.size
    # the near/far views: OoD detection with the ID/OoD label, from the same arrays
    near = results[(results["study"] == NEAR_OOD_STUDY) & (results["csf"] == "MSR")]
    wide = near.set_index("metric")["value"]
    n_iid, n_near = SPLITS[0][2], SPLITS[1][2]
    conf = probs.max(axis=1)[: n_iid + n_near]
    ood = np.r_[np.zeros(n_iid), np.ones(n_near)]
    pairs = conf[ood == 0][:, None] - conf[ood == 1][None, :]
    auroc = ((pairs > 0) + 0.5 * (pairs == 0)).mean()
    assert wide["auroc_out"] == pytest.approx(auroc, rel=1e-12)
    assert 0 <= wide["fpr@95tpr_out"] <= 1


def test_failure_detection_protocol_has_no_pooled_studies(tmp_path):
    results = evaluate_run(read_outputs(make_store(tmp_path / "s.zarr")))
    assert not results["study"].isin([UNKNOWN_STUDY, NEAR_OOD_STUDY, FAR_OOD_STUDY]).any()
    assert not results["metric"].isin(["auroc_out", "fpr@95tpr_out"]).any()


def test_table_outputs_pool_every_new_class_split():
    import pandas as pd

    table = pd.DataFrame(
        {
            "study": ["iid"] * 4 + ["x"] * 2 + ["y"] * 2,
            "label": [0, 1, 0, 1, -1, -1, -1, -1],
            "prediction": [0, 1, 1, 1, 0, 1, 0, 0],
            "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.85, 0.3, 0.2],
        }
    )
    results = evaluate_table(table, protocol="unknown_detection")
    row = results[(results["study"] == UNKNOWN_STUDY) & (results["metric"] == "aurc")]
    errors = np.array([0, 0, 1, 0, 1, 1, 1, 1], dtype=float)
    expected = brute_force_aurc(errors, table["score"].to_numpy())
    assert row["value"].iloc[0] == pytest.approx(expected, rel=1e-12)


def test_table5_summary_means_stds_and_improvement(tmp_path):
    import pandas as pd

    tables = []
    for seed in (0, 1):
        run = read_outputs(make_store(tmp_path / f"s{seed}.zarr", seed))
        for protocol in Protocol:
            table = evaluate_run(run, protocol=protocol)
            tables.append(table.assign(protocol=protocol.value))
    results = pd.concat(tables, ignore_index=True)
    summary = unknown_detection_summary(results)
    aurc = summary[(summary["quantity"] == "aurc") & (summary["csf"] == "MSR")]
    per_seed = results[
        (results["study"] == UNKNOWN_STUDY)
        & (results["csf"] == "MSR")
        & (results["metric"] == "aurc")
        & (results["protocol"] == "unknown_detection")
    ]["value"]
    assert aurc["mean"].iloc[0] == pytest.approx(per_seed.mean() * 1000)
    assert aurc["std"].iloc[0] == pytest.approx(per_seed.std(ddof=1) * 1000)
    assert aurc["n_seeds"].iloc[0] == 2
    improvement = summary[summary["quantity"] == "improvement"].set_index("csf")["mean"]
    assert improvement["MSR"] == 0.0
    display = unknown_detection_display(summary)
    assert "AURC ×1000" in display.columns and "±" in display.iloc[0]["AURC ×1000"]
