"""The ECE-vs-AUROC toy of Bernhardt et al. (Section 2.2.3) reproduces the paper's numbers."""

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "examples" / "ece_vs_auroc.py"
_SPEC = importlib.util.spec_from_file_location("ece_vs_auroc", _PATH)
toy = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(toy)


def test_equal_auroc_different_ece():
    results = toy.scores(toy.simulate(10_000, seed=0))
    calibrated, overconfident = results.values()
    assert calibrated["ece"] == pytest.approx(0.02, abs=0.01)
    assert overconfident["ece"] == pytest.approx(0.45, abs=0.01)
    # Same ranking, same failure ROC-AUC (5/6 in expectation).
    assert calibrated["auroc_f"] == overconfident["auroc_f"]
    assert calibrated["auroc_f"] == pytest.approx(5 / 6, abs=0.015)


def test_plot(tmp_path):
    path = toy.plot(toy.simulate(500, seed=1), tmp_path / "toy.png")
    assert path.stat().st_size > 0


def test_rejects_tiny_sample():
    with pytest.raises(ValueError, match="n_samples"):
        toy.simulate(1)
