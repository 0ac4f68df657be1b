"""benchmarks/device_timing.py runs end to end on the CPU with tiny data and prints its fields."""

import importlib.util
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "device_timing.py"


def _script():
    spec = importlib.util.spec_from_file_location("device_timing", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cpu_timing_prints_and_returns_its_fields(capsys):
    argv = ["--device", "cpu", "--n", "64", "--batch-size", "32", "--mc-samples", "1"]
    results = _script().main([*argv, "--warmup-steps", "1", "--threads", "1"])
    out = capsys.readouterr().out
    assert results["device"] == "cpu" and results["inference_device"] == "cpu"
    assert results["precision"] == "32" and results["threads"] == 1
    assert results["torch"] == torch.__version__
    assert results["device_name"] and results["device_name"] in out
    assert results["epoch_s"] > 0 and results["deterministic_pass_s"] > 0
    assert results["train_samples_per_s"] == pytest.approx(64 / results["epoch_s"])
    assert results["cifar10_epoch_s_extrapolated"] == pytest.approx(
        results["epoch_s"] * 45_000 / 64
    )
    assert results["cifar10_mc_pass_s_extrapolated"] == pytest.approx(
        results["mc_pass_s"] * 45_000 / 64
    )
    assert len(results["load_average"]) == 3
    for field in (
        "device: cpu (",
        f"torch: {torch.__version__}, precision: 32",
        "data: 64 random 32x32x3 images (random labels), batch size 32",
        "epoch: ",
        "samples/s",
        "MC pass (inference on cpu",
        "extrapolation to FD-Shifts' CIFAR-10 (45000 training images)",
        "load average (1, 5, 15 min): ",
    ):
        assert field in out, field


def test_bad_arguments_are_errors_naming_them():
    script = _script()
    with pytest.raises(ValueError, match="--n must be >= 1"):
        script.main(["--device", "cpu", "--n", "0"])
    with pytest.raises(SystemExit):
        script.main(["--precision", "16"])
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match=r"training\.device is 'cuda'"):
            script.main(["--device", "cuda", "--n", "8"])
