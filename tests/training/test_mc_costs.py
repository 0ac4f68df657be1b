"""The cost cuts of MC-dropout inference and SWAG keep their definitions."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from fdbench.jobs.plan import load_config, parse_config  # noqa: E402
from fdbench.models.dropout import SampledDropout, sampling  # noqa: E402
from fdbench.training.methods.swag import SWAGParams  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[2] / "src" / "fdbench" / "configs"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_sampled_dropout_is_the_boolean_mask_definition(dtype, p):
    x = torch.randn(64, 4, 5, 5, dtype=dtype)
    x[x.abs() < 0.5] = 0.0
    x[:3] = -0.0
    layer = SampledDropout(p)
    with sampling(layer, torch.Generator().manual_seed(7)):
        got = layer(x)
    keep = torch.rand(x.shape, generator=torch.Generator().manual_seed(7)) >= p
    expected = x * keep * (1.0 / (1.0 - p))
    bits = torch.int32 if dtype == torch.float32 else torch.int64
    assert got.dtype == dtype
    assert torch.equal(got.view(bits), expected.view(bits))  # signed zeros included


def test_mc_methods():
    config = load_config(CONFIGS / "medical_embedded_quick.yaml")
    assert config.inference.mc_samples_of("ce") == 10
    assert config.inference.mc_samples_of("laplace") == 0
    default = load_config(CONFIGS / "fashion_mnist.yaml")
    assert "mc_methods" not in default.inference.model_dump()
    assert all(default.inference.mc_samples_of(m.name) == default.inference.mc_samples
               for m in default.methods)  # fmt: skip
    data = config.model_dump(mode="json")
    data["inference"]["mc_methods"] = ["ce", "nope"]
    with pytest.raises(ValueError, match="mc_methods"):
        parse_config(data)


def test_swag_bn_subset():
    assert "bn_subset" not in SWAGParams().model_dump()
    assert SWAGParams(bn_subset=0.25).model_dump()["bn_subset"] == 0.25
    for bad in (0, 1.5):
        with pytest.raises(ValueError):
            SWAGParams(bn_subset=bad)
