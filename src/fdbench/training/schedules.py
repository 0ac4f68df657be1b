"""Learning-rate schedules of the training recipes: cosine, warm-up cosine, multi-step, step.

FD-Shifts (Jaeger et al., ICLR 2023, Appendix E.3 and Table 4) trains every CNN with cosine
annealing without restarts, ``torch.optim.lr_scheduler.CosineAnnealingLR(T_max=epochs)``
stepped once per epoch (``lr_scheduler_interval="epoch"``, ``fd_shifts/configs/__init__.py``;
``cnn()`` in ``fd_shifts/experiments/configs.py``), and ViTs with pl_bolts'
``LinearWarmupCosineAnnealingLR(warmup_epochs=500, max_epochs=steps, warmup_start_lr=0)``
stepped every batch (``vit()`` there and ``fd_shifts/models/vit_model.py``). The multi-step
and step decays are the original schedules of the methods FD-Shifts re-trained (e.g. DeVries &
Taylor 2018), which its Appendix J compares against. ``plateau`` is the recipe of Bernhardt et
al. (TMLR 2022, Section 3.2.1): rate divided by 10 after 10 epochs without a decrease of the
validation loss, stop after 15 such epochs, test the weights with the lowest validation loss
(authors' ``models/pl_module.py``: ``ReduceLROnPlateau(patience=10)``; ``classification/
train.py``: ``EarlyStopping(patience=15)`` and the best-``Val/loss`` checkpoint).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import lightning as L
import torch

__all__ = ["BestValidationLoss", "lr_factor", "make_scheduler", "plateau_callbacks"]

#: The epochs without a validation-loss decrease before ``plateau`` lowers the rate.
PLATEAU_PATIENCE = 10
#: The logged metric the ``plateau`` recipe watches.
VAL_LOSS = "val_loss"


def lr_factor(
    name: str,
    t: int,
    total: int,
    *,
    warmup: int = 0,
    milestones: tuple[int, ...] | list[int] = (),
    step_size: int | None = None,
    gamma: float = 0.1,
) -> float:
    """The learning rate at interval ``t`` (0-based) of ``total``, as a fraction of the initial.

    - ``constant``: 1;
    - ``cosine``: ½ (1 + cos(π t / total));
    - ``warmup_cosine``: t / (warmup − 1) for t < warmup (0 at t = 0; 1 if warmup = 1), then
      ½ (1 + cos(π (t − warmup) / (total − warmup))) (pl_bolts' closed form with
      ``warmup_start_lr = eta_min = 0``);
    - ``multistep``: gamma ** (number of milestones ≤ t);
    - ``step``: gamma ** ⌊t / step_size⌋.
    """
    if t < 0 or total < 1:
        raise ValueError(f"t must be >= 0 and total >= 1, got t={t}, total={total}")
    if name == "constant":
        return 1.0
    if name == "cosine":
        return 0.5 * (1 + math.cos(math.pi * t / total))
    if name == "warmup_cosine":
        if warmup < 1:
            raise ValueError(f"warmup must be >= 1 for warmup_cosine, got {warmup}")
        if t < warmup:
            return t / (warmup - 1) if warmup > 1 else 1.0
        return 0.5 * (1 + math.cos(math.pi * (t - warmup) / max(1, total - warmup)))
    if name == "multistep":
        return gamma ** sum(m <= t for m in milestones)
    if name == "step":
        if step_size is None or step_size < 1:
            raise ValueError(f"step_size must be an int >= 1 for step, got {step_size!r}")
        return gamma ** (t // step_size)
    raise ValueError(
        f"name must be one of constant, cosine, warmup_cosine, multistep, step, got {name!r}"
    )


def make_scheduler(
    optimizer: torch.optim.Optimizer,
    schedule: str | Any,
    *,
    steps: int,
    epochs: int,
) -> dict[str, Any] | None:
    """A Lightning ``lr_scheduler`` entry for ``schedule`` (``"cosine"``, ``"constant"`` or a
    :class:`~fdbench.config.schema.ScheduleConfig`); ``None`` for a constant rate.

    ``steps``/``epochs``: the number of batches/epochs of the whole training. The string
    ``"cosine"`` is torch's ``CosineAnnealingLR`` over all batches (fdbench's historical
    default, kept as it was); a ``ScheduleConfig`` named ``cosine`` with ``interval: epoch`` is
    FD-Shifts' CNN schedule, torch's ``CosineAnnealingLR(T_max=epochs)``; ``multistep`` and
    ``step`` are torch's ``MultiStepLR``/``StepLR``; ``warmup_cosine`` is :func:`lr_factor`;
    ``plateau`` is torch's ``ReduceLROnPlateau(factor=gamma, patience=patience)`` on the
    logged ``val_loss`` (see :func:`plateau_callbacks` for the stop and the best weights).
    """
    if isinstance(schedule, str):
        if schedule == "constant":
            return None
        if schedule != "cosine":
            raise ValueError(f"schedule must be 'cosine' or 'constant', got {schedule!r}")
        cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(1, steps))
        return {"scheduler": cosine, "interval": "step"}
    name, interval = schedule.name, schedule.interval
    total = max(1, steps if interval == "step" else epochs)
    sched = torch.optim.lr_scheduler
    if name == "constant":
        return None
    if name == "cosine":
        scheduler = sched.CosineAnnealingLR(optimizer, T_max=total)
    elif name == "multistep":
        scheduler = sched.MultiStepLR(optimizer, list(schedule.milestones), gamma=schedule.gamma)
    elif name == "step":
        scheduler = sched.StepLR(optimizer, schedule.step_size, gamma=schedule.gamma)
    elif name == "plateau":
        patience = schedule.patience or PLATEAU_PATIENCE
        scheduler = sched.ReduceLROnPlateau(
            optimizer, mode="min", factor=schedule.gamma, patience=patience
        )
        return {"scheduler": scheduler, "interval": "epoch", "monitor": VAL_LOSS}
    else:
        warmup = schedule.warmup
        scheduler = sched.LambdaLR(
            optimizer, lambda t: lr_factor("warmup_cosine", min(t, total), total, warmup=warmup)
        )
    return {"scheduler": scheduler, "interval": interval}


class BestValidationLoss(L.Callback):
    """Keep the weights of the epoch with the lowest validation loss and restore them when
    training ends; with ``stop_patience``, stop after that many validation epochs in a row
    without a strict decrease (Lightning's ``EarlyStopping`` with ``min_delta=0``)."""

    def __init__(self, stop_patience: int | None = None) -> None:
        if stop_patience is not None and stop_patience < 1:
            raise ValueError(f"stop_patience must be >= 1 or None; got {stop_patience}")
        self.stop_patience = stop_patience
        self.best = math.inf
        self.best_epoch = -1
        self.wait = 0
        self._state: dict[str, torch.Tensor] | None = None

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking:
            return
        value = float(trainer.callback_metrics[VAL_LOSS])
        if value < self.best:
            self.best, self.best_epoch, self.wait = value, trainer.current_epoch, 0
            self._state = copy.deepcopy(pl_module.state_dict())
            return
        self.wait += 1
        if self.stop_patience is not None and self.wait >= self.stop_patience:
            trainer.should_stop = True

    def on_fit_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self._state is not None:
            pl_module.load_state_dict(self._state)


def plateau_callbacks(schedule: str | Any) -> list[L.Callback]:
    """The callbacks a schedule needs from the trainer: :class:`BestValidationLoss` for
    ``plateau``, none otherwise (then no validation loader is needed)."""
    if isinstance(schedule, str) or schedule.name != "plateau":
        return []
    return [BestValidationLoss(schedule.stop_patience)]
