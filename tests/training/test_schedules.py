"""Learning-rate schedules against their formulas."""

import math

import pytest
import torch

from fdbench.config.schema import ScheduleConfig
from fdbench.training.schedules import lr_factor, make_scheduler


def _lrs(schedule, steps, epochs, n):
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    entry = make_scheduler(opt, schedule, steps=steps, epochs=epochs)
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        entry["scheduler"].step()
    return out, entry["interval"]


def test_cosine_by_hand():
    assert lr_factor("cosine", 0, 100) == 1.0
    assert lr_factor("cosine", 50, 100) == pytest.approx(0.5)
    assert lr_factor("cosine", 25, 100) == pytest.approx(0.5 * (1 + math.sqrt(0.5)))
    assert lr_factor("cosine", 100, 100) == pytest.approx(0.0)


def test_warmup_cosine_by_hand():
    # pl_bolts: linear from 0 reaching the base rate at t = warmup - 1, then cosine
    assert lr_factor("warmup_cosine", 0, 20, warmup=5) == 0.0
    assert lr_factor("warmup_cosine", 2, 20, warmup=5) == 0.5
    assert lr_factor("warmup_cosine", 4, 20, warmup=5) == 1.0
    assert lr_factor("warmup_cosine", 5, 20, warmup=5) == 1.0
    assert lr_factor("warmup_cosine", 10, 20, warmup=5) == pytest.approx(0.75)
    assert lr_factor("warmup_cosine", 20, 20, warmup=5) == pytest.approx(0.0)


def test_multistep_and_step_by_hand():
    assert [
        lr_factor("multistep", t, 10, milestones=[3, 6], gamma=0.2) for t in (0, 2, 3, 6, 9)
    ] == pytest.approx([1, 1, 0.2, 0.04, 0.04])
    assert [lr_factor("step", t, 10, step_size=4, gamma=0.5) for t in (0, 3, 4, 8)] == [
        1,
        1,
        0.5,
        0.25,
    ]


def test_string_cosine_is_torch_cosine_per_step():
    lrs, interval = _lrs("cosine", 8, 2, 9)
    assert interval == "step"
    assert lrs == pytest.approx([0.1 * lr_factor("cosine", t, 8) for t in range(9)])
    assert (
        make_scheduler(torch.optim.SGD([torch.zeros(1)], lr=1), "constant", steps=5, epochs=1)
        is None
    )


@pytest.mark.parametrize(
    ("spec", "kwargs"),
    [
        ({"name": "cosine", "interval": "epoch"}, {}),
        ({"name": "warmup_cosine", "warmup": 3}, {"warmup": 3}),
        (
            {"name": "multistep", "milestones": [2, 5], "gamma": 0.2, "interval": "epoch"},
            {"milestones": [2, 5], "gamma": 0.2},
        ),
        ({"name": "step", "step_size": 3, "gamma": 0.5}, {"step_size": 3, "gamma": 0.5}),
    ],
)
def test_configured_schedules_follow_their_formula(spec, kwargs):
    schedule = ScheduleConfig(**spec)
    steps, epochs = 12, 7
    total = epochs if schedule.interval == "epoch" else steps
    lrs, interval = _lrs(schedule, steps, epochs, total)
    assert interval == schedule.interval
    expected = [0.1 * lr_factor(schedule.name, t, total, **kwargs) for t in range(total)]
    assert lrs == pytest.approx(expected, abs=1e-12)


def test_schedule_config_validation():
    with pytest.raises(ValueError, match="warmup"):
        ScheduleConfig(name="warmup_cosine")
    with pytest.raises(ValueError, match="milestones"):
        ScheduleConfig(name="multistep", milestones=[5, 3])
    with pytest.raises(ValueError, match="step_size"):
        ScheduleConfig(name="step")
    with pytest.raises(ValueError, match="name must be"):
        lr_factor("linear", 0, 5)
