"""examples/bring_your_own runs end to end: a user's network on a user's folder dataset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench.jobs.plan import load_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "bring_your_own"

pytest.importorskip("torch", reason="training needs the 'train' extra")


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """``python examples/bring_your_own/run.py OUT`` as a user runs it (one run per module)."""
    out = tmp_path_factory.mktemp("byo")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py"), str(out)],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stdout


def test_example_config_parses_as_shipped():
    config = load_config(EXAMPLE / "config.yaml")
    assert config.architecture.factory == "mynets:make"
    assert config.architecture.classifier == "fc"
    assert config.data.builder == "folder_experiments"


def test_example_trains_evaluates_and_reports(example_run):
    out, stdout = example_run
    data = out / "data" / "digits_folder"
    assert sorted(p.name for p in (data / "train").iterdir()) == [str(d) for d in range(6)]
    results = pd.read_parquet(out / "run" / "results.parquet")
    assert set(results["study"]) >= {"iid", "corruption/noise", "new_class/digits_6_9"}
    assert set(results["method"]) == {"ce_dropout", "devries"}
    # the user's network trained: the digits are easy, so the iid accuracy is high
    acc = results[(results.study == "iid") & (results.metric == "accuracy")
                  & (results.protocol == "failure_detection")]  # fmt: skip
    assert acc["value"].min() > 0.8
    csfs = set(results[results.method == "devries"]["csf"])
    assert {"MSR", "DeVries", "Mahalanobis", "ViM"} <= csfs
    assert {"MCD-MSR", "MCD-PE"} <= set(results[results.method == "ce_dropout"]["csf"])
    assert (out / "run" / "report.html").stat().st_size > 0
    assert "AUGRC on the iid study" in stdout and "DeVries" in stdout


def test_stored_outputs_name_the_network_and_hold_every_study(example_run):
    from fdbench.outputs import read_outputs

    out, _ = example_run
    stores = sorted((out / "run").rglob("zarr.json"))
    tops = [p.parent for p in stores if json.loads(p.read_text()).get("attributes", {})
            .get("fdbench_outputs")]  # fmt: skip
    assert tops
    run = read_outputs(tops[0])
    assert run.meta["model"] == "mynets:make"
    new = run.splits["new_class/digits_6_9"]
    assert new.kind == "new_class_semantic" and (np.asarray(new.labels) == -1).all()
    assert run.splits["corruption/noise"].kind == "corruption"
