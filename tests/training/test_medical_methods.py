"""Laplace, SWAG and DUQ train on the tiny experiment and store float64 predictive outputs."""

import copy

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from fdbench.jobs.benchmark import evaluate_runs  # noqa: E402
from fdbench.models.laplace import probit_log_probabilities  # noqa: E402
from fdbench.models.swag import batch_norm_layers  # noqa: E402
from fdbench.outputs import read_outputs  # noqa: E402
from fdbench.training.jobs import load_checkpoint, run_dir, run_training_job  # noqa: E402
from fdbench.training.loader import image_tensor  # noqa: E402
from fdbench.training.methods import get_method  # noqa: E402
from fdbench.training.methods.swag import swag_learning_rate  # noqa: E402

METHODS = [
    {"name": "ce", "kind": "ce", "seeds": [0]},
    {"name": "la", "kind": "laplace", "seeds": [0], "params": {"base": "ce"}},
    {"name": "lamc", "kind": "laplace", "seeds": [0],
     "params": {"base": "ce", "predictive": "mc", "mc_samples": 7}},
    {"name": "sw", "kind": "swag", "seeds": [0],
     "params": {"epochs": 2, "swa_start": 0, "samples": 3, "rank": 2, "swa_lr": 0.02}},
    {"name": "duq", "kind": "duq", "seeds": [0], "params": {"gradient_penalty": 0.1}},
]  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory, experiment, make_config):
    config = make_config(methods=METHODS)
    out = tmp_path_factory.mktemp("medical")
    stores = {m["name"]: run_training_job(config, experiment, m["name"], 0, out) for m in METHODS}
    return config, out, stores


def _model(out, name):
    return load_checkpoint(run_dir(out, "tiny", name, 0) / "model.pt")[0]


@pytest.mark.parametrize("name", ["la", "lamc", "sw"])
def test_stored_logits_are_log_probabilities(trained, name):
    run = read_outputs(trained[2][name])
    for split in run.splits.values():
        assert split.logits.dtype == np.float64
        np.testing.assert_allclose(np.exp(split.logits).sum(axis=1), 1.0, rtol=1e-12)


def test_laplace_logits_are_the_probit_predictive(trained, experiment):
    _, out, stores = trained
    net = _model(out, "la")
    base = _model(out, "ce")
    for a, b in zip(base.parameters(), net.parameters(), strict=True):
        assert torch.equal(a, b)  # the MAP model is the base model
    assert float(net.laplace.prior_precision) > 0
    x = image_tensor(experiment.val.images)
    with torch.inference_mode():
        f = net.features(x).double()
        logits = f @ net.classifier.weight.double().T + net.classifier.bias.double()
        expected = probit_log_probabilities(logits, net.laplace.variance(f))
    stored = read_outputs(stores["la"]).splits["val"].logits
    np.testing.assert_allclose(stored, expected.numpy(), rtol=1e-10, atol=1e-12)
    # the probit predictive is less confident than the MAP softmax
    assert (np.exp(stored).max(1) <= torch.softmax(logits, 1).max(1).values.numpy() + 1e-12).all()


def test_swag_logits_average_the_samples(trained, experiment):
    _, out, stores = trained
    net = _model(out, "sw")
    weights = net.swag.weights
    assert weights.shape[0] == 3 and not torch.equal(weights[0], weights[1])
    x = image_tensor(experiment.val.images)
    probs = []
    for w, bn in zip(weights, net.swag.bn, strict=True):
        sample = copy.deepcopy(net)
        torch.nn.utils.vector_to_parameters(w, list(sample.parameters()))
        layers = batch_norm_layers(sample.body)
        targets = [t for m in layers for t in (m.running_mean, m.running_var)]
        for t, v in zip(targets, bn.split([t.numel() for t in targets]), strict=True):
            t.copy_(v)
        with torch.inference_mode():
            probs.append(torch.softmax(sample(x).double(), 1))
    expected = torch.stack(probs).mean(0).log().numpy()
    stored = read_outputs(stores["sw"]).splits["val"].logits
    np.testing.assert_allclose(stored, expected, rtol=1e-5, atol=1e-6)


def test_duq_outputs_and_evaluation(trained, tmp_path):
    _, out, stores = trained
    net = _model(out, "duq")
    assert not torch.equal(net.duq.N, torch.full_like(net.duq.N, 13.0))  # centroids moved
    run = read_outputs(stores["duq"])
    val = run.splits["val"]
    assert val.heads["duq"].dtype == np.float64
    np.testing.assert_allclose(val.heads["duq"], np.exp(val.logits).max(axis=1), rtol=1e-12)
    table = pd.read_parquet(evaluate_runs([stores["duq"]], tmp_path / "ev"))
    assert "DUQ" in set(table["csf"])


def test_evaluate_works_on_laplace_and_swag(trained, tmp_path):
    for name in ("la", "sw"):
        table = pd.read_parquet(evaluate_runs([trained[2][name]], tmp_path / name))
        assert {"MSR", "TrustScore"} <= set(table["csf"])


def test_evaluate_runs_seed_column(trained, tmp_path):
    table = pd.read_parquet(evaluate_runs([trained[2]["ce"]], tmp_path / "ev", seed=3))
    assert set(table["seed"]) == {3}


def test_swag_learning_rate_schedule():
    # lr 0.1 → swa_lr 0.01 with swa_start 10: constant to epoch 5, linear to epoch 9, then 0.01
    assert swag_learning_rate(5, 0.1, 0.01, 10) == 0.1
    assert swag_learning_rate(7, 0.1, 0.01, 10) == pytest.approx(0.1 * (1 - 0.9 * 0.5))
    assert swag_learning_rate(9, 0.1, 0.01, 10) == pytest.approx(0.01)
    assert swag_learning_rate(0, 0.1, 0.01, 0) == pytest.approx(0.01)


def test_swag_start_must_precede_the_last_epoch():
    method = get_method("swag")({"swa_start": 3})
    with pytest.raises(ValueError, match="swa_start"):
        method.swa_start(3)
    assert get_method("swag")().swa_start(8) == 6


def test_laplace_needs_a_plain_base(experiment, make_config, tmp_path):
    config = make_config(methods=[
        {"name": "dv", "kind": "devries", "seeds": [0]},
        {"name": "la", "kind": "laplace", "seeds": [0], "params": {"base": "dv"}},
    ])  # fmt: skip
    with pytest.raises(ValueError, match="plain classifier"):
        run_training_job(config, experiment, "la", 0, tmp_path)


def test_confidnet_keeps_the_best_validation_epoch(experiment, make_config, tmp_path,
                                                   monkeypatch):  # fmt: skip
    from fdbench.training.methods import confidnet

    scores, states = iter([0.2, 0.9, 0.1]), []

    def fake(net, images, labels):
        assert len(images) == len(experiment.val.labels)
        states.append({k: v.clone() for k, v in net.confidnet.state_dict().items()})
        return next(scores)

    monkeypatch.setattr(confidnet, "validation_aupr_error", fake)
    config = make_config(methods=[
        {"name": "ce", "kind": "ce", "seeds": [0]},
        {"name": "cn", "kind": "confidnet", "seeds": [0],
         "params": {"base": "ce", "epochs": 3, "hidden": 5, "depth": 2, "lr": 0.05,
                    "checkpoint": "best_val_aupr_error"}},
    ])  # fmt: skip
    run_training_job(config, experiment, "cn", 0, tmp_path)
    net = _model(tmp_path, "cn")
    assert len(states) == 3 and not torch.equal(states[1]["mlp.0.weight"],
                                                states[2]["mlp.0.weight"])  # fmt: skip
    for key, value in net.confidnet.state_dict().items():
        assert torch.equal(value, states[1][key])


def test_validation_aupr_error_is_average_precision_of_failures(trained, experiment):
    sklearn = pytest.importorskip("sklearn.metrics")
    from fdbench.models import build_model
    from fdbench.training.methods.confidnet import validation_aupr_error

    torch.manual_seed(0)
    net = build_model("convnet", num_classes=3, head="confidnet", width=2, feature_dim=4,
                      confidnet_hidden=4, confidnet_depth=2).eval()  # fmt: skip
    x = image_tensor(experiment.val.images)
    y = torch.from_numpy(experiment.val.labels)
    with torch.no_grad():
        errors = (net(x).argmax(1) != y).numpy()
        tcp = torch.sigmoid(net.confidnet(net.features(x))).numpy()
    assert errors.any()
    expected = sklearn.average_precision_score(errors, -tcp)
    assert validation_aupr_error(net, x, y) == pytest.approx(expected)


def test_duq_with_dropout_stores_no_mc_samples(experiment, make_config, tmp_path):
    config = make_config(methods=[
        {"name": "duq", "kind": "duq", "seeds": [0], "params": {"dropout": True}},
        {"name": "ce", "kind": "ce", "seeds": [0], "params": {"dropout": True}},
    ])  # fmt: skip
    duq = read_outputs(run_training_job(config, experiment, "duq", 0, tmp_path))
    ce = read_outputs(run_training_job(config, experiment, "ce", 0, tmp_path))
    assert duq.splits["iid"].mcd_logits is None and duq.meta["mc_samples"] == 0
    assert ce.splits["iid"].mcd_logits is not None


def test_mc_dropout_after_every_layer_with_ten_passes(experiment, make_config, tmp_path):
    from fdbench.csf import compute_csfs
    from fdbench.models.dropout import SampledDropout

    config = make_config(
        architecture={"name": "convnet", "dropout": 0.1, "dropout_placement": "every_layer",
                      "options": {"width": 2, "feature_dim": 6}},
        inference={"mc_samples": 10, "batch_size": 16, "max_train_samples": 40},
        methods=[{"name": "ce", "kind": "ce", "seeds": [0], "params": {"dropout": True}}],
    )  # fmt: skip
    run = read_outputs(run_training_job(config, experiment, "ce", 0, tmp_path))
    net = _model(tmp_path, "ce")
    drops = [m for m in net.modules() if isinstance(m, SampledDropout) and m.p > 0]
    assert {layer.p for layer in drops} == {0.1}
    convs = [m for m in net.body.modules() if isinstance(m, torch.nn.Conv2d)]
    assert len(drops) == len(convs) + 1  # after every convolution and before the final layer
    assert run.splits["iid"].mcd_logits.shape[1] == 10
    csfs = compute_csfs(run, "iid")
    assert {"MCD-MSR", "MCD-PE"} <= set(csfs)  # MC-S and MC-E
