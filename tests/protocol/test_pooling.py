"""Tests of the corruption studies pooled per intensity (FD-Shifts' one set per level)."""

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.evaluation.confidences import default_studies, evaluate_confidences, splits_of
from fdbench.protocol import (
    Protocol,
    build_evaluation_set,
    corruption_pools,
    pooled_corruption_study,
    study_splits,
)

SPLITS = [
    "train",
    "val",
    "iid",
    "corruption/fog/1",
    "corruption/fog/2",
    "corruption/noise/1",
    "corruption/noise/2",
    "new_class/svhn",
]


def test_pools_group_the_per_type_splits_by_severity():
    assert corruption_pools(SPLITS) == {
        "corruption/1": ("corruption/fog/1", "corruption/noise/1"),
        "corruption/2": ("corruption/fog/2", "corruption/noise/2"),
    }
    assert corruption_pools(["iid", "corruption/3", "corruption/a/b"]) == {}
    # severities in numeric order, not string order
    assert list(corruption_pools(["corruption/x/10", "corruption/x/2"])) == [
        "corruption/2",
        "corruption/10",
    ]


def test_default_studies_append_the_pools_after_the_splits():
    assert default_studies(SPLITS) == [*SPLITS[2:], "corruption/1", "corruption/2"]
    # a split that already carries a pooled name is used as it is and not pooled again
    assert default_studies(["corruption/1", "corruption/a/1"]) == ["corruption/1", "corruption/a/1"]
    assert study_splits("corruption/1", ["corruption/1", "corruption/a/1"]) == ("corruption/1",)
    assert splits_of(["iid", "corruption/2"], SPLITS) == [
        "iid",
        "corruption/fog/2",
        "corruption/noise/2",
    ]


def test_unknown_study_and_bad_severity_are_rejected():
    with pytest.raises(ValueError, match=r"'corruption/3' not found.*pooled studies"):
        study_splits("corruption/3", SPLITS)
    with pytest.raises(ValueError, match="not found"):
        build_evaluation_set("corruption/3", {"iid": np.zeros(2)}, {"iid": np.zeros(2)})
    with pytest.raises(ValueError, match="severity"):
        pooled_corruption_study("high")
    assert pooled_corruption_study(5) == "corruption/5"


# Two corruption types at severity 1, two samples each. Selective risk over coverage, sorted by
# descending confidence, with the extra point at coverage 0 repeating the first risk:
#   fog:   residuals [0, 1] -> (0, 0), (1/2, 0), (1, 1/2): AURC = 1/2 · (0 + 1/2)/2       = 1/8
#   noise: residuals [1, 0] -> (0, 1), (1/2, 1), (1, 1/2): AURC = 1/2 · 1 + 1/2 · 3/4     = 7/8
#   mean of the per-type AURCs: 1/2.
#   pool (every fog sample more confident than every noise sample): residuals [0, 1, 1, 0],
#   risks 0, 1/2, 2/3, 1/2 at coverages 1/4, 1/2, 3/4, 1 (and 0 at coverage 0):
#   AURC = 1/4 · (0 + 1/4 + 7/12 + 7/12) = 17/48 ≈ 0.354.
HAND_LABELS = {
    "iid": np.array([0, 1]),
    "corruption/fog/1": np.array([0, 0]),
    "corruption/noise/1": np.array([1, 1]),
}
HAND_PREDS = {
    "iid": np.array([0, 1]),
    "corruption/fog/1": np.array([0, 1]),
    "corruption/noise/1": np.array([0, 1]),
}
HAND_CONF = {
    "iid": {"c": np.array([0.5, 0.4])},
    "corruption/fog/1": {"c": np.array([0.9, 0.8])},
    "corruption/noise/1": {"c": np.array([0.3, 0.2])},
}


@pytest.mark.parametrize("protocol", list(Protocol))
def test_pooled_aurc_is_not_the_mean_of_per_type_aurcs(protocol):
    table = evaluate_confidences(HAND_LABELS, HAND_PREDS, HAND_CONF, protocol=protocol)
    aurc = table[table.metric == "aurc"].set_index("study")["value"]
    assert aurc["corruption/fog/1"] == pytest.approx(1 / 8, abs=1e-15)
    assert aurc["corruption/noise/1"] == pytest.approx(7 / 8, abs=1e-15)
    assert aurc["corruption/1"] == pytest.approx(17 / 48, abs=1e-15)
    assert aurc["corruption/1"] != pytest.approx((1 / 8 + 7 / 8) / 2)
    n = table[table.metric == "aurc"].set_index("study")["n_samples"]
    assert n["corruption/1"] == 4


def test_pooled_evaluation_set_concatenates_the_per_type_splits_in_order():
    es = build_evaluation_set("corruption/1", HAND_LABELS, HAND_PREDS)
    assert [name for name, _ in es.parts] == ["corruption/fog/1", "corruption/noise/1"]
    np.testing.assert_array_equal(es.residuals, [0, 1, 1, 0])
    np.testing.assert_array_equal(
        es.gather({s: c["c"] for s, c in HAND_CONF.items()}), [0.9, 0.8, 0.3, 0.2]
    )


def _random_outputs(seed: int = 0, k: int = 4):
    rng = np.random.default_rng(seed)
    labels, preds, logits, conf = {}, {}, {}, {}
    sizes = {
        "iid": 60,
        "corruption/fog/1": 40,
        "corruption/noise/1": 50,
        "corruption/blur/1": 30,
        "corruption/fog/2": 40,
        "corruption/noise/2": 50,
    }
    for name, n in sizes.items():
        y = rng.integers(0, k, n)
        z = rng.normal(size=(n, k)) + 2.0 * np.eye(k)[y] * rng.random((n, 1))
        labels[name], logits[name], preds[name] = y, z, z.argmax(axis=1)
        conf[name] = {"MSR": np.exp(M.log_softmax(z)).max(axis=1), "noise": rng.normal(size=n)}
    return labels, preds, logits, conf


def test_pooled_metrics_equal_evaluate_all_on_the_concatenated_arrays():
    labels, preds, logits, conf = _random_outputs()
    table = evaluate_confidences(labels, preds, conf, logits=logits)
    assert list(dict.fromkeys(table.study))[-2:] == ["corruption/1", "corruption/2"]
    members = ["corruption/fog/1", "corruption/noise/1", "corruption/blur/1"]
    y = np.concatenate([labels[s] for s in members])
    z = np.concatenate([logits[s] for s in members])
    residuals = (z.argmax(axis=1) != y).astype(np.float64)
    for csf in ("MSR", "noise"):
        c = np.concatenate([conf[s][csf] for s in members])
        expected = pd.Series(M.evaluate_all(residuals, c, labels=y, logits=z))
        rows = table[(table.study == "corruption/1") & (table.csf == csf)]
        got = rows.set_index("metric")["value"]
        pd.testing.assert_series_equal(got.loc[expected.index], expected, check_names=False)
        assert (rows.n_samples == 120).all()
    # the per-type rows are those of evaluating the per-type studies alone
    alone = evaluate_confidences(labels, preds, conf, logits=logits, studies=members)
    pd.testing.assert_frame_equal(table[table.study.isin(members)].reset_index(drop=True), alone)


def test_pooled_bootstrap_intervals_come_from_the_pool():
    labels, preds, _, conf = _random_outputs(seed=1)
    table = evaluate_confidences(
        labels, preds, conf, studies=["corruption/2"], n_bootstrap=30, seed=3
    )
    members = ["corruption/fog/2", "corruption/noise/2"]
    y = np.concatenate([labels[s] for s in members])
    p = np.concatenate([preds[s] for s in members])
    c = np.concatenate([conf[s]["MSR"] for s in members])
    draws = M.bootstrap((p != y).astype(float), c, metrics=["aurc"], n_resamples=30, seed=3)
    summary = M.bootstrap_summary(draws)
    row = table[(table.csf == "MSR") & (table.metric == "aurc")]
    assert row["ci_lower"].item() == pytest.approx(summary.loc["aurc", "lower"], abs=1e-15)
    assert row["ci_upper"].item() == pytest.approx(summary.loc["aurc", "upper"], abs=1e-15)
