"""Plug-ins installed through entry points run through ``fdbench benchmark`` like built-ins.

A throwaway distribution (a module and a ``dist-info`` folder with ``entry_points.txt``, the way
pip leaves an installed package) registers a CSF, a metric and a training method. One tiny
benchmark with that method shows each of them in the results, the leaderboard, the study
tables and the report, the CSF with its declared calibration treatment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")
pytest.importorskip("lightning")

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = """
import numpy as np

from fdbench.csf import register_csf
from fdbench.metrics import register_metric
from fdbench.training.methods import EndToEndParams, TrainingMethod


@register_csf("PlugMargin", needs="logits", calibration="none", colour="#117733")
def margin(run, split):
    z = np.sort(run.splits[split].logits, axis=1)
    return z[:, -1] - z[:, -2]


@register_metric("risk@50cov", label="Risk@50", higher_is_better=False, scale=1000.0)
def risk_at_half(residuals, confidence, sample_weight=None):
    order = np.argsort(-confidence, kind="stable")
    return float(residuals[order[: max(1, len(order) // 2)]].mean())


class PlugCE(TrainingMethod):
    name = "plug_ce"
    display_prefix = "PLUG"
    params_model = EndToEndParams

    def training_step(self, module, batch, batch_idx):
        import torch.nn.functional as F

        x, y = batch
        return F.cross_entropy(module.network(x), y)
"""

ENTRY_POINTS = """[fdbench.csfs]
PlugMargin = fdplugins:margin

[fdbench.metrics]
risk50 = fdplugins:risk_at_half

[fdbench.methods]
plug_ce = fdplugins:PlugCE
"""

CONFIG = {
    "name": "plugins",
    "data": {"builder": "fashion_mnist_experiments", "args": {"seed": 0, "tiny": True}},
    "architecture": {"name": "convnet", "options": {"width": 8, "feature_dim": 16}},
    "training": {"epochs": 1, "batch_size": 128, "threads": 1, "augment": False},
    "inference": {"batch_size": 256, "max_train_samples": 300},
    "methods": [{"name": "plug", "kind": "plug_ce", "seeds": [0], "params": {"epochs": 1}}],
    "analysis": {"n_bootstrap": 20},
}


def install(site: Path, module: str, source: str, entry_points: str) -> None:
    """Install ``source`` as module ``module`` the way pip leaves a distribution: the module
    and a ``dist-info`` folder whose ``entry_points.txt`` is ``entry_points``."""
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


def fdbench(site: Path, *args: str, code: str | None = None) -> subprocess.CompletedProcess:
    """``python -m fdbench ARGS`` (or ``python -c CODE``) with ``site`` on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(site)])}
    env["COLUMNS"] = "200"
    env.pop("FDBENCH_DEBUG", None)
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "fdbench", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=2400)


@pytest.fixture(scope="module")
def benchmark_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plugins")
    site = tmp / "site"
    site.mkdir()
    install(site, "fdplugins", PLUGIN, ENTRY_POINTS)
    config = tmp / "plugins.json"
    config.write_text(json.dumps(CONFIG))
    run_dir = tmp / "run"
    result = fdbench(site, "benchmark", str(config), "--out", str(run_dir))
    assert result.returncode == 0, result.stderr[-3000:]
    return site, run_dir


def test_plugins_are_in_the_results(benchmark_run):
    _, run_dir = benchmark_run
    results = pd.read_parquet(run_dir / "results.parquet")
    assert set(results["method"]) == {"plug"}
    assert "PlugMargin" in set(results["csf"])
    assert "risk@50cov" in set(results["metric"])
    rows = results[(results["csf"] == "PlugMargin") & (results["metric"] == "risk@50cov")]
    assert len(rows) > 0 and rows["value"].between(0, 1).all()
    assert np.isfinite(rows["value"]).all()


def test_plugins_are_in_the_leaderboard_and_study_tables(benchmark_run):
    _, run_dir = benchmark_run
    board = pd.read_csv(run_dir / "leaderboard.csv")
    # the method's display prefix names its scoring methods
    assert {"PLUG-PlugMargin", "PLUG-MSR"} <= set(board["scoring_method"])
    html = (run_dir / "report.html").read_text()
    assert "PLUG-PlugMargin" in html and "PlugMargin" in html
    study_tables = sorted((run_dir / "tables").glob("study*.csv"))
    assert study_tables, sorted(p.name for p in (run_dir / "tables").iterdir())
    assert any("PLUG-PlugMargin" in p.read_text() for p in study_tables)


def test_plugin_csf_keeps_its_calibration_treatment(benchmark_run):
    _, run_dir = benchmark_run
    reliability = pd.read_parquet(run_dir / "reliability.parquet")
    treatment = reliability.groupby("csf")["treatment"].first()
    assert treatment["PlugMargin"] == "none"
    assert treatment["MLS"] == "platt" and treatment["MSR"] == "none"


def test_plugin_metric_in_evaluate_and_report(benchmark_run, tmp_path):
    site, _ = benchmark_run
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, 200)
    logits = rng.normal(size=(200, 3)) + 2 * np.eye(3)[labels]
    np.savez(tmp_path / "o.npz", logits=logits, labels=labels)
    out = tmp_path / "eval"
    out.mkdir()
    result = fdbench(site, "evaluate", str(tmp_path / "o.npz"), "--out", str(out / "results.csv"))
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out / "results.csv")
    row = table[(table["csf"] == "MSR") & (table["metric"] == "risk@50cov")]
    residuals = (logits.argmax(1) != labels).astype(float)
    z = np.exp(logits - logits.max(1, keepdims=True))
    msr = z.max(1) / z.sum(1)
    order = np.argsort(-msr, kind="stable")
    assert row["value"].item() == pytest.approx(residuals[order[:100]].mean(), abs=1e-12)
    # directions come from the spec: rankings, significance, best cells
    check = fdbench(site, code=(
        "from fdbench.analysis import higher_is_better\n"
        "from fdbench.metrics import metric_spec\n"
        "print(higher_is_better('risk@50cov'), metric_spec('risk@50cov').heading())\n"
    ))  # fmt: skip
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == "False Risk@50 ×1000"
