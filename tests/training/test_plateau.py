"""The plateau recipe (Bernhardt et al.): rate drop on a validation plateau, early stop, best
weights."""

from types import SimpleNamespace

import pytest
import torch

from fdbench.config.schema import ScheduleConfig
from fdbench.jobs.plan import parse_config
from fdbench.training import context
from fdbench.training.jobs import train_or_load
from fdbench.training.schedules import BestValidationLoss, make_scheduler, plateau_callbacks

from .conftest import tiny_config

PLATEAU = {"name": "plateau", "interval": "epoch", "stop_patience": 15}


def test_plateau_divides_the_rate_after_patience_bad_epochs():
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    entry = make_scheduler(opt, ScheduleConfig(**PLATEAU), steps=10, epochs=10)
    assert entry["monitor"] == "val_loss" and entry["interval"] == "epoch"
    scheduler = entry["scheduler"]
    scheduler.step(1.0)
    for _ in range(10):
        scheduler.step(1.0)
    # Ten epochs without a decrease: still 0.1 (torch counts them, as the authors' code).
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    scheduler.step(1.0)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01)


def test_plateau_config_validation_and_digest():
    with pytest.raises(ValueError, match="plateau"):
        ScheduleConfig(name="cosine", patience=3)
    with pytest.raises(ValueError, match="interval"):
        ScheduleConfig(name="plateau")
    assert "patience" not in ScheduleConfig(name="step", step_size=2).model_dump()
    assert plateau_callbacks("cosine") == []
    assert plateau_callbacks(ScheduleConfig(name="step", step_size=2)) == []
    (callback,) = plateau_callbacks(ScheduleConfig(**PLATEAU))
    assert callback.stop_patience == 15


def _fake_trainer(epoch: int, loss: float) -> SimpleNamespace:
    return SimpleNamespace(
        sanity_checking=False,
        current_epoch=epoch,
        callback_metrics={"val_loss": torch.tensor(loss)},
        should_stop=False,
    )


def test_best_validation_loss_stops_and_restores():
    module = torch.nn.Linear(1, 1, bias=False)
    callback = BestValidationLoss(stop_patience=3)
    stopped_at = None
    for epoch, loss in enumerate([3.0, 2.0, 2.0, 2.5, 2.4, 1.0]):
        with torch.no_grad():
            module.weight.fill_(float(epoch))
        trainer = _fake_trainer(epoch, loss)
        callback.on_validation_end(trainer, module)
        if trainer.should_stop:
            stopped_at = epoch
            break
    # Epoch 1 is the best; epochs 2, 3, 4 do not decrease it strictly: stop after epoch 4.
    assert stopped_at == 4 and callback.best_epoch == 1
    callback.on_fit_end(trainer, module)
    assert float(module.weight.detach()) == 1.0


def test_end_to_end_training_with_the_plateau_recipe(experiment, monkeypatch, tmp_path):
    data = tiny_config().model_dump()
    data["training"] = {**data["training"], "epochs": 3, "schedule": PLATEAU}
    config = parse_config(data)
    made = []

    def record(schedule):
        made.extend(plateau_callbacks(schedule))
        return made

    monkeypatch.setattr(context, "plateau_callbacks", record)
    net, _ = train_or_load(config, experiment, "ce", 0, tmp_path)
    (callback,) = made
    assert callback.best < float("inf") and callback.best_epoch in range(3)
    assert not net.training
