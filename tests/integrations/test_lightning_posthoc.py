"""The Lightning callback stores penultimate features and the last layer, from which the
post-hoc scores that need no fit are computed; bad ``last_layer`` names are refused."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("lightning")

from lightning.pytorch import LightningModule, Trainer, seed_everything  # noqa: E402

from fdbench.csf.posthoc import PostHocInputs, grid_points, posthoc_scores  # noqa: E402
from fdbench.integrations.lightning import FailureDetectionCallback  # noqa: E402
from fdbench.outputs import read_outputs  # noqa: E402

pytestmark = pytest.mark.torch


class TinyNet(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU())
        self.head = torch.nn.Linear(8, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.head(self.body(x)), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        features = self.body(x)
        return {"logits": self.head(features), "target": y, "features": features}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(seed: int):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(96, 5, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 1).long()
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32)


def test_the_callback_store_holds_what_the_posthoc_scores_read(tmp_path):
    seed_everything(0)
    model = TinyNet()
    callback = FailureDetectionCallback(store=tmp_path / "store", last_layer="head")
    trainer = Trainer(
        max_epochs=1,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        num_sanity_val_steps=0,
        callbacks=[callback],
    )
    trainer.fit(model, _loader(0), _loader(1))
    run = read_outputs(tmp_path / "store")
    split = run.splits["iid"]
    np.testing.assert_array_equal(run.meta["fc_weight"], model.head.weight.double().detach())
    np.testing.assert_array_equal(run.meta["fc_bias"], model.head.bias.double().detach())
    assert split.features.shape == (96, 8)
    np.testing.assert_allclose(
        split.features @ run.meta["fc_weight"].T + run.meta["fc_bias"], split.logits, atol=1e-5
    )
    inputs = PostHocInputs(run)
    fit_free = [s for s in posthoc_scores().values() if not {"train", "val"} & set(s.reads)]
    assert {s.name for s in fit_free} >= {"GEN", "GradNorm", "SCALE", "RL-geo-M"}
    for score in fit_free:
        params = next(grid_points({k: v[:1] for k, v in score.grid.items()}))
        assert np.isfinite(score.compute(inputs, "iid", **params)).all()


def test_a_last_layer_that_is_no_linear_layer_is_refused(tmp_path):
    callback = FailureDetectionCallback(store=tmp_path / "store", last_layer="body")
    trainer = Trainer(
        max_epochs=1,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        num_sanity_val_steps=0,
        callbacks=[callback],
    )
    with pytest.raises(TypeError, match="last_layer"):
        trainer.fit(TinyNet(), _loader(0), _loader(1))
    with pytest.raises(TypeError, match="last_layer"):
        FailureDetectionCallback(last_layer="")
