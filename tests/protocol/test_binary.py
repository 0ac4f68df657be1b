"""The binary protocol: validation-FPR threshold, predicted-class confidence, residuals, report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench.evaluation.runs import evaluate_run, prediction_groups
from fdbench.outputs import RunOutputs, SplitOutputs
from fdbench.protocol.binary import (
    fpr_threshold,
    predicted_class_probability,
    threshold_predictions,
)

# Validation: five negatives and five positives; only 0.4 >= t among the negatives at t = 0.4,
# so the threshold with FPR 20 % is 0.4 (hand-computed).
VAL_P1 = [0.1, 0.2, 0.3, 0.35, 0.4, 0.25, 0.6, 0.7, 0.8, 0.9]
VAL_Y = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
# Test: at 0.5 the predictions are [0,0,0,0,1,1] (failures [0,0,1,1,0,1]); at 0.4 they are
# [1,0,1,0,1,1] (failures [1,0,0,1,0,1]).
TEST_P1 = [0.45, 0.2, 0.42, 0.3, 0.9, 0.55]
TEST_Y = [0, 0, 1, 1, 1, 0]


def _logits(p1: list[float]) -> np.ndarray:
    p = np.asarray(p1, dtype=np.float64)
    return np.stack([np.zeros_like(p), np.log(p / (1 - p))], axis=1)


def _run() -> RunOutputs:
    return RunOutputs(
        splits={
            "val": SplitOutputs(np.array(VAL_Y, dtype=np.int64), _logits(VAL_P1), kind="val"),
            "iid": SplitOutputs(np.array(TEST_Y, dtype=np.int64), _logits(TEST_P1)),
        },
        meta={"dataset": "toy", "method": "ce", "seed": 0},
    )


def test_fpr_threshold_hand_computed() -> None:
    assert fpr_threshold(VAL_P1, VAL_Y, 0.2) == pytest.approx(0.4)
    assert fpr_threshold(VAL_P1, VAL_Y, 0.0) == np.inf
    assert fpr_threshold(VAL_P1, VAL_Y, 1.0) == pytest.approx(0.1)


def test_fpr_threshold_ties_choose_lower_fpr() -> None:
    # Negatives 0.2, 0.4, 0.6, 0.8: FPR 0.25 at t=0.8 and 0.5 at t=0.6; target 0.375 lies
    # midway, so the larger threshold (lower FPR) wins.
    scores = [0.2, 0.4, 0.6, 0.8, 0.9]
    assert fpr_threshold(scores, [0, 0, 0, 0, 1], 0.375) == pytest.approx(0.8)


def test_fpr_threshold_equal_scores_share_a_prediction() -> None:
    scores = [0.5, 0.5, 0.5, 0.5, 0.9]
    t = fpr_threshold(scores, [0, 0, 0, 0, 1], 0.2)
    pred = threshold_predictions(scores, t)
    assert len(set(pred[:4].tolist())) == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 1)), min_size=2, max_size=25),
    st.floats(0.0, 1.0),
)
def test_fpr_threshold_brute_force(pairs: list[tuple[int, int]], target: float) -> None:
    scores = np.array([p[0] / 6 for p in pairs])
    labels = np.array([p[1] for p in pairs])
    if labels.min() == labels.max():
        return
    neg = scores[labels == 0]
    best, best_gap = None, np.inf
    for t in [*sorted(set(scores.tolist())), np.inf]:
        gap = abs(np.mean(neg >= t) - target)
        if gap <= best_gap:
            best, best_gap = t, gap
    assert fpr_threshold(scores, labels, target) == best


@pytest.mark.parametrize(
    ("scores", "labels", "fpr", "match"),
    [
        ([0.1, 0.2], [0, 2], 0.2, "0 or 1"),
        ([0.1, 0.2], [1, 1], 0.2, "both classes"),
        ([0.1, 0.2], [0, 1], 1.5, "fpr"),
        ([0.1, np.nan], [0, 1], 0.2, "finite"),
        ([0.1, 0.2], [0], 0.2, "shape"),
    ],
)
def test_fpr_threshold_rejects_bad_input(scores, labels, fpr, match) -> None:
    with pytest.raises(ValueError, match=match):
        fpr_threshold(scores, labels, fpr)


def test_predicted_class_probability() -> None:
    probs = np.array([[0.55, 0.45], [0.2, 0.8]])
    np.testing.assert_allclose(predicted_class_probability(probs, [1, 0]), [0.45, 0.2])
    with pytest.raises(ValueError, match="class indices"):
        predicted_class_probability(probs, [2, 0])


def test_groups_follow_the_threshold() -> None:
    (group,) = prediction_groups([_run()], ["iid"], binary_fpr=0.2)
    assert group.threshold == pytest.approx(0.4)
    np.testing.assert_array_equal(group.predictions["iid"], [1, 0, 1, 0, 1, 1])
    np.testing.assert_allclose(
        group.confidences["iid"]["MSR"], [0.45, 0.8, 0.42, 0.7, 0.9, 0.55], rtol=1e-12
    )
    assert "PE" not in group.confidences["iid"]
    assert "DOCTOR" in group.confidences["iid"]
    (default,) = prediction_groups([_run()], ["iid"])
    np.testing.assert_array_equal(default.predictions["iid"], [0, 0, 0, 0, 1, 1])
    assert default.threshold is None


def test_evaluate_run_binary_protocol_hand_computed() -> None:
    table = evaluate_run(_run(), binary_fpr=0.2)
    msr = table[table["csf"] == "MSR"].set_index("metric")["value"]
    # Failures [1,0,0,1,0,1]; confidences of successes 0.8, 0.42, 0.9 against failures
    # 0.45, 0.7, 0.55: 6 of 9 pairs ordered correctly.
    assert msr["accuracy"] == pytest.approx(0.5)
    assert msr["auroc_f"] == pytest.approx(6 / 9)
    # Recall 1/3 on class 0 and 2/3 on class 1; ROC-AUC of p_1: 5 of 9 pairs.
    assert msr["balanced_accuracy"] == pytest.approx(0.5)
    assert msr["roc_auc"] == pytest.approx(5 / 9)
    default = evaluate_run(_run())
    base = default[default["csf"] == "MSR"].set_index("metric")["value"]
    # At 0.5: failures [0,0,1,1,0,1], MSR [0.55,0.8,0.58,0.7,0.9,0.55]: successes 0.55, 0.8,
    # 0.9 against failures 0.58, 0.7, 0.55: 0.5 + 3 + 3 = 6.5 of 9.
    assert base["accuracy"] == pytest.approx(0.5)
    assert base["auroc_f"] == pytest.approx(6.5 / 9)
    assert "roc_auc" not in set(default["metric"])
    assert "PE" in set(default["csf"]) and "PE" not in set(table["csf"])


def test_binary_protocol_needs_two_classes_and_val() -> None:
    run = _run()
    three = RunOutputs(
        splits={
            name: SplitOutputs(s.labels, np.hstack([s.logits, s.logits[:, :1]]), kind=s.kind)
            for name, s in run.splits.items()
        }
    )
    with pytest.raises(ValueError, match="two-class"):
        prediction_groups([three], ["iid"], binary_fpr=0.2)
    no_val = RunOutputs(splits={"iid": run.splits["iid"]})
    with pytest.raises(ValueError, match="'val' split"):
        prediction_groups([no_val], ["iid"], binary_fpr=0.2)


def test_ensemble_uses_its_own_threshold() -> None:
    a, b = _run(), _run()
    shift = np.array([0.0, 0.3])
    for s in b.splits.values():
        s.logits = s.logits + shift
    (group,) = prediction_groups([a, b], ["iid"], binary_fpr=0.2)
    val_p1 = np.exp(prediction_groups([a, b], ["val"], binary_fpr=0.2)[0].logits["val"])[:, 1]
    assert group.threshold == fpr_threshold(val_p1, VAL_Y, 0.2)
    test_p1 = np.exp(group.logits["iid"])[:, 1]
    np.testing.assert_array_equal(group.predictions["iid"], test_p1 >= group.threshold)


def test_benchmark_evaluation_applies_the_protocol_to_two_class_runs_only(tmp_path) -> None:
    from fdbench.jobs.benchmark import evaluate_runs
    from fdbench.outputs import write_outputs

    run = _run()
    run.meta["method"] = "ce"
    write_outputs(tmp_path / "binary.zarr", run)
    table = pd.read_parquet(
        evaluate_runs([tmp_path / "binary.zarr"], tmp_path / "eval", binary_fpr=0.2)
    )
    msr = table[(table["csf"] == "MSR") & (table["study"] == "iid")].set_index("metric")
    assert msr.loc["auroc_f", "value"] == pytest.approx(6 / 9)
    assert msr.loc["roc_auc", "value"] == pytest.approx(5 / 9)
    three = RunOutputs(
        splits={
            name: SplitOutputs(s.labels, np.hstack([s.logits, s.logits[:, :1] - 5]), kind=s.kind)
            for name, s in run.splits.items()
        },
        meta=run.meta,
    )
    write_outputs(tmp_path / "three.zarr", three)
    multi = pd.read_parquet(
        evaluate_runs([tmp_path / "three.zarr"], tmp_path / "eval3", binary_fpr=0.2)
    )
    assert "roc_auc" not in set(multi["metric"]) and "PE" in set(multi["csf"])
