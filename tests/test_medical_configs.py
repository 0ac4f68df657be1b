"""The medical testbed presets parse, and the new options keep other configs' dumps unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from fdbench.jobs.plan import load_config

CONFIGS = Path(__file__).resolve().parents[1] / "src" / "fdbench" / "configs"
MEDICAL = sorted(p.name for p in CONFIGS.glob("medical_*.yaml"))
BINARY = {"medical_rsna_pneumonia", "medical_eyepacs", "medical_embedded", "medical_embedded_quick"}


def test_all_six_experiments_and_the_embedded_variant():
    assert len(MEDICAL) == 8


@pytest.mark.parametrize("name", MEDICAL)
def test_medical_preset(name):
    config = load_config(CONFIGS / name)
    assert config.name == name.removesuffix(".yaml")
    assert config.training.schedule.name == "plateau"
    assert config.training.schedule.stop_patience == 15
    assert config.architecture.dropout == 0.1
    assert config.architecture.dropout_placement == "every_layer"
    assert config.analysis.seed_boxplots
    assert (config.data.binary_protocol is not None) == (config.name in BINARY)
    if config.data.binary_protocol is not None:
        assert config.data.binary_protocol.fpr == 0.2


@pytest.mark.parametrize("name", ["fashion_mnist.yaml", "fdshifts_cifar10.yaml"])
def test_new_options_left_out_of_other_dumps(name):
    config = load_config(CONFIGS / name)
    dump = config.model_dump()
    assert "binary_protocol" not in dump["data"]
    assert "seed_boxplots" not in dump["analysis"]
    schedule = dump["training"]["schedule"]
    if isinstance(schedule, dict):
        assert "patience" not in schedule and "stop_patience" not in schedule
