"""The guarantees of the certified operating points, measured on real outputs.

A small real outputs store is built the way the embedded benchmark builds its stores (the quick
Fashion-MNIST experiment, ``ce_dropout`` for one epoch, seed 0; about a minute on two cores),
and 1,000 seeded calibration/test splits of its ``iid`` study (2,000 samples, MSR confidence)
are drawn.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from scipy import stats

from fdbench import metrics as M

torch = pytest.importorskip("torch")

ALPHA, DELTA, SPLITS = 0.1, 0.1, 1000


@pytest.fixture(scope="module")
def iid_outputs(tmp_path_factory):
    from importlib import resources

    from fdbench.data.suites.fashion_mnist import fashion_mnist_experiments
    from fdbench.jobs.plan import parse_config
    from fdbench.outputs import read_outputs
    from fdbench.training.jobs import run_training_job

    data = yaml.safe_load(
        resources.files("fdbench").joinpath("configs/fashion_mnist_quick.yaml").read_text()
    )
    data["training"]["epochs"] = 1
    data["inference"]["mc_samples"] = 0
    data["methods"] = [data["methods"][0] | {"seeds": [0]}]
    data["ensembles"] = []
    config = parse_config(data)
    experiment = fashion_mnist_experiments(quick=True)[0]
    store = run_training_job(config, experiment, "ce_dropout", 0, tmp_path_factory.mktemp("run"))
    split = read_outputs(store).splits["iid"]
    probs = np.exp(M.log_softmax(split.logits))
    residuals = (probs.argmax(axis=1) != split.labels).astype(np.float64)
    return residuals, probs.max(axis=1)


def test_selective_risk_exceeds_alpha_at_most_delta_of_the_time(iid_outputs):
    """SGR and LTT: the frequency over 1,000 splits with which the test split's selective risk
    exceeds α is at most δ within the binomial tolerance: at most the 99.9 % quantile of
    Binom(1000, δ), /1000 (0.130 at δ = 0.1). On the pool the splits are drawn from (its
    population), the frequency is at most δ itself. CRC controls the expected generalized
    risk: its mean over the splits is at most α + 0.003 (its standard error is about 0.0003)."""
    residuals, confidence = iid_outputs
    assert residuals.size == 2000 and 0.05 < residuals.mean() < 0.5
    results = M.simulate_operating_points(
        residuals, confidence, ALPHA, DELTA, calibration_fraction=0.3, n_splits=SPLITS, seed=0
    )
    tolerance = stats.binom.ppf(0.999, SPLITS, DELTA) / SPLITS
    for method in ("sgr", "ltt_hb", "ltt_binomial"):
        row = results[method]
        assert row["feasible"] > 0.5, (method, row)
        assert row["coverage"] > 0.1, (method, row)
        assert row["violation"] <= tolerance, (method, row)
        assert row["pool_violation"] <= DELTA, (method, row)
    assert results["crc"]["generalized_risk"] <= ALPHA + 0.003
    assert results["crc"]["coverage"] > results["sgr"]["coverage"]
