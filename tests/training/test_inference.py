"""Inference outputs: dtypes, shapes, float64 final layer, MC dropout and heads."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fdbench.models import build_model  # noqa: E402
from fdbench.outputs import validate_run  # noqa: E402
from fdbench.training import predict_experiment, predict_split  # noqa: E402


def _net(head=None, dropout=0.5):
    torch.manual_seed(0)
    return build_model(
        "convnet", num_classes=3, dropout=dropout, head=head, width=2, feature_dim=6,
        confidnet_hidden=4, confidnet_depth=2,
    ).eval()  # fmt: skip


def test_predict_experiment_shapes_and_dtypes(experiment):
    run = predict_experiment(_net(), experiment, mc_samples=5, batch_size=16, max_train_samples=40)
    validate_run(run)
    assert list(run.splits) == ["train", "val", "iid", "corruption/noise/1", "new_class/noise"]
    assert [s.kind for s in run.splits.values()] == [
        "train", "val", "iid", "corruption", "new_class_nonsemantic",
    ]  # fmt: skip
    train = run.splits["train"]
    assert train.n_samples == 40
    assert set(train.labels) <= {0, 1, 2}
    for name, split in run.splits.items():
        n = len(split.labels)
        assert split.logits.dtype == np.float64 and split.logits.shape == (n, 3), name
        if name == "train":
            assert split.mcd_logits is None
        else:
            assert split.mcd_logits.dtype == np.float64 and split.mcd_logits.shape == (n, 5, 3)
        assert split.features.dtype == np.float64 and split.features.shape == (n, 6)
    np.testing.assert_array_equal(run.splits["new_class/noise"].labels, -1)
    assert run.meta["fc_weight"].shape == (3, 6) and run.meta["fc_weight"].dtype == np.float64
    assert run.meta["fc_bias"].shape == (3,)
    assert run.meta["classes"] == ["a", "b", "c"]


def test_logits_are_float64_linear_of_features(experiment):
    net = _net()
    run = predict_experiment(net, experiment, mc_samples=0, max_train_samples=None)
    split = run.splits["iid"]
    expected = split.features @ run.meta["fc_weight"].T + run.meta["fc_bias"]
    np.testing.assert_allclose(split.logits, expected, rtol=1e-13, atol=1e-13)
    with torch.no_grad():
        x = torch.from_numpy(experiment.studies[0].images.transpose(0, 3, 1, 2).copy())
        f32 = net(x).numpy()
    np.testing.assert_allclose(split.logits, f32, rtol=1e-4, atol=1e-5)
    assert split.mcd_logits is None
    assert run.splits["train"].n_samples == len(experiment.train.labels)


def test_mc_dropout_samples_differ_and_average_to_logits(experiment):
    split = predict_split(
        _net(dropout=0.5), experiment.val.images, experiment.val.labels, kind="val",
        mc_samples=400, seed=3,
    )  # fmt: skip
    mcd = split.mcd_logits
    assert not np.allclose(mcd[:, 0], mcd[:, 1])
    # inverted dropout is unbiased: the sample mean approaches the deterministic logits
    np.testing.assert_allclose(
        mcd.mean(axis=1), split.logits, atol=0.25 * np.abs(split.logits).max()
    )


def test_eval_inference_is_deterministic_and_mc_is_seeded(experiment):
    net = _net()
    args = (experiment.val.images, experiment.val.labels)
    a = predict_split(net, *args, kind="val", mc_samples=3, seed=1)
    b = predict_split(net, *args, kind="val", mc_samples=3, seed=1)
    c = predict_split(net, *args, kind="val", mc_samples=3, seed=2)
    np.testing.assert_array_equal(a.logits, b.logits)
    np.testing.assert_array_equal(a.mcd_logits, b.mcd_logits)
    np.testing.assert_array_equal(a.logits, c.logits)
    assert not np.array_equal(a.mcd_logits, c.mcd_logits)


def test_no_mc_samples_without_dropout(experiment):
    split = predict_split(_net(dropout=0.0), experiment.val.images, experiment.val.labels,
                          kind="val", mc_samples=5)  # fmt: skip
    assert split.mcd_logits is None


def test_heads(experiment):
    images, labels = experiment.val.images, experiment.val.labels
    dg = predict_split(_net("deepgamblers"), images, labels, kind="val", mc_samples=2)
    assert dg.logits.shape == (30, 3) and dg.mcd_logits.shape == (30, 2, 3)
    res = dg.heads["dg_reservation"]
    assert res.dtype == np.float64 and res.shape == (30,)
    assert np.all((res > 0) & (res < 1))
    dv = predict_split(_net("devries"), images, labels, kind="val", mc_samples=0)
    cn = predict_split(_net("confidnet"), images, labels, kind="val", mc_samples=0)
    for split, name in ((dv, "devries"), (cn, "confidnet")):
        assert list(split.heads) == [name]
        assert split.heads[name].dtype == np.float64
        assert np.all((split.heads[name] > 0) & (split.heads[name] < 1))


def test_reservation_is_softmax_of_extra_output(experiment):
    net = _net("deepgamblers")
    split = predict_split(net, experiment.val.images, experiment.val.labels, kind="val",
                          mc_samples=0)  # fmt: skip
    w = net.classifier.weight.detach().double().numpy()
    b = net.classifier.bias.detach().double().numpy()
    out = split.features @ w.T + b
    p = np.exp(out - out.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(split.heads["dg_reservation"], p[:, 3], rtol=1e-12)
    np.testing.assert_allclose(split.logits, out[:, :3], rtol=1e-12)


def test_bad_arguments(experiment):
    with pytest.raises(ValueError, match="mc_samples must be >= 0"):
        predict_split(_net(), experiment.val.images, experiment.val.labels, kind="v",
                      mc_samples=-1)  # fmt: skip
    with pytest.raises(ValueError, match="model has 4 classes"):
        predict_experiment(build_model("convnet", num_classes=4, width=2), experiment)
    with pytest.raises(TypeError, match="model must be"):
        predict_experiment(torch.nn.Linear(2, 2), experiment)


def _trained(train, head=None, dropout=0.3, placement="fdshifts", steps=30):
    """A convnet trained a few SGD steps (with its dropout) on the train split ``train``."""
    torch.manual_seed(0)
    net = build_model(
        "convnet", num_classes=3, dropout=dropout, dropout_placement=placement, head=head,
        width=4, feature_dim=8,
    )  # fmt: skip
    x = torch.from_numpy(train.images.transpose(0, 3, 1, 2).copy())
    y = torch.from_numpy(train.labels)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    net.train()
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x)[:, :3], y).backward()
        opt.step()
    return net.eval()


def test_mc_dropout_changes_body_activations_between_passes(experiment):
    net = _trained(experiment.train)
    seen = []
    hidden = net.body.sequence[-2]  # the body's hidden linear layer (two dropout layers before)
    handle = hidden.register_forward_hook(lambda m, i, o: seen.append(o.detach().clone()))
    try:
        split = predict_split(net, experiment.val.images, experiment.val.labels, kind="val",
                              mc_samples=2, seed=0)  # fmt: skip
    finally:
        handle.remove()
    deterministic, passes = seen  # one eval-mode call, one call on the repeated rows
    n = len(experiment.val.labels)
    assert deterministic.shape == (n, 8) and passes.shape == (2 * n, 8)
    first, second = passes[0::2], passes[1::2]  # pass 0 and pass 1 of every sample
    assert (first != second).any(dim=1).float().mean() > 0.9
    assert not torch.equal(first, deterministic)
    assert split.mcd_logits.shape == (n, 2, 3)


def _head_only(net, split, samples, seed):
    """MC dropout on the head alone (the former fdbench scheme), computed here for comparison:
    Bernoulli masks on the deterministic features, float64 final layer."""
    g = torch.Generator().manual_seed(seed)
    f = torch.from_numpy(split.features)
    p = net.dropout.p
    mask = torch.bernoulli(torch.full((len(f), samples, f.shape[1]), 1 - p, dtype=torch.float64),
                           generator=g) / (1 - p)  # fmt: skip
    w, b = net.classifier.weight.detach().double(), net.classifier.bias.detach().double()
    return ((f.unsqueeze(1) * mask) @ w.T + b).numpy()


def test_whole_network_mc_differs_from_head_only_sampling(experiment):
    from fdbench.csf import mcd_msr

    net = _trained(experiment.train)
    images = np.concatenate([experiment.val.images, experiment.studies[0].images])
    labels = np.concatenate([experiment.val.labels, experiment.studies[0].labels])
    split = predict_split(net, images, labels, kind="val", mc_samples=200, seed=0)
    head = _head_only(net, split, 200, seed=0)
    whole = split.mcd_logits
    # head-only sampling is linear in the masks: its mean converges to the logits, while the
    # body's nonlinear layers make whole-network samples spread more and their mean move away
    spread_whole, spread_head = whole.std(axis=1).mean(), head.std(axis=1).mean()
    assert spread_whole > 1.5 * spread_head
    bias_whole = np.abs(whole.mean(axis=1) - split.logits).mean()
    bias_head = np.abs(head.mean(axis=1) - split.logits).mean()
    assert bias_whole > 2 * bias_head
    assert np.abs(mcd_msr(whole) - mcd_msr(head)).max() > 1e-3


def test_mc_heads_are_pass_means(experiment):
    images, labels = experiment.val.images, experiment.val.labels
    for head, name in (("deepgamblers", "dg_reservation"), ("devries", "devries"),
                       ("confidnet", "confidnet")):  # fmt: skip
        net = _net(head)
        split = predict_split(net, images, labels, kind="val", mc_samples=4, seed=0)
        assert sorted(split.heads) == sorted([name, f"{name}_mcd"])
        mcd = split.heads[f"{name}_mcd"]
        assert mcd.dtype == np.float64 and mcd.shape == (len(labels),)
        assert np.all((mcd > 0) & (mcd < 1))
        assert not np.allclose(mcd, split.heads[name])
        # with a vanishing dropout rate every pass is the deterministic network
        net.dropout.p = 1e-12
        for m in net.body.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 1e-12
        tiny = predict_split(net, images, labels, kind="val", mc_samples=3, seed=0)
        np.testing.assert_allclose(tiny.heads[f"{name}_mcd"], tiny.heads[name], rtol=1e-6)
        np.testing.assert_allclose(tiny.mcd_logits, np.repeat(tiny.logits[:, None], 3, 1),
                                   rtol=1e-5, atol=1e-6)  # fmt: skip


def test_mc_is_bit_identical_for_the_same_seed(experiment):
    net = _trained(experiment.train, head="devries")
    args = (experiment.val.images, experiment.val.labels)
    a = predict_split(net, *args, kind="val", mc_samples=5, seed=7)
    b = predict_split(net, *args, kind="val", mc_samples=5, seed=7)
    c = predict_split(net, *args, kind="val", mc_samples=5, seed=8)
    np.testing.assert_array_equal(a.mcd_logits, b.mcd_logits)
    np.testing.assert_array_equal(a.heads["devries_mcd"], b.heads["devries_mcd"])
    np.testing.assert_array_equal(a.logits, c.logits)
    assert not np.array_equal(a.mcd_logits, c.mcd_logits)


def test_confidnet_own_body_is_sampled_without_changing_the_classifier_samples(experiment):
    base = _trained(experiment.train)
    torch.manual_seed(1)
    cn = build_model(
        "convnet", num_classes=3, dropout=0.3, dropout_placement="fdshifts", head="confidnet",
        width=4, feature_dim=8, confidnet_hidden=4, confidnet_depth=2, confidnet_own_body=True,
    )  # fmt: skip
    cn.load_state_dict(base.state_dict(), strict=False)
    cn.confidnet_body.load_state_dict(base.body.state_dict())
    cn.eval()
    args = (experiment.val.images, experiment.val.labels)
    a = predict_split(base, *args, kind="val", mc_samples=6, seed=4)
    b = predict_split(cn, *args, kind="val", mc_samples=6, seed=4)
    np.testing.assert_array_equal(a.mcd_logits, b.mcd_logits)
    assert sorted(b.heads) == ["confidnet", "confidnet_mcd"]
    assert not np.allclose(b.heads["confidnet_mcd"], b.heads["confidnet"])


def test_mc_heads_read_the_dropped_features(experiment):
    """As in FD-Shifts, whose encoder ends in the dropout layer that feeds the class and the
    confidence branch: with dropout only before the final layer, the MC mean of the DeVries
    head is the mean over passes of sigmoid(w · (m_s ⊙ f) / (1 − p) + b) with the very masks
    m_s of the class outputs, so it differs from the deterministic head."""
    images, labels = experiment.val.images, experiment.val.labels
    torch.manual_seed(0)
    net = build_model(
        "convnet", num_classes=3, dropout=0.5, dropout_placement="head", head="devries",
        width=2, feature_dim=3,
    ).eval()  # fmt: skip
    split = predict_split(net, images, labels, kind="val", mc_samples=8, seed=3)
    f = split.features
    w = net.classifier.weight.detach().double().numpy()
    b = net.classifier.bias.detach().double().numpy()
    wd = net.devries.weight.detach().double().numpy()[0]
    bd = float(net.devries.bias.detach().double()[0])
    # each pass's dropped features, recovered from its class outputs W (m ⊙ f) / (1 − p) + b
    # (K = D = 3: W is invertible)
    dropped = np.linalg.solve(w, (split.mcd_logits - b).reshape(-1, 3).T).T
    dropped = dropped.reshape(len(labels), 8, 3)
    live = np.broadcast_to(f[:, None] != 0, dropped.shape)
    ratio = dropped[live] / np.broadcast_to(f[:, None], dropped.shape)[live]
    assert np.isin(np.round(ratio, 6), (0.0, 2.0)).mean() > 0.99  # masks m_s / (1 − p)
    expected = (1.0 / (1.0 + np.exp(-(dropped @ wd + bd)))).mean(axis=1)
    assert not np.allclose(split.heads["devries_mcd"], split.heads["devries"])
    np.testing.assert_allclose(split.heads["devries_mcd"], expected, rtol=1e-6, atol=1e-9)
