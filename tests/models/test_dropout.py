"""Dropout placements of the architectures and seeded sampling of their dropout layers."""

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from fdbench.config.schema import ArchitectureConfig  # noqa: E402
from fdbench.models import build_model  # noqa: E402
from fdbench.models.dropout import (  # noqa: E402
    SampledDropout,
    first_dropout,
    resolve_placement,
    sampling,
)


def _layout(sequence: nn.Sequential) -> list[str]:
    names = {nn.Conv2d: "conv", nn.MaxPool2d: "pool", nn.AdaptiveAvgPool2d: "gap",
             nn.Linear: "fc", SampledDropout: "drop"}  # fmt: skip
    return [names[type(m)] for m in sequence if type(m) in names]


def _rates(net: nn.Module) -> list[float]:
    return [m.p for m in net.modules() if isinstance(m, SampledDropout)]


def _convnet(placement, dropout=0.3):
    return build_model(
        "convnet", num_classes=3, dropout=dropout, dropout_placement=placement, width=2,
        feature_dim=6,
    )  # fmt: skip


def test_convnet_placements():
    # FD-Shifts' svhn_small_conv.py: dropout after each pooled stage and after the hidden fc
    fdshifts = _convnet("fdshifts")
    assert _layout(fdshifts.body.sequence) == [
        "conv", "pool", "drop", "conv", "pool", "drop", "conv", "gap", "drop", "fc",
    ]  # fmt: skip
    assert _rates(fdshifts) == [0.3] * 4  # three in the body, then Network.dropout
    for name in ("every_conv", "every_layer"):
        assert _layout(_convnet(name).body.sequence) == [
            "conv", "drop", "pool", "conv", "drop", "pool", "conv", "drop", "gap", "fc",
        ]  # fmt: skip
    assert _layout(_convnet("fc").body.sequence) == [
        "conv", "pool", "conv", "pool", "conv", "gap", "drop", "fc",
    ]  # fmt: skip
    assert _layout(_convnet("head").body.sequence) == [
        "conv", "pool", "conv", "pool", "conv", "gap", "fc",
    ]  # fmt: skip
    # the default is FD-Shifts' placement
    assert _layout(_convnet(None).body.sequence) == _layout(fdshifts.body.sequence)


def test_vgg13_fdshifts_rates_match_fd_shifts():
    # fd_shifts/models/networks/vgg.py with dropout_rate 1: 0.3 after the first conv, 0.4 after
    # every other conv not followed by pooling, 0.5 before and after the hidden fc
    net = build_model("vgg13", num_classes=3, dropout=0.5, feature_dim=8, width_factor=0.0625)
    assert _rates(net) == pytest.approx([0.3, 0.4, 0.4, 0.4, 0.4, 0.5, 0.5])
    layout = _layout(net.body.sequence)
    assert layout[:4] == ["conv", "drop", "conv", "pool"]
    assert layout[-3:] == ["gap", "drop", "fc"]
    every = build_model("vgg13", num_classes=3, dropout=0.1, dropout_placement="every_layer",
                        feature_dim=8, width_factor=0.0625)  # fmt: skip
    assert _rates(every) == pytest.approx([0.1] * 11)  # ten convs, then the final layer
    fc = build_model("vgg13", num_classes=3, dropout=0.5, dropout_placement="fc",
                     feature_dim=8, width_factor=0.0625)  # fmt: skip
    assert _rates(fc) == [0.5, 0.5]  # before the hidden and the final linear layer


def test_resnet_placements():
    kwargs = {"num_classes": 3, "dropout": 0.1, "base": 2}
    assert len(_rates(build_model("resnet18", **kwargs))) == 2 * 8 + 1
    assert len(_rates(build_model("resnet18", dropout_placement="every_conv", **kwargs))) == 18
    assert len(_rates(build_model("resnet50", **kwargs))) == 3 * 16 + 1
    assert _rates(build_model("resnet18", dropout_placement="head", **kwargs)) == [0.1]


def test_no_dropout_means_no_dropout_layers_and_same_initial_weights():
    for placement in ("head", "fdshifts", "every_conv"):
        torch.manual_seed(0)
        plain = _convnet(placement, dropout=0.0)
        assert not [m for m in plain.body.modules() if isinstance(m, nn.Dropout)]
        torch.manual_seed(0)
        dropped = _convnet(placement, dropout=0.3)
        for a, b in zip(plain.parameters(), dropped.parameters(), strict=True):
            assert torch.equal(a, b)


def test_eval_outputs_deterministic_train_and_sampling_stochastic():
    torch.manual_seed(0)
    net = _convnet("fdshifts", dropout=0.5).eval()
    x = torch.randint(0, 256, (8, 1, 12, 12), dtype=torch.uint8)
    assert torch.equal(net(x), net(x))
    with sampling(net, torch.Generator().manual_seed(1)):
        a, b = net(x), net(x)
    assert not torch.equal(a, b)
    with sampling(net, torch.Generator().manual_seed(1)):
        assert torch.equal(net(x), a)  # same seed, same masks
    assert torch.equal(net(x), net(x))  # sampling ends with the block
    assert all(m.generator is None for m in net.modules() if isinstance(m, SampledDropout))


def test_sampled_dropout_is_inverted_bernoulli():
    layer = SampledDropout(0.25)
    x = torch.ones(20_000, dtype=torch.float64)
    with sampling(layer, torch.Generator().manual_seed(0)):
        y = layer(x)
    assert set(torch.unique(y).tolist()) == {0.0, 1 / 0.75}
    assert abs(float((y == 0).double().mean()) - 0.25) < 0.01


def test_first_dropout():
    seq = _convnet("fdshifts").body.sequence
    assert first_dropout(seq) == 4  # conv, bn, relu, pool, then the first dropout
    assert first_dropout(_convnet("head").body.sequence) == len(_convnet("head").body.sequence)


def test_bad_placements():
    with pytest.raises(ValueError, match="dropout_placement for 'vit' must be one of"):
        resolve_placement("vit", "fdshifts")
    with pytest.raises(ValueError, match="must be one of"):
        resolve_placement("convnet", "everywhere")
    with pytest.raises(ValueError, match="vit supports only dropout_placement 'head'"):
        ArchitectureConfig(name="vit", dropout_placement="every_conv")
    with pytest.raises(ValueError, match="dropout_placement for 'resnet18' must be one of"):
        resolve_placement("resnet18", "fc")
    with pytest.raises(ValueError, match="no hidden fully connected layer"):
        ArchitectureConfig(name="resnet50", dropout_placement="fc")
    assert ArchitectureConfig(name="vgg13").dropout_placement is None


def test_resnet_imagenet_stem():
    # FD-Shifts' resnet50_imagenet.py: 7x7/2 conv, BN, ReLU, dropout, 3x3/2 max-pool, blocks
    kwargs = {"num_classes": 3, "dropout": 0.1, "base": 2, "in_channels": 3}
    net = build_model("resnet50", stem="imagenet", **kwargs)
    conv, *_ = net.body.stem
    assert (conv.kernel_size, conv.stride, conv.padding) == ((7, 7), (2, 2), (3, 3))
    assert isinstance(net.body.stem[-1], nn.MaxPool2d)
    assert len(_rates(net)) == 1 + 3 * 16 + 1  # stem, every block conv, before the final layer
    assert len(_rates(build_model("resnet50", stem="imagenet", dropout_placement="head",
                                  **kwargs))) == 1  # fmt: skip
    x = torch.randint(0, 256, (2, 3, 32, 32), dtype=torch.uint8)
    assert net.eval().features(x).shape == (2, 64)
    with pytest.raises(ValueError, match="stem must be one of"):
        build_model("resnet50", stem="vit", **kwargs)
