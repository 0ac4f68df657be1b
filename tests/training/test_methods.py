"""Training methods: DeepGamblers rewards (FD-Shifts' above K), ConfidNet's dropped-out passes."""

import logging

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import lightning as L  # noqa: E402

from fdbench.models import build_model  # noqa: E402
from fdbench.models.dropout import split_at_first_dropout  # noqa: E402
from fdbench.training.context import MethodModule, OptimSettings  # noqa: E402
from fdbench.training.losses import confidnet_loss  # noqa: E402
from fdbench.training.methods import get_method  # noqa: E402
from fdbench.training.methods.confidnet import Stage2  # noqa: E402

_LOGGER = "fdbench.training.methods.deepgamblers"


def _deepgamblers(reward: float, num_classes: int = 2) -> MethodModule:
    torch.manual_seed(0)
    net = build_model("convnet", num_classes=num_classes, head="deepgamblers", dropout=0.3,
                      width=2, feature_dim=4)  # fmt: skip
    settings = OptimSettings(lr=0.05, momentum=0.9, nesterov=False, weight_decay=0.0,
                             schedule="constant")  # fmt: skip
    method = get_method("deepgamblers")({"reward": reward, "pretrain_epochs": 0})
    return MethodModule(net, method, settings)


def test_reward_above_k_trains_and_warns(caplog):
    # FD-Shifts trains DeepGamblers on CAMELYON (K = 2) with o in {2.2, 3, 6, 10}
    with caplog.at_level(logging.WARNING, logger=_LOGGER):
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
    with caplog.at_level(logging.WARNING, logger=_LOGGER):
        _deepgamblers(reward=2.2, num_classes=3)
    assert not caplog.records


@pytest.mark.parametrize("reward", [1.0, 0.5])
def test_reward_must_exceed_one(reward):
    with pytest.raises(ValueError, match="reward"):
        _deepgamblers(reward=reward)


def _confidnet_step(placement: str, dropout: float):
    torch.manual_seed(0)
    net = build_model("convnet", num_classes=3, head="confidnet", dropout=dropout,
                      dropout_placement=placement, width=2, feature_dim=4,
                      confidnet_hidden=4, confidnet_depth=2).eval()  # fmt: skip
    prefix, rest = split_at_first_dropout(net.body)
    x = torch.from_numpy(np.random.default_rng(0).integers(0, 256, (32, 1, 8, 8))).to(torch.uint8)
    y = torch.from_numpy(np.random.default_rng(1).integers(0, 3, 32))
    with torch.no_grad():
        h = prefix(net.normalize(x))
    module = MethodModule(net, Stage2(rest, lr=1e-3))
    module.train()  # as Lightning does before the epoch starts
    module.on_train_epoch_start()
    seen = {}
    net.confidnet.register_forward_hook(lambda m, i, o: seen.__setitem__("head", i[0].clone()))
    net.classifier.register_forward_hook(lambda m, i, o: seen.__setitem__("cls", i[0].clone()))
    losses = []
    for _ in range(2):
        losses.append(module.training_step((h, y), 0))
        seen.setdefault("passes", []).append(seen["head"])
        assert torch.equal(seen["head"], seen["cls"])  # TCP target from the same pass
        with torch.no_grad():
            logits = net.classifier(seen["head"])[:, :3]
        expected = confidnet_loss(net.confidnet(seen["head"]), logits, y)
        torch.testing.assert_close(losses[-1], expected)
    return net, x, seen["passes"]


def test_confidnet_stage_trains_on_dropped_out_passes():
    # FD-Shifts' stage 1 runs the frozen network in training mode: dropout samples, the MLP
    # and the TCP target see the same dropped-out pass; batch norm stays in eval mode
    net, x, passes = _confidnet_step("fc", 0.5)
    assert not torch.equal(passes[0], passes[1])
    assert all(not m.training for m in net.body.modules() if isinstance(m, torch.nn.BatchNorm2d))
    assert net.confidnet.training
    with torch.no_grad():
        deterministic = net.features(x)
    assert not torch.allclose(passes[0], deterministic)


def test_confidnet_stage_without_dropout_sees_the_deterministic_features():
    net, x, passes = _confidnet_step("head", 0.0)
    with torch.no_grad():
        deterministic = net.features(x)
    torch.testing.assert_close(passes[0], deterministic)
    torch.testing.assert_close(passes[1], deterministic)
