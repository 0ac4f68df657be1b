"""The ``roc_curve`` threshold rule of Bernhardt et al.'s code as a named option of the binary
protocol: the threshold from scikit-learn's ``roc_curve`` points, predictions ``p_1 > t``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench.config.schema import BinaryProtocolConfig
from fdbench.evaluation.runs import prediction_groups
from fdbench.outputs import RunOutputs, SplitOutputs
from fdbench.protocol.binary import fpr_threshold, fpr_threshold_roc_curve

from .test_binary import _logits

# roc_curve drops the collinear points (FPR 0.2 ... 0.8 at TPR 1): the nearest kept FPR to
# 0.2 is 0 (threshold +inf); the exact rule takes 0.8 (FPR 0.2).
VAL_P1 = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
VAL_Y = [1, 0, 0, 0, 0, 0]
TEST_P1 = [0.95, 0.85, 0.8, 0.3]
TEST_Y = [1, 1, 0, 0]


def _run() -> RunOutputs:
    return RunOutputs(
        splits={
            "val": SplitOutputs(np.array(VAL_Y, dtype=np.int64), _logits(VAL_P1), kind="val"),
            "iid": SplitOutputs(np.array(TEST_Y, dtype=np.int64), _logits(TEST_P1)),
        },
        meta={"dataset": "toy", "method": "ce", "seed": 0},
    )


def test_groups_follow_the_rule() -> None:
    (exact,) = prediction_groups([_run()], ["iid"], binary_fpr=0.2)
    assert exact.threshold == pytest.approx(0.8)
    np.testing.assert_array_equal(exact.predictions["iid"], [1, 1, 1, 0])
    (authors,) = prediction_groups([_run()], ["iid"], binary_fpr=0.2, threshold_rule="roc_curve")
    assert authors.threshold == np.inf
    np.testing.assert_array_equal(authors.predictions["iid"], [0, 0, 0, 0])
    with pytest.raises(ValueError, match="threshold_rule"):
        prediction_groups([_run()], ["iid"], binary_fpr=0.2, threshold_rule="sklearn")


def test_config_option_keeps_the_default_digest() -> None:
    assert BinaryProtocolConfig().model_dump() == {"fpr": 0.2}
    rule = BinaryProtocolConfig(threshold_rule="roc_curve")
    assert rule.model_dump() == {"fpr": 0.2, "threshold_rule": "roc_curve"}
    with pytest.raises(ValueError):
        BinaryProtocolConfig(threshold_rule="nearest")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 1)), min_size=2, max_size=20),
    st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0]),
)
def test_roc_curve_rule_against_brute_force(pairs, target) -> None:
    """Brute force: the ROC points per distinct score, keep a point iff it is not collinear
    with its neighbours (first and last kept), prepend (0, 0) at +inf, first nearest FPR."""
    scores = np.array([p[0] / 6 for p in pairs])
    labels = np.array([p[1] for p in pairs])
    if labels.min() == labels.max():
        return
    taus = sorted(set(scores.tolist()), reverse=True)
    pts = [
        (int(((scores >= t) & (labels == 0)).sum()), int(((scores >= t) & (labels == 1)).sum()), t)
        for t in taus
    ]
    if len(pts) > 2:
        pts = [
            p
            for k, p in enumerate(pts)
            if k in (0, len(pts) - 1)
            or pts[k + 1][0] - 2 * p[0] + pts[k - 1][0] != 0
            or pts[k + 1][1] - 2 * p[1] + pts[k - 1][1] != 0
        ]
    pts = [(0, 0, np.inf), *pts]
    n_neg = (labels == 0).sum()
    gaps = [abs(fp / n_neg - target) for fp, _, _ in pts]
    expected = pts[gaps.index(min(gaps))][2]
    assert fpr_threshold_roc_curve(scores, labels, target) == expected
    # the default rule is never farther from the target
    exact = fpr_threshold(scores, labels, target)
    exact_fpr = ((scores >= exact) & (labels == 0)).sum() / n_neg
    assert abs(exact_fpr - target) <= min(gaps) + 1e-12


def test_benchmark_evaluation_takes_the_rule_and_conventions(tmp_path) -> None:
    import pandas as pd

    from fdbench import metrics as M
    from fdbench.config import BenchmarkConfig
    from fdbench.jobs.benchmark import evaluate_runs
    from fdbench.outputs import write_outputs

    run = _run()
    write_outputs(tmp_path / "b.zarr", run)
    table = pd.read_parquet(
        evaluate_runs(
            [tmp_path / "b.zarr"],
            tmp_path / "eval",
            binary_fpr=0.2,
            threshold_rule="roc_curve",
            conventions=("aurc_per_sample",),
        )
    )
    msr = table[(table["csf"] == "MSR") & (table["study"] == "iid")].set_index("metric")
    # nothing is predicted positive at +inf: the failures are the positive samples
    residuals = np.array(TEST_Y, dtype=float)
    confidence = 1 - np.array(TEST_P1)
    assert msr.loc["aurc", "value"] == pytest.approx(M.aurc(residuals, confidence))
    assert msr.loc["aurc_per_sample", "value"] == pytest.approx(
        M.aurc_per_sample(residuals, confidence)
    )
    field = BenchmarkConfig.model_fields["conventions"].annotation
    assert set(field.__args__[0].__args__) == set(M.CONVENTION_KEYS + M.OOD_CONVENTION_KEYS)


def test_cli_threshold_rule(tmp_path) -> None:
    import pandas as pd

    from fdbench import metrics as M
    from tests._cli import run_cli

    path = tmp_path / "binary.npz"
    np.savez(
        path,
        logits=np.vstack([_logits(VAL_P1), _logits(TEST_P1)]),
        labels=np.array(VAL_Y + TEST_Y),
        study=np.array(["val"] * len(VAL_Y) + ["iid"] * len(TEST_Y)),
    )
    out = tmp_path / "r.csv"
    args = ("evaluate", str(path), "--binary-fpr", "0.2", "-o", str(out))
    done = run_cli(*args, "--threshold-rule", "roc_curve")
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(out)
    msr = table[(table["csf"] == "MSR") & (table["study"] == "iid")].set_index("metric")
    residuals = np.array(TEST_Y, dtype=float)  # nothing predicted positive at +inf
    assert msr.loc["aurc", "value"] == pytest.approx(M.aurc(residuals, 1 - np.array(TEST_P1)))
    bad = run_cli(*args, "--threshold-rule", "nearest")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--threshold-rule" in bad.stderr
