"""ODIN: perturbation against the analytic gradient of a linear model, scores, (T, ε) search."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from fdbench.metrics import auroc_out  # noqa: E402
from fdbench.models.network import Network, Normalize  # noqa: E402
from fdbench.training.methods.odin.scores import (  # noqa: E402
    ODIN_EPSILONS,
    ODIN_TEMPERATURES,
    odin_batch_scores,
    odin_perturb,
    odin_score_grid,
    odin_scores,
    select_odin_params,
)

MEAN, STD = (0.4, 0.6), (0.2, 0.5)


def _linear(seed=0, k=3, c=2, side=2):
    """logits = W · ((x / 255 − mean_c) / std_c) + b on the flattened image."""
    rng = np.random.default_rng(seed)
    d = c * side * side
    net = Network(nn.Flatten(), d, k, normalize=Normalize(MEAN, STD))
    w, b = rng.normal(size=(k, d)), rng.normal(size=k)
    with torch.no_grad():
        net.classifier.weight.copy_(torch.from_numpy(w))
        net.classifier.bias.copy_(torch.from_numpy(b))
    return net.eval(), net.classifier.weight.double().detach().numpy(), \
        net.classifier.bias.double().detach().numpy()  # fmt: skip


def _hand_gradient(x, w, b, t):
    """∂/∂u of −log max softmax(W z / T) with z = (u − mean_c) / std_c, u = x / 255."""
    n = x.shape[0]
    std = np.repeat(np.asarray(STD), x[0, 0].size)
    mean = np.repeat(np.asarray(MEAN), x[0, 0].size)
    u = x.reshape(n, -1).astype(np.float64) / 255
    z = (u - mean) / std
    logits = (z @ w.T + b) / t
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    onehot = np.eye(w.shape[0])[logits.argmax(axis=1)]
    grad_z = (p - onehot) @ w / t  # ∂(−log p_ŷ)/∂z = (p − e_ŷ)ᵀ W / T
    return u, grad_z / std, logits


@pytest.mark.parametrize(("t", "eps"), [(1.0, 0.0014), (1000.0, 0.05), (10.0, 0.2)])
def test_perturbation_steps_against_the_analytic_gradient(t, eps):
    net, w, b = _linear()
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, size=(6, 2, 2, 2)).astype(np.uint8)
    u, grad, _ = _hand_gradient(x, w, b, t)
    expected = u - eps * np.where(grad >= 0, 1.0, -1.0)
    got = odin_perturb(net, torch.from_numpy(x), temperature=t, epsilon=eps)
    got = got.double().numpy().reshape(6, -1) / 255
    np.testing.assert_allclose(got, expected, atol=1e-6)
    # magnitude: every pixel moves by exactly ε on the [0, 1] scale
    np.testing.assert_allclose(np.abs(got - u), eps, atol=1e-6)


def test_small_perturbation_raises_the_max_softmax():
    net, _, _ = _linear(seed=2)
    x = np.random.default_rng(3).integers(0, 256, size=(20, 2, 2, 2)).astype(np.uint8)
    images = x.transpose(0, 2, 3, 1).copy()
    plain = odin_scores(net, images, temperature=1.0, epsilon=0.0)
    moved = odin_scores(net, images, temperature=1.0, epsilon=0.002)
    assert (moved > plain).all()


def test_scores_without_perturbation_are_tempered_msr():
    net, w, b = _linear(seed=4)
    x = np.random.default_rng(5).integers(0, 256, size=(9, 2, 2, 2)).astype(np.uint8)
    images = x.transpose(0, 2, 3, 1).copy()
    _, _, logits = _hand_gradient(x, w, b, 10.0)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    msr = 1 / p.sum(axis=1)
    got = odin_scores(net, images, temperature=10.0, epsilon=0.0, batch_size=4)
    np.testing.assert_allclose(got, msr, rtol=1e-5)
    assert all(p.requires_grad for p in net.parameters())
    with pytest.raises(ValueError, match="temperature"):
        odin_scores(net, images, temperature=0.0, epsilon=0.0)


def test_selection_keeps_the_first_best_grid_point_by_auroc():
    net, _, _ = _linear(seed=6)
    rng = np.random.default_rng(7)
    val = rng.integers(0, 256, size=(15, 2, 2, 2)).astype(np.uint8)
    ext = rng.integers(100, 140, size=(12, 2, 2, 2)).astype(np.uint8)
    temps, epss = (1.0, 100.0), (0.0, 0.01, 0.1)
    t, e, table = select_odin_params(net, val, ext, temperatures=temps, epsilons=epss)
    grid = [(r["temperature"], r["epsilon"]) for r in table]
    assert grid == [(a, b) for a in temps for b in epss]
    is_ood = np.r_[np.zeros(15), np.ones(12)]
    for row in table:
        kw = {"temperature": row["temperature"], "epsilon": row["epsilon"]}
        scores = np.r_[odin_scores(net, val, **kw), odin_scores(net, ext, **kw)]
        assert row["auroc"] == pytest.approx(auroc_out(is_ood, scores))
    aurocs = [r["auroc"] for r in table]
    best = table[int(np.argmax(aurocs))]
    assert (t, e) == (best["temperature"], best["epsilon"])
    assert ODIN_TEMPERATURES == (1.0, 10.0, 100.0, 1000.0) and len(ODIN_EPSILONS) == 11


def test_batch_scores_work_inside_inference_mode():
    net, _, _ = _linear(seed=8)
    x = torch.from_numpy(np.random.default_rng(9).integers(0, 256, size=(5, 2, 2, 2)))
    x = x.to(torch.uint8)
    outside = odin_batch_scores(net, x, temperature=10.0, epsilon=0.01)
    with torch.inference_mode():
        inside = odin_batch_scores(net, x, temperature=10.0, epsilon=0.01)
    torch.testing.assert_close(inside, outside)
    assert inside.dtype == torch.float64


def test_odin_method_selects_t_and_eps_on_validation_and_stores_its_head(
    tmp_path, experiment, make_config
):
    from fdbench.csf import compute_csfs
    from fdbench.data.sources.external import load_external
    from fdbench.outputs import read_outputs
    from fdbench.training import run_training_job
    from fdbench.training.jobs import load_checkpoint

    grid = {"temperatures": [1.0, 1000.0], "epsilons": [0.0, 0.01]}
    config = make_config(methods=[
        {"name": "ce", "kind": "ce", "seeds": [0]},
        {"name": "odin", "kind": "odin", "seeds": [0],
         "params": {"base": "ce", "external_size": 20, **grid}},
    ])  # fmt: skip
    run = read_outputs(run_training_job(config, experiment, "odin", 0, tmp_path))
    params = run.meta["params"]
    t, e = params["temperature"], params["epsilon"]
    assert t in grid["temperatures"] and e in grid["epsilons"]
    # the selection, redone by hand on the base model: validation vs the external set
    base, _ = load_checkpoint(tmp_path / "tiny" / "ce" / "seed0" / "model.pt")
    external = load_external("shapes", 20, size=8, channels=1, seed=1).images
    t2, e2, _ = select_odin_params(base, experiment.val.images, external, **grid)
    assert (t, e) == (t2, e2)
    # the stored head: ODIN scores of the base model at the selected (T, ε), every split
    for study in experiment.studies:
        expected = odin_scores(base, study.images, temperature=t, epsilon=e)
        np.testing.assert_allclose(run.splits[study.name].heads["odin"], expected, rtol=1e-6)
    iid = run.splits["iid"]
    np.testing.assert_array_equal(compute_csfs(run, "iid")["ODIN"], iid.heads["odin"])
    base_run = read_outputs(run_training_job(config, experiment, "ce", 0, tmp_path))
    np.testing.assert_array_equal(iid.logits, base_run.splits["iid"].logits)


def test_odin_needs_a_base_method_and_a_known_external_set(make_config):
    with pytest.raises(ValueError, match="base 'ce' must name a method"):
        make_config(methods=[{"name": "odin", "kind": "odin", "seeds": [0]}])
    with pytest.raises(ValueError, match="external must be one of"):
        make_config(methods=[{"name": "ce", "kind": "ce", "seeds": [0]},
                             {"name": "odin", "kind": "odin", "seeds": [0],
                              "params": {"external": "svhn"}}])  # fmt: skip


def test_score_grid_equals_scores_one_epsilon_at_a_time():
    net, _, _ = _linear(seed=10)
    images = np.random.default_rng(11).integers(0, 256, size=(7, 2, 2, 2)).astype(np.uint8)
    epsilons = (0.0, 0.002, 0.1)
    grid = odin_score_grid(net, images, temperature=100.0, epsilons=epsilons, batch_size=3)
    assert grid.shape == (3, 7)
    for row, e in zip(grid, epsilons, strict=True):
        expected = odin_scores(net, images, temperature=100.0, epsilon=e, batch_size=3)
        np.testing.assert_array_equal(row, expected)
