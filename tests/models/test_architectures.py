"""Shapes, heads and dropout placement of the architectures in fdbench.models."""

import pytest

torch = pytest.importorskip("torch")

from fdbench.models import ARCHITECTURES, build_model  # noqa: E402

TINY = {
    "convnet": {"width": 4, "feature_dim": 16},
    "vgg13": {"feature_dim": 16, "width_factor": 0.0625},
    "resnet18": {"base": 4},
    "resnet50": {"base": 2},
    "vit": {"patch_size": 4, "dim": 16, "depth": 1, "heads": 2},
    "vit_b16": {"img_size": 8, "patch_size": 4, "dim": 16, "depth": 1, "heads": 2},
}
FEATURES = {"convnet": 16, "vgg13": 16, "resnet18": 32, "resnet50": 64, "vit": 16, "vit_b16": 16}


@pytest.mark.parametrize("arch", ARCHITECTURES)
@pytest.mark.parametrize("channels", [1, 3])
def test_forward_and_feature_shapes(arch, channels):
    torch.manual_seed(0)
    net = build_model(
        arch, num_classes=5, in_channels=channels, image_size=16, dropout=0.5, **TINY[arch]
    ).eval()
    x = torch.randint(0, 256, (3, channels, 16, 16), dtype=torch.uint8)
    features = net.features(x)
    assert features.shape == (3, FEATURES[arch])
    assert net.classifier.in_features == FEATURES[arch]
    assert net(x).shape == (3, 5)
    # forward = classifier(features) in eval mode: dropout is the only layer in between
    torch.testing.assert_close(net(x), net.classifier(features))


def test_convnet_on_28x28_grey():
    net = build_model("convnet", num_classes=6, width=4, feature_dim=8).eval()
    x = torch.zeros(2, 1, 28, 28, dtype=torch.uint8)
    assert net(x).shape == (2, 6)


def test_deepgamblers_head_has_reservation_output():
    net = build_model("convnet", num_classes=4, head="deepgamblers", width=4, feature_dim=8)
    x = torch.randint(0, 256, (5, 1, 12, 12), dtype=torch.uint8)
    assert net(x).shape == (5, 5)
    assert net.num_classes == 4
    assert net.classifier.out_features == 5


def test_devries_and_confidnet_heads():
    dv = build_model("convnet", num_classes=3, head="devries", width=4, feature_dim=8)
    assert dv.devries.in_features == 8 and dv.devries.out_features == 1
    assert dv.confidnet is None
    cn = build_model(
        "convnet", num_classes=3, head="confidnet", width=4, feature_dim=8, confidnet_hidden=7,
        confidnet_depth=3,
    )  # fmt: skip
    f = torch.randn(6, 8)
    assert cn.confidnet(f).shape == (6,)
    linears = [m for m in cn.confidnet.modules() if isinstance(m, torch.nn.Linear)]
    assert [m.out_features for m in linears] == [7, 7, 1]


def test_head_placement_has_dropout_only_between_features_and_classifier():
    net = build_model(
        "convnet", num_classes=3, dropout=0.4, dropout_placement="head", width=4, feature_dim=8
    )
    drops = [n for n, m in net.named_modules() if isinstance(m, torch.nn.Dropout)]
    assert drops == ["dropout"]
    net.train()
    x = torch.randint(0, 256, (4, 1, 8, 8), dtype=torch.uint8)
    net.body.eval()  # freeze batch-norm statistics so only dropout can differ between calls
    assert not torch.equal(net(x), net(x))
    net.eval()
    assert torch.equal(net(x), net(x))


def test_normalisation_uses_given_statistics():
    net = build_model("convnet", num_classes=2, mean=(0.2,), std=(0.5,), width=4, feature_dim=8)
    x = torch.full((1, 1, 4, 4), 51, dtype=torch.uint8)  # 51 / 255 = 0.2
    assert torch.allclose(net.normalize(x), torch.zeros(1, 1, 4, 4))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"architecture": "alexnet"}, "architecture must be one of"),
        ({"dropout": 1.0}, "dropout must lie in"),
        ({"head": "mahalanobis"}, "head must be None or one of"),
        ({"num_classes": 1}, "num_classes must be >= 2"),
        ({"mean": (0.5, 0.5)}, "mean and std must have 1 entries"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, match):
    args = {"architecture": "convnet", "num_classes": 3, "width": 4, "feature_dim": 8, **kwargs}
    with pytest.raises(ValueError, match=match):
        build_model(args.pop("architecture"), **args)


def test_vit_rejects_indivisible_patch():
    with pytest.raises(ValueError, match="multiple of patch_size"):
        build_model("vit", num_classes=3, image_size=10, patch_size=4, dim=8, heads=2)
