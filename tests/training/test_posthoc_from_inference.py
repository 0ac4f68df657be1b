"""Every post-hoc score is computable from the outputs store the benchmark writes (inference's
``predict_experiment`` through ``write_outputs``), with its last layer."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fdbench.csf.posthoc import posthoc_confidences, posthoc_scores  # noqa: E402
from fdbench.models import build_model  # noqa: E402
from fdbench.outputs import read_outputs, write_outputs  # noqa: E402
from fdbench.training import predict_experiment  # noqa: E402


def test_every_posthoc_score_is_computable_from_a_benchmark_store(experiment, tmp_path):
    torch.manual_seed(0)
    net = build_model("convnet", num_classes=3, dropout=0.0, width=2, feature_dim=6).eval()
    write_outputs(tmp_path / "store", predict_experiment(net, experiment, mc_samples=0))
    run = read_outputs(tmp_path / "store")
    assert run.meta["fc_weight"].shape == (3, 6) and run.meta["fc_bias"].shape == (3,)
    tests = [s for s in run.splits if s not in ("train", "val")]
    confidences, choices = posthoc_confidences(run, tests)
    assert set(choices) == set(posthoc_scores())
    for study in tests:
        assert set(confidences[study]) == set(posthoc_scores())
        for values in confidences[study].values():
            assert values.shape == (run.splits[study].n_samples,)
            assert np.isfinite(values).all()
