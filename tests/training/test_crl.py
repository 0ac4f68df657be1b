"""CRL (Moon et al. 2020): the ranking loss on a fixed pair set, the history, one epoch."""

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fdbench.models import build_model  # noqa: E402
from fdbench.outputs import read_outputs  # noqa: E402
from fdbench.training import run_training_job  # noqa: E402
from fdbench.training.context import MethodModule  # noqa: E402
from fdbench.training.methods import get_method  # noqa: E402
from fdbench.training.methods.crl import correctness_ranking_loss  # noqa: E402


def test_ranking_loss_on_a_fixed_pair_set():
    # pairs (0, 1), (1, 2), (2, 0) of the rolled batch
    kappa = torch.tensor([0.9, 0.6, 0.8], dtype=torch.float64)
    c = torch.tensor([1.0, 0.5, 0.5], dtype=torch.float64)
    # (0, 1): c0 > c1, max(0, -(0.9 - 0.6) + 0.5) = 0.2
    # (1, 2): c1 = c2, contributes 0
    # (2, 0): c2 < c0, max(0, (0.8 - 0.9) + 0.5) = 0.4
    assert correctness_ranking_loss(kappa, c).item() == pytest.approx(0.6 / 3, rel=1e-12)
    # well-ranked pairs beyond the margin cost nothing
    kappa = torch.tensor([0.99, 0.2, 0.1], dtype=torch.float64)
    c = torch.tensor([1.0, 0.5, 0.0], dtype=torch.float64)
    # (0, 1): max(0, -0.79 + 0.5) = 0; (1, 2): max(0, -0.1 + 0.5) = 0.4; (2, 0): max(0, -0.89 + 1)
    assert correctness_ranking_loss(kappa, c).item() == pytest.approx((0.4 + 0.11) / 3)


def test_ranking_loss_gradient_raises_the_more_often_correct_sample():
    kappa = torch.tensor([0.5, 0.7], dtype=torch.float64, requires_grad=True)
    correctness_ranking_loss(kappa, torch.tensor([1.0, 0.0], dtype=torch.float64)).backward()
    assert kappa.grad[0] < 0 < kappa.grad[1]
    with pytest.raises(ValueError, match="one length"):
        correctness_ranking_loss(kappa, torch.zeros(3))


def test_step_counts_correct_predictions_and_uses_the_epoch_frequency():
    torch.manual_seed(0)
    net = build_model("convnet", num_classes=3, width=2, feature_dim=4)
    context = SimpleNamespace(experiment=SimpleNamespace(train=SimpleNamespace(labels=[0] * 10)))
    method = get_method("crl")({"rank_weight": 1.0})
    module = MethodModule(net, method, context=context)
    x = torch.randint(0, 256, (4, 1, 8, 8), dtype=torch.uint8)
    y = torch.tensor([0, 1, 2, 0])
    idx = torch.tensor([7, 2, 5, 0])
    with torch.no_grad():
        correct = (net(x).argmax(dim=1) == y).double()
    module.crl_counts[idx] = torch.tensor([4.0, 1.0, 2.0, 3.0], dtype=torch.float64)
    # current_epoch is 0 outside a trainer: the frequency divides by max(1, epochs done)
    np.testing.assert_array_equal(method.correctness(module, idx).numpy(), [4.0, 1.0, 2.0, 3.0])
    loss = method.training_step(module, (x, y, idx), 0)
    with torch.no_grad():
        out = net(x)
        kappa = torch.softmax(out, dim=1).max(dim=1).values
        ce = torch.nn.functional.cross_entropy(out, y)
        rank = correctness_ranking_loss(kappa, torch.tensor([4.0, 1.0, 2.0, 3.0]).float())
    torch.testing.assert_close(loss, ce + rank)
    expected = torch.tensor([4.0, 1.0, 2.0, 3.0], dtype=torch.float64) + correct
    np.testing.assert_array_equal(module.crl_counts[idx].numpy(), expected.numpy())
    assert module.crl_counts.sum().item() == expected.sum().item()


def _run(tmp_path, experiment, make_config, epochs):
    config = make_config(training={"epochs": epochs, "batch_size": 16, "lr": 0.05, "threads": 1},
                         methods=[{"name": "crl", "kind": "crl", "seeds": [0]},
                                  {"name": "ce", "kind": "ce", "seeds": [0]}])  # fmt: skip
    crl = read_outputs(run_training_job(config, experiment, "crl", 0, tmp_path))
    ce = read_outputs(run_training_job(config, experiment, "ce", 0, tmp_path))
    return crl, ce


def test_crl_first_epoch_is_cross_entropy(tmp_path, experiment, make_config):
    # within the first epoch no sample of a batch has been seen: every pair has equal
    # correctness 0 and the ranking term vanishes, so one epoch is plain cross-entropy
    crl, ce = _run(tmp_path, experiment, make_config, 1)
    assert list(crl.splits["iid"].heads) == []
    np.testing.assert_array_equal(crl.splits["iid"].logits, ce.splits["iid"].logits)
    assert crl.meta["params"]["rank_weight"] == 1.0


def test_crl_learns_the_tiny_task_with_its_ranking_term(tmp_path, experiment, make_config):
    crl, ce = _run(tmp_path, experiment, make_config, 3)
    iid = crl.splits["iid"]
    assert not np.array_equal(iid.logits, ce.splits["iid"].logits)
    assert np.mean(iid.logits.argmax(axis=1) == iid.labels) >= 0.8
