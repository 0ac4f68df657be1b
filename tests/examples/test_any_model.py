"""examples/any_model run end to end (outputs -> fdbench evaluate -> fdbench report) with
PyTorch blocked: a tabular classifier, a regression model, a generated language-model table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "any_model"

pytestmark = pytest.mark.slow


def _run(name: str, tmp_path_factory) -> Path:
    """``python examples/any_model/NAME.py OUT`` with an importable ``torch`` that refuses to
    load, so that nothing of the path needs PyTorch."""
    blocked = tmp_path_factory.mktemp("no_torch")
    (blocked / "torch").mkdir()
    (blocked / "torch" / "__init__.py").write_text('raise ImportError("PyTorch is blocked")\n')
    out = tmp_path_factory.mktemp(name)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocked), str(ROOT / "src")])}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), str(out)],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert (out / "run" / "report.html").stat().st_size > 0
    return out


@pytest.fixture(scope="module")
def tabular(tmp_path_factory):
    return _run("tabular_classifier", tmp_path_factory)


@pytest.fixture(scope="module")
def regression(tmp_path_factory):
    return _run("regression", tmp_path_factory)


@pytest.fixture(scope="module")
def language_model(tmp_path_factory):
    return _run("language_model_table", tmp_path_factory)


def _value(results: pd.DataFrame, method: str, csf: str, study: str, metric: str) -> float:
    methods = results["method"].astype(object).where(results["method"].notna(), "")
    mine = results[
        (methods == method)
        & (results["csf"] == csf)
        & (results["study"] == study)
        & (results["metric"] == metric)
    ]
    assert len(mine) == 1
    return float(mine["value"].iloc[0])


def test_tabular_classifier(tabular):
    outputs = pd.read_csv(tabular / "breast_cancer_outputs.csv")
    results = pd.read_csv(tabular / "run" / "results.csv")
    assert set(results["method"]) == {"logistic_regression", "random_forest"}
    assert set(results["csf"]) == {"MSR", "PE", "DOCTOR"}
    forest = outputs[outputs["model"] == "random_forest"]
    expected = M.augrc(1.0 - forest["correct"], forest["MSR"])
    assert _value(results, "random_forest", "MSR", "iid", "augrc") == expected
    assert {"auroc_f", "ci_lower", "ci_upper"} <= {*results["metric"], *results.columns}
    points = pd.read_csv(tabular / "run" / "operating_points.csv")
    assert set(points["method"]) == {"logistic_regression", "random_forest"}
    deltas = pd.read_csv(tabular / "run" / "paired_deltas.csv")
    assert set(deltas["metric"]) == {"augrc", "aurc", "auroc_f"}
    assert len(deltas[deltas["study"] == "all studies"]) == 3 * 6 * 5


def test_regression(regression):
    outputs = pd.read_parquet(regression / "diabetes_outputs.parquet")
    results = pd.read_csv(regression / "run" / "results.csv")
    assert set(results["csf"]) == {"ensemble_agreement", "closeness"}
    residual = outputs["residual"].to_numpy()
    assert residual.max() > 1  # |y - y_hat| in the target's units
    for csf in ("ensemble_agreement", "closeness"):
        assert _value(results, "", csf, "iid", "augrc") == M.augrc(residual, outputs[csf])
        assert _value(results, "", csf, "iid", "mean_residual") == pytest.approx(residual.mean())
    # AUROC_f needs 0/1 residuals: undefined for a continuous loss
    assert results[results["metric"] == "auroc_f"]["value"].isna().all()


def test_language_model_table(language_model):
    results = pd.read_csv(language_model / "run" / "results.csv")
    assert set(results["study"]) == {"in_domain", "out_of_domain"}
    assert results["method"].nunique() == 3 and results["csf"].nunique() == 3
    deltas = pd.read_csv(language_model / "run" / "paired_deltas.csv")
    overall = deltas[(deltas["study"] == "all studies") & (deltas["metric"] == "augrc")]
    assert len(overall) == 9 * 8
    assert np.isfinite(overall[["lower", "upper"]].to_numpy()).all()
    # across models: the large model's sampling consistency beats the small model's
    row = overall[
        (overall["scoring_method"] == "generated-large-sampling_consistency")
        & (overall["reference"] == "generated-small-sampling_consistency")
    ]
    assert float(row["upper"].iloc[0]) < 0
    page = (language_model / "run" / "report.html").read_text(encoding="utf-8")
    assert "Leaderboard" in page and "generated-large-verbalised" in page
