"""The training device and precision settings: resolution, Lightning arguments, configs, and a
benchmark trained in bfloat16 autocast (inference stays float64)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("lightning")

from fdbench.config.schema import TrainingConfig  # noqa: E402
from fdbench.jobs.plan import load_config, parse_config  # noqa: E402
from fdbench.training.device import lightning_settings, resolve_device  # noqa: E402
from tests.data._robustness_layouts import N_VAL, SIZE, write_camelyon  # noqa: E402

NO_GPU = not torch.cuda.is_available()


@pytest.mark.skipif(not NO_GPU, reason="a GPU is visible: 'auto' resolves to it")
def test_auto_is_the_cpu_without_a_gpu():
    assert resolve_device("auto") == "cpu"
    assert lightning_settings("auto") == {"accelerator": "cpu", "deterministic": True}
    with pytest.raises(ValueError, match=r"training\.device is 'cuda' but PyTorch sees no GPU"):
        resolve_device("cuda")


@pytest.mark.skipif(NO_GPU, reason="needs a visible GPU")
def test_auto_is_the_gpu_with_one():
    assert resolve_device("auto") == "cuda"
    assert lightning_settings("cuda")["accelerator"] == "gpu"


def test_settings():
    assert lightning_settings("cpu") == {"accelerator": "cpu", "deterministic": True}
    assert lightning_settings("cpu", "bf16-mixed")["precision"] == "bf16-mixed"
    with pytest.raises(ValueError, match="device must be one of"):
        resolve_device("tpu")
    with pytest.raises(ValueError, match="precision must be one of"):
        lightning_settings("cpu", "16-mixed")


def test_config_fields_and_dump():
    assert TrainingConfig(precision=32).precision == "32"
    assert TrainingConfig(precision="bf16-mixed", device="cpu").model_dump()["device"] == "cpu"
    dump = TrainingConfig().model_dump()
    assert "device" not in dump and "precision" not in dump  # defaults keep config digests
    with pytest.raises(ValueError):
        TrainingConfig(device="gpu")
    with pytest.raises(ValueError):
        TrainingConfig(precision=True)


def test_steps_need_a_per_batch_schedule():
    assert TrainingConfig(steps=5, schedule="cosine").steps == 5
    assert "steps" not in TrainingConfig().model_dump()
    with pytest.raises(ValueError, match="schedule must be stepped per batch"):
        TrainingConfig(steps=5, schedule={"name": "cosine", "interval": "epoch"})


def test_trainer_runs_the_given_number_of_steps():
    from fdbench.training.context import trainer

    assert trainer(3, steps=7).max_steps == 7
    assert trainer(3).max_epochs == 3 and trainer(3).max_steps == -1


def test_bf16_training_keeps_float64_logits_and_cpu_equals_auto(tmp_path):
    from fdbench.jobs.benchmark import run_benchmark
    from fdbench.outputs.load import load_outputs

    write_camelyon(tmp_path / "data")
    config = Path(__file__).resolve().parents[2] / "src/fdbench/configs/fdshifts_camelyon.yaml"
    base = load_config(config).model_dump(mode="json")
    base["data"]["args"].update(data_dir=str(tmp_path / "data"), image_size=SIZE, n_val=N_VAL,
                                max_per_study=12, max_train=24)  # fmt: skip
    base["architecture"]["options"] = {"stem": "imagenet", "base": 2}
    base.update(
        inference={"mc_samples": 0, "batch_size": 64, "max_train_samples": 24},
        methods=[{"name": "ce", "kind": "ce", "seeds": [0]}],
        analysis={"n_bootstrap": 0},
    )
    out = {}
    for label, extra in (("auto", {}), ("cpu", {"device": "cpu"}),
                         ("bf16", {"precision": "bf16-mixed"})):  # fmt: skip
        raw = {**base, "training": {**base["training"], "epochs": 1, "batch_size": 12,
                                    "threads": 1, **extra}}  # fmt: skip
        out[label] = run_benchmark(parse_config(raw), tmp_path / label, report=False)
    import pandas as pd

    pd.testing.assert_frame_equal(out["auto"], out["cpu"])
    stores = sorted((tmp_path / "bf16").rglob("outputs.zarr"))
    assert stores, "the bf16 benchmark wrote no outputs"
    run = load_outputs(stores[0])
    assert all(split.logits.dtype == np.float64 for split in run.splits.values())
    aurc = out["bf16"][out["bf16"]["metric"] == "aurc"]["value"]
    assert len(aurc) and aurc.between(0, 1).all()
