"""Learning-rate schedules of the training recipes: cosine, warm-up cosine, multi-step, step.

FD-Shifts (Jaeger et al., ICLR 2023, Appendix E.3 and Table 4) trains every CNN with cosine
annealing without restarts, ``torch.optim.lr_scheduler.CosineAnnealingLR(T_max=epochs)``
stepped once per epoch (``lr_scheduler_interval="epoch"``, ``fd_shifts/configs/__init__.py``;
``cnn()`` in ``fd_shifts/experiments/configs.py``), and ViTs with pl_bolts'
``LinearWarmupCosineAnnealingLR(warmup_epochs=500, max_epochs=steps, warmup_start_lr=0)``
stepped every batch (``vit()`` there and ``fd_shifts/models/vit_model.py``). The multi-step
and step decays are the original schedules of the methods FD-Shifts re-trained (e.g. DeVries &
Taylor 2018), which its Appendix J compares against.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["lr_factor", "make_scheduler"]


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
        "name must be one of constant, cosine, warmup_cosine, multistep, step, "
        f"got {name!r}"
    )


def make_scheduler(
    optimizer: torch.optim.Optimizer,
    schedule: str | Any,
    *,
    steps: int,
    epochs: int,
) -> dict[str, Any] | None:
    """A Lightning ``lr_scheduler`` entry for ``schedule`` (``"cosine"``, ``"constant"`` or a
    :class:`~fdbench.config.ScheduleConfig`); ``None`` for a constant rate.

    ``steps``/``epochs``: the number of batches/epochs of the whole training. The string
    ``"cosine"`` is torch's ``CosineAnnealingLR`` over all batches (fdbench's historical
    default, kept as it was); a ``ScheduleConfig`` named ``cosine`` with ``interval: epoch`` is
    FD-Shifts' CNN schedule, torch's ``CosineAnnealingLR(T_max=epochs)``; ``multistep`` and
    ``step`` are torch's ``MultiStepLR``/``StepLR``; ``warmup_cosine`` is :func:`lr_factor`.
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
    else:
        warmup = schedule.warmup
        scheduler = sched.LambdaLR(
            optimizer, lambda t: lr_factor("warmup_cosine", min(t, total), total, warmup=warmup)
        )
    return {"scheduler": scheduler, "interval": interval}
