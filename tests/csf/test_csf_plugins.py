"""Plug-in CSFs: the ``register_csf`` decorator and the ``fdbench.csfs`` entry points."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from fdbench.csf import available_csfs, compute_csfs, csf_specs, register_csf
from fdbench.csf import specs as csf_spec_list
from fdbench.outputs import RunOutputs, SplitOutputs

from .._cli import ROOT


@pytest.fixture
def clean_plugins(monkeypatch):
    """The list of CSFs as it is before any plug-in registers (restored after the test)."""
    monkeypatch.setattr(csf_spec_list, "_SPECS", dict(csf_spec_list._SPECS))
    monkeypatch.setattr(csf_spec_list, "_ENTRY_POINTS_LOADED", True)


def _run(n=20, k=3, features=False):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, k, n)
    feats = rng.normal(size=(n, 2)) if features else None
    split = SplitOutputs(labels=labels, logits=rng.normal(size=(n, k)), features=feats, kind="iid")
    return RunOutputs(splits={"iid": split}, meta={})


def test_decorated_csf_is_computed_after_the_built_ins(clean_plugins):
    @register_csf("Margin", needs="logits")
    def margin(run, split):
        z = np.sort(run.splits[split].logits, axis=1)
        return z[:, -1] - z[:, -2]

    run = _run()
    csfs = compute_csfs(run, "iid")
    assert list(csfs)[-1] == "Margin" and list(csfs)[:5] == ["MSR", "MLS", "PE", "energy", "DOCTOR"]
    z = np.sort(run.splits["iid"].logits, axis=1)
    np.testing.assert_array_equal(csfs["Margin"], z[:, -1] - z[:, -2])
    assert csfs["Margin"].dtype == np.float64
    spec = csf_specs()["Margin"]
    assert spec.needs == "logits" and spec.plugin and spec.calibration == "platt"
    register_csf("Margin")(margin)  # the same function again: a no-op


def test_available_restricts_the_splits(clean_plugins):
    register_csf("FeatNorm", available=lambda run, s: run.splits[s].features is not None)(
        lambda run, s: -np.linalg.norm(run.splits[s].features, axis=1)
    )
    assert "FeatNorm" not in available_csfs(_run(), "iid")
    assert "FeatNorm" in compute_csfs(_run(features=True), "iid")


def test_registration_errors(clean_plugins):
    with pytest.raises(ValueError, match="built-in CSF"):
        register_csf("MSR")
    with pytest.raises(ValueError, match="non-empty"):
        register_csf(" x")
    register_csf("A")(lambda run, s: np.zeros(len(run.splits[s].labels)))
    with pytest.raises(ValueError, match="already registered"):
        register_csf("A")(lambda run, s: np.ones(len(run.splits[s].labels)))
    with pytest.raises(TypeError, match="expects a function"):
        register_csf("B")(3)


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        (np.zeros(5), "must return 20 real confidences"),
        (np.full(20, np.nan), "non-finite"),
        (np.array(["a"] * 20), "real confidences"),
    ],
)
def test_bad_plugin_output_is_a_clear_error(clean_plugins, value, needle):
    register_csf("Bad")(lambda run, s: value)
    with pytest.raises(ValueError, match=needle):
        compute_csfs(_run(), "iid")


def test_no_plugin_leaves_the_csfs_unchanged():
    # no fdbench.csfs entry point is installed in the test environment
    assert not any(spec.plugin for spec in csf_specs().values())
    assert list(compute_csfs(_run(), "iid")) == ["MSR", "MLS", "PE", "energy", "DOCTOR"]


PLUGIN = """
import numpy as np
from fdbench.csf import register_csf
from fdbench.training.methods import EndToEndParams, TrainingMethod


@register_csf("MarginPlug", needs="logits")
def margin(run, split):
    z = np.sort(run.splits[split].logits, axis=1)
    return z[:, -1] - z[:, -2]


def neg_norm(run, split):
    return -np.linalg.norm(run.splits[split].logits, axis=1)


class PlugCE(TrainingMethod):
    name = "plug_ce"
    params_model = EndToEndParams

    def training_step(self, module, batch, batch_idx):
        import torch.nn.functional as F

        x, y = batch
        return F.cross_entropy(module.network(x), y)
"""


def _install_plugin(site):
    """A distribution installed the way pip leaves it: module + dist-info with entry points."""
    (site / "fdplug.py").write_text(PLUGIN)
    info = site / "fdplug-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fdplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[fdbench.csfs]\nMarginPlug = fdplug:margin\nNegNorm = fdplug:neg_norm\n\n"
        "[fdbench.methods]\nplug_ce = fdplug:PlugCE\n"
    )


def _fdbench(site, *args, code=None):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(site)]),
           "COLUMNS": "200"}  # fmt: skip
    env.pop("FDBENCH_DEBUG", None)
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "fdbench", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def test_installed_plugin_shows_in_evaluate_and_report(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _install_plugin(site)
    rng = np.random.default_rng(1)
    n = 120
    labels = rng.integers(0, 3, n)
    logits = rng.normal(size=(n, 3)) + 2 * np.eye(3)[labels]
    np.savez(tmp_path / "o.npz", logits=logits, labels=labels)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    result = _fdbench(site, "evaluate", str(tmp_path / "o.npz"), "--out",
                      str(run_dir / "results.parquet"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "MarginPlug" in result.stdout and "NegNorm" in result.stdout
    table = pd.read_parquet(run_dir / "results.parquet")
    row = table[(table.csf == "MarginPlug") & (table.metric == "aurc")]
    z = np.sort(logits, axis=1)
    import fdbench.metrics as M

    expected = M.aurc((logits.argmax(1) != labels).astype(float), z[:, -1] - z[:, -2])
    assert row["value"].item() == pytest.approx(expected, abs=1e-12)
    report = _fdbench(site, "report", str(run_dir))
    assert report.returncode == 0, report.stderr
    html = (run_dir / "report.html").read_text()
    assert "MarginPlug" in html and "NegNorm" in html
    # the method entry point: a configuration may name it as its kind
    check = _fdbench(site, code=(
        "from fdbench.config import MethodConfig\n"
        "from fdbench.training.methods import get_method\n"
        "m = MethodConfig.model_validate(\n"
        "    {'name': 'mine', 'kind': 'plug_ce', 'seeds': [0], 'params': {'epochs': 1}},\n"
        "    context={'methods': get_method},\n"
        ")\n"
        "print(m.method_class().__module__, m.candidates()[0].epochs)\n"
    ))  # fmt: skip
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == ["fdplug", "1"]
    # without the distribution on the path, nothing of it is seen
    plain = _fdbench(tmp_path, "evaluate", str(tmp_path / "o.npz"))
    assert plain.returncode == 0 and "MarginPlug" not in plain.stdout
