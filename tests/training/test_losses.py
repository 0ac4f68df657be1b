"""The training losses against hand computations."""

import math

import pytest

torch = pytest.importorskip("torch")

from fdbench.training.losses import (  # noqa: E402
    confidnet_loss,
    devries_loss,
    gambler_loss,
    update_devries_lambda,
)


def _softmax(row):
    e = [math.exp(v) for v in row]
    return [v / sum(e) for v in e]


def test_gambler_loss_by_hand():
    outputs = torch.tensor([[1.0, 0.0, -1.0, 0.5], [0.2, 2.0, 0.1, -0.3]], dtype=torch.float64)
    targets = torch.tensor([0, 2])
    o = 2.5
    expected = 0.0
    for row, y in zip(outputs.tolist(), targets.tolist(), strict=True):
        p = _softmax(row)
        expected += -math.log(p[y] + p[-1] / o)
    expected /= 2
    assert gambler_loss(outputs, targets, o).item() == pytest.approx(expected, rel=1e-12)


def test_gambler_loss_is_stable_for_large_outputs():
    outputs = torch.tensor([[1000.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    assert gambler_loss(outputs, torch.tensor([0]), 2.0).item() == pytest.approx(0.0, abs=1e-12)


def test_gambler_loss_rejects_bad_reward():
    with pytest.raises(ValueError, match="reward must be > 1"):
        gambler_loss(torch.zeros(2, 4), torch.tensor([0, 1]), 1.0)


def test_devries_loss_by_hand():
    logits = torch.tensor([[2.0, 0.0, -1.0], [0.0, 1.0, 0.0]], dtype=torch.float64)
    conf_logit = torch.tensor([0.3, -1.2], dtype=torch.float64)
    targets = torch.tensor([1, 1])
    hints = torch.tensor([1.0, 0.0], dtype=torch.float64)
    lam = 0.7
    c = [1 / (1 + math.exp(-v)) for v in conf_logit.tolist()]
    task = 0.0
    for i, row in enumerate(logits.tolist()):
        p = _softmax(row)
        ci = c[i] if hints[i] == 1 else 1.0
        task += -math.log(ci * p[1] + (1 - ci) * 1.0)
    task /= 2
    conf = -(math.log(c[0]) + math.log(c[1])) / 2
    total, lc = devries_loss(logits, conf_logit, targets, hints, lam)
    assert lc.item() == pytest.approx(conf, rel=1e-12)
    assert total.item() == pytest.approx(task + lam * conf, rel=1e-12)


def test_devries_lambda_schedule():
    assert update_devries_lambda(0.1, 0.2, 0.3) == pytest.approx(0.1 / 1.01)
    assert update_devries_lambda(0.1, 0.4, 0.3) == pytest.approx(0.1 / 0.99)


def test_confidnet_loss_by_hand():
    logits = torch.tensor([[1.0, 0.0], [0.0, 3.0]], dtype=torch.float64, requires_grad=True)
    conf_logit = torch.tensor([0.0, 2.0], dtype=torch.float64, requires_grad=True)
    targets = torch.tensor([0, 0])
    tcp = [_softmax([1.0, 0.0])[0], _softmax([0.0, 3.0])[0]]
    c = [0.5, 1 / (1 + math.exp(-2.0))]
    expected = ((c[0] - tcp[0]) ** 2 + (c[1] - tcp[1]) ** 2) / 2
    loss = confidnet_loss(conf_logit, logits, targets)
    assert loss.item() == pytest.approx(expected, rel=1e-12)
    loss.backward()
    assert logits.grad is None  # the classifier is frozen: TCP is a target, not a path
    assert conf_logit.grad is not None
