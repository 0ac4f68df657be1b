"""Outlier Exposure: uniform cross-entropy by hand, outlier batches twice as large, training."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fdbench.training.augment import Pipeline  # noqa: E402
from fdbench.training.methods.outlier_exposure.loss import (  # noqa: E402
    OutlierBatches,
    outlier_exposure_loss,
    outlier_loader,
    uniform_cross_entropy,
)


def test_uniform_cross_entropy_by_hand():
    # row 1: softmax(0, ln 3) = (1/4, 3/4): −(ln(1/4) + ln(3/4)) / 2 = ln 4 − ln(3) / 2
    # row 2: equal logits: −ln(1/2) = ln 2
    logits = torch.tensor([[0.0, math.log(3.0)], [5.0, 5.0]], dtype=torch.float64)
    expected = ((math.log(4.0) - math.log(3.0) / 2) + math.log(2.0)) / 2
    assert float(uniform_cross_entropy(logits)) == pytest.approx(expected, rel=1e-12)


def test_uniform_cross_entropy_is_minimal_at_uniform_posteriors():
    k = 4
    flat = torch.zeros(3, k, dtype=torch.float64)
    assert float(uniform_cross_entropy(flat)) == pytest.approx(math.log(k))
    peaked = torch.tensor([[3.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    assert float(uniform_cross_entropy(peaked)) > math.log(k)


def test_outlier_exposure_loss_adds_half_the_uniform_term():
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    targets = torch.tensor([0, 1])
    outliers = torch.tensor([[0.0, math.log(3.0)]], dtype=torch.float64)
    ce = (math.log(1 + math.exp(-2.0)) + math.log(1 + math.exp(-1.0))) / 2
    expected = ce + 0.5 * (math.log(4.0) - math.log(3.0) / 2)
    assert float(outlier_exposure_loss(logits, targets, outliers)) == pytest.approx(expected)
    with pytest.raises(ValueError, match="weight"):
        outlier_exposure_loss(logits, targets, outliers, weight=-1.0)
    with pytest.raises(ValueError, match="N × K"):
        uniform_cross_entropy(torch.zeros(3))


def _data(n=40, n_out=25):
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.integers(0, 256, size=(n, 1, 8, 8)).astype(np.uint8))
    y = torch.from_numpy(rng.integers(0, 3, size=n))
    out = torch.arange(n_out, dtype=torch.uint8).view(-1, 1, 1, 1).expand(n_out, 1, 8, 8)
    return x, y, out.contiguous()


def test_outlier_batches_are_twice_as_large_and_cycle_through_permutations():
    x, y, out = _data()
    data = OutlierBatches(x, y, out, seed=3)
    seen = []
    for batch in ([0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14]):
        xb, yb, ob = data[batch]
        assert torch.equal(xb, x[batch]) and torch.equal(yb, y[batch])
        assert ob.shape == (10, 1, 8, 8)
        seen += ob[:, 0, 0, 0].tolist()
    # the first 25 outliers drawn are a permutation of the set, then a new one starts
    assert sorted(seen[:25]) == list(range(25))
    again = OutlierBatches(x, y, out, seed=3)
    assert torch.equal(again[[0, 1, 2, 3, 4]][2], data.outliers[torch.tensor(seen[:10])])
    with pytest.raises(ValueError, match="outliers"):
        OutlierBatches(x, y, out[:, :, :4])


def test_outlier_loader_batches_hold_twice_as_many_outliers():
    x, y, out = _data(n=48)
    loader = outlier_loader(x, y, out, batch_size=16, seed=0,
                            augment=lambda s: Pipeline([{"name": "hflip"}], s))  # fmt: skip
    batches = list(loader)
    assert len(batches) == 3
    assert all(b[2].shape[0] == 2 * b[0].shape[0] == 32 for b in batches)
    again = list(outlier_loader(x, y, out, batch_size=16, seed=0,
                                augment=lambda s: Pipeline([{"name": "hflip"}], s)))  # fmt: skip
    assert all(torch.equal(a, b) for p, q in zip(batches, again, strict=True)
               for a, b in zip(p, q, strict=True))  # fmt: skip


def _config(make_config, **params):
    method = {"name": "oe", "kind": "outlier_exposure", "seeds": [0],
              "params": {"external_size": 64, **params}}  # fmt: skip
    return make_config(methods=[method])


def test_outlier_exposure_trains_one_epoch_on_a_tiny_config(tmp_path, experiment, make_config):
    from fdbench.outputs import read_outputs
    from fdbench.training import run_training_job
    from fdbench.training.jobs import load_checkpoint

    config = _config(make_config)
    run = read_outputs(run_training_job(config, experiment, "oe", 0, tmp_path))
    assert run.meta["method_kind"] == "outlier_exposure"
    assert run.meta["params"]["weight"] == 0.5 and run.meta["params"]["ratio"] == 2
    assert np.isfinite(run.splits["iid"].logits).all()
    net, _ = load_checkpoint(tmp_path / "tiny" / "oe" / "seed0" / "model.pt")
    assert all(torch.isfinite(p).all() for p in net.parameters())


def _leaky(experiment):
    from dataclasses import replace

    from fdbench.data.types import Study, StudyKind

    images = experiment.studies[0].images
    shapes_study = Study("new_class/shapes", StudyKind.NEW_CLASS_NONSEMANTIC, images,
                         np.full(len(images), -1, dtype=np.int64))  # fmt: skip
    return replace(experiment, studies=(*experiment.studies, shapes_study))


def test_outlier_exposure_refuses_an_external_set_that_is_a_test_set(
    tmp_path, experiment, make_config
):
    from fdbench.jobs.benchmark import plan_benchmark
    from fdbench.training import run_training_job

    config = _config(make_config)
    with pytest.raises(ValueError, match="external set 'shapes' must be disjoint"):
        plan_benchmark(config, [_leaky(experiment)], tmp_path)
    with pytest.raises(ValueError, match="external set 'shapes' must be disjoint"):
        run_training_job(config, _leaky(experiment), "oe", 0, tmp_path)
    assert not any(tmp_path.rglob("*.pt"))
    assert len(plan_benchmark(config, [experiment], tmp_path).training) == 1


def test_outlier_exposure_params_name_a_known_external_set(make_config):
    with pytest.raises(ValueError, match="external must be one of"):
        _config(make_config, external="mnist")
