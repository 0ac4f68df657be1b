"""``fdbench evaluate --operating-point``: the request, the declared calibration split, the rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.evaluation.operating_points import (
    OperatingPointRequest,
    parse_operating_point,
    run_conformal_sets,
    run_operating_points,
    table_operating_points,
)
from fdbench.outputs import RunOutputs, SplitOutputs


def test_parse():
    assert parse_operating_point("alpha=0.1,delta=0.05", seed=3) == OperatingPointRequest(
        0.1, 0.05, 0.3, 3
    )
    assert parse_operating_point("alpha=0.2, delta=0.1, calibration=val").calibration == "val"
    assert parse_operating_point("alpha=0.2,delta=0.1,calibration=0.5").calibration == 0.5
    for bad in (
        "alpha=0.1",
        "alpha=2,delta=0.1",
        "alpha=0.1,delta=0.1,x=1",
        "alpha=a,delta=0.1",
        "alpha=0.1,delta=0.1,calibration=1.5",
        "alpha=0.1,alpha=0.2,delta=0.1",
    ):
        with pytest.raises(ValueError, match="--operating-point"):
            parse_operating_point(bad)  # fmt: skip


def _table(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 3, size=n)
    wrong = rng.uniform(size=n) < 0.2
    prediction = np.where(wrong, (label + 1) % 3, label)
    msr = rng.uniform(size=n) - 0.3 * wrong
    return pd.DataFrame(
        {"label": label, "prediction": prediction, "MSR": msr, "study": "iid",
         "subgroup": rng.choice(["x", "y"], size=n)}
    )  # fmt: skip


def test_table_random_split_is_the_analysis_of_its_samples():
    table = _table()
    request = OperatingPointRequest(0.1, 0.1, 0.4, 7)
    rows = table_operating_points(table, request)
    r = (table["label"] != table["prediction"]).to_numpy(float)
    c = table["MSR"].to_numpy()
    cal = M.calibration_split(r.size, 0.4, 7)
    whole = rows[rows["group"] == ""]
    assert set(whole["procedure"]) == set(M.OPERATING_POINT_METHODS)
    assert set(rows["group"]) == {"", "x", "y"}
    for _, row in whole.iterrows():
        point = M.certify(r[cal], c[cal], 0.1, 0.1, row["procedure"])
        assert row["threshold"] == point.threshold
        assert row["coverage"] == pytest.approx((c[~cal] >= point.threshold).mean())
        assert row["csf"] == "MSR" and row["calibration"] == "random 0.4 (seed 7)"


def _run():
    rng = np.random.default_rng(1)

    def split(n, kind):
        labels = rng.integers(0, 3, size=n)
        logits = rng.normal(size=(n, 3)) + 2.5 * np.eye(3)[labels]
        return SplitOutputs(labels=labels, logits=logits, kind=kind)

    return RunOutputs(
        splits={"val": split(800, "val"), "iid": split(800, "iid")},
        meta={"classes": ["a", "b", "c"], "seed": 0, "method": "ce"},
    )


def test_run_calibrated_on_a_named_split():
    run = _run()
    rows = run_operating_points(run, OperatingPointRequest(0.1, 0.1, "val"))
    assert set(rows["calibration"]) == {"val"} and set(rows["study"]) == {"iid"}
    msr = rows[(rows["csf"] == "MSR") & (rows["procedure"] == "sgr")].iloc[0]
    probs = {s: np.exp(M.log_softmax(run.splits[s].logits)) for s in ("val", "iid")}
    r = {s: (p.argmax(1) != run.splits[s].labels).astype(float) for s, p in probs.items()}
    point = M.certify(r["val"], probs["val"].max(1), 0.1, 0.1, "sgr")
    assert msr["threshold"] == pytest.approx(point.threshold)
    with pytest.raises(ValueError, match="calibration split 'nope'"):
        run_operating_points(run, OperatingPointRequest(0.1, 0.1, "nope"))


def test_stored_groups_give_mondrian_rows(tmp_path):
    from fdbench.outputs import read_outputs, write_outputs

    run = _run()
    for split in run.splits.values():
        split.groups = np.arange(split.n_samples, dtype=np.int64) % 2
    write_outputs(tmp_path / "store", run)
    stored = read_outputs(tmp_path / "store")
    np.testing.assert_array_equal(stored.splits["iid"].groups, run.splits["iid"].groups)
    rows = run_operating_points(stored, OperatingPointRequest(0.1, 0.1, "val"))
    assert set(rows["group"]) == {"", "0", "1"}


def test_conformal_sets_beside_the_operating_points():
    run = _run()
    rows = run_conformal_sets(run, OperatingPointRequest(0.1, 0.1, "val"))
    assert list(rows["set_method"]) == ["lac", "aps", "raps"]
    probs = {s: np.exp(M.log_softmax(run.splits[s].logits)) for s in ("val", "iid")}
    sets = M.conformal_sets(probs["val"], run.splits["val"].labels, probs["iid"], 0.1)
    lac = rows.iloc[0]
    assert lac["coverage"] == M.set_coverage(sets, run.splits["iid"].labels)
    assert lac["mean_set_size"] == M.mean_set_size(sets)
    assert lac["study"] == "iid" and lac["calibration"] == "val"
