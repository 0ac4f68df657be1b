"""The LogitNorm and Mixup training methods: their losses by hand, their parameters and their
scoring-method names."""

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fdbench.training.methods import get_method  # noqa: E402
from fdbench.training.methods.logitnorm import logitnorm_loss  # noqa: E402
from fdbench.training.methods.mixup import mixup_loss  # noqa: E402


def _ce(z: np.ndarray, y: np.ndarray) -> float:
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-log_p[np.arange(len(y)), y].mean())


def test_logitnorm_loss_is_the_cross_entropy_of_normalised_logits():
    z = np.array([[3.0, 4.0], [0.0, -2.0]])
    y = np.array([1, 0])
    # norms 5 and 2: z / (τ (‖z‖ + 1e-7)) with τ = 0.5
    expected = _ce(z / (0.5 * (np.array([[5.0], [2.0]]) + 1e-7)), y)
    got = logitnorm_loss(torch.from_numpy(z), torch.from_numpy(y), 0.5).item()
    assert got == pytest.approx(expected, rel=1e-12)


def test_mixup_loss_mixes_inputs_and_labels():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    y, perm = np.array([0, 1, 1, 0]), np.array([2, 0, 3, 1])
    lam = 0.3
    out = (lam * x + (1 - lam) * x[perm]) @ w
    expected = lam * _ce(out, y) + (1 - lam) * _ce(out, y[perm])
    network = lambda t: t @ torch.from_numpy(w)  # noqa: E731
    got = mixup_loss(network, torch.from_numpy(x), torch.from_numpy(y), lam, torch.from_numpy(perm))
    assert got.item() == pytest.approx(expected, rel=1e-12)
    # λ = 1 is plain cross-entropy
    plain = mixup_loss(
        network, torch.from_numpy(x), torch.from_numpy(y), 1.0, torch.from_numpy(perm)
    )
    assert plain.item() == pytest.approx(_ce(x @ w, y), rel=1e-12)


def test_parameters_and_names():
    assert get_method("logitnorm")().params.temperature == 0.04
    assert get_method("mixup")({"alpha": 0.2}).params.alpha == 0.2
    assert get_method("logitnorm").display_prefix == "LogitNorm"
    assert get_method("mixup").display_prefix == "Mixup"
    with pytest.raises(ValueError):
        get_method("logitnorm")({"temperature": 0.0})
    with pytest.raises(ValueError):
        get_method("mixup")({"alpha": -1.0})


def test_mixup_step_draws_from_the_run_seed():
    torch.manual_seed(0)
    network = torch.nn.Linear(3, 2)
    module = SimpleNamespace(network=network)
    batch = (torch.randn(6, 3), torch.tensor([0, 1, 0, 1, 1, 0]))
    losses = []
    for _ in range(2):
        method = get_method("mixup")()
        method.train_data(SimpleNamespace(seed=3, loader=lambda: None))
        losses.append(method.training_step(module, batch, 0).item())
    assert losses[0] == losses[1]
