"""Training methods: DeepGamblers rewards, including FD-Shifts' rewards above K."""

import logging

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import lightning as L  # noqa: E402

from fdbench.models import build_model  # noqa: E402
from fdbench.training.methods import ClassifierModule  # noqa: E402


def _deepgamblers(reward: float, num_classes: int = 2) -> ClassifierModule:
    torch.manual_seed(0)
    net = build_model("convnet", num_classes=num_classes, head="deepgamblers", dropout=0.3,
                      width=2, feature_dim=4)  # fmt: skip
    return ClassifierModule(net, "deepgamblers", lr=0.05, momentum=0.9, nesterov=False,
                            weight_decay=0.0, schedule="constant", reward=reward)  # fmt: skip


def test_reward_above_k_trains_and_warns(caplog):
    # FD-Shifts trains DeepGamblers on CAMELYON (K = 2) with o in {2.2, 3, 6, 10}
    with caplog.at_level(logging.WARNING, logger="fdbench.training.methods"):
        module = _deepgamblers(reward=6.0)
    assert any("o = 6.0 >= K = 2" in r.getMessage() for r in caplog.records)
    rng = np.random.default_rng(0)
    y = torch.from_numpy(rng.integers(0, 2, size=64))
    x = torch.from_numpy(rng.integers(0, 256, size=(64, 1, 8, 8)).astype(np.uint8))
    x[y == 1, :, :4] = 255
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)
    before = [p.detach().clone() for p in module.network.parameters()]
    trainer = L.Trainer(max_steps=4, accelerator="cpu", logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)  # fmt: skip
    trainer.fit(module, loader)
    assert trainer.global_step == 4
    after = list(module.network.parameters())
    assert all(torch.isfinite(p).all() for p in after)
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    assert module.training_step((x[:16], y[:16]), 0).isfinite()


def test_reward_below_k_does_not_warn(caplog):
    with caplog.at_level(logging.WARNING, logger="fdbench.training.methods"):
        _deepgamblers(reward=2.2, num_classes=3)
    assert not caplog.records


@pytest.mark.parametrize("reward", [1.0, 0.5])
def test_reward_must_exceed_one(reward):
    with pytest.raises(ValueError, match="reward must be > 1"):
        _deepgamblers(reward=reward)
