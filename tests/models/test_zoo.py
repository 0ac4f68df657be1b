"""The timm wrapper (only where the optional timm extra is installed)."""

import pytest

torch = pytest.importorskip("torch")
timm = pytest.importorskip("timm", reason="timm (optional extra 'zoo') is not installed")

from fdbench.models.zoo import build_zoo_model  # noqa: E402


def test_zoo_model_matches_timm_logits():
    torch.manual_seed(0)
    net = build_zoo_model("resnet18", pretrained=False)
    torch.manual_seed(0)
    reference = timm.create_model("resnet18", pretrained=False).eval()
    x = torch.randint(0, 256, (2, 3, 64, 64), dtype=torch.uint8)
    with torch.no_grad():
        features = net.features(x)
        assert features.shape == (2, 512)
        normalized = net.normalize(x)
        torch.testing.assert_close(net(x), reference(normalized))
