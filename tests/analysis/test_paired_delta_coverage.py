"""Coverage of the paired Δ interval on simulated data with a known Δ (slow)."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "paired_delta_coverage.py"


@pytest.mark.slow
def test_95_percent_interval_covers_the_true_delta():
    spec = importlib.util.spec_from_file_location("paired_delta_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    coverage = module.coverage(400, n=500, n_resamples=500, seed=1)
    for metric, share in coverage.items():
        assert 0.93 <= share <= 0.97, (metric, share)
