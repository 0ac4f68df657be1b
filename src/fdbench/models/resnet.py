"""ResNet-18 and ResNet-50 with the CIFAR-style stem (3 × 3 conv, no max-pooling) or ImageNet's."""

from __future__ import annotations

from torch import nn

from .dropout import dropout_layers, resolve_placement

__all__ = ["ResNet", "resnet18", "resnet50"]


def _drop(p: float) -> nn.Module:
    return nn.Sequential(*dropout_layers(p))


class _Basic(nn.Module):
    expansion = 1

    def __init__(self, c_in: int, c: int, stride: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
        self.shortcut = _shortcut(c_in, c, stride)
        self.drop1, self.drop2 = _drop(dropout), _drop(dropout)

    def forward(self, x):
        out = self.drop1(self.relu(self.bn1(self.conv1(x))))
        return self.relu(self.drop2(self.bn2(self.conv2(out))) + self.shortcut(x))


class _Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, c_in: int, c: int, stride: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.conv3 = nn.Conv2d(c, 4 * c, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(4 * c)
        self.relu = nn.ReLU()
        self.shortcut = _shortcut(c_in, 4 * c, stride)
        self.drop1, self.drop2, self.drop3 = _drop(dropout), _drop(dropout), _drop(dropout)

    def forward(self, x):
        out = self.drop1(self.relu(self.bn1(self.conv1(x))))
        out = self.drop2(self.relu(self.bn2(self.conv2(out))))
        return self.relu(self.drop3(self.bn3(self.conv3(out))) + self.shortcut(x))


def _shortcut(c_in: int, c_out: int, stride: int) -> nn.Module:
    if stride == 1 and c_in == c_out:
        return nn.Identity()
    return nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))


#: Stems of :class:`ResNet`.
STEMS = ("cifar", "imagenet")


class ResNet(nn.Module):
    """ResNet feature extractor (He et al. 2016) with a CIFAR or an ImageNet stem.

    Stem ``"cifar"`` (default): 3 × 3 conv (stride 1) + batch norm + ReLU, no max-pooling;
    ``"imagenet"``: 7 × 7 conv (stride 2, padding 3) + batch norm + ReLU + 3 × 3 max-pooling
    (stride 2, padding 1), torchvision's stem that FD-Shifts' ResNet-50 keeps for CAMELYON,
    iWildCam and BREEDS (``fd_shifts/models/networks/resnet50_imagenet.py``), with dropout
    after the ReLU wherever the placement puts dropout in the blocks (FD-Shifts' ``dropout1``).
    Then four stages of residual
    blocks (widths ``base``, 2·, 4·, 8·``base``; strides 1, 2, 2, 2); global average pooling.
    ``feature_dim`` = 8·``base``·expansion. Dropout at rate ``dropout`` where ``placement``
    puts it (see :func:`~fdbench.models.dropout.resolve_placement`): ``"fdshifts"`` after every
    convolution of every block, before the residual sum (FD-Shifts'
    ``fd_shifts/models/networks/resnet50_imagenet.py``; the shortcut projection is not
    followed by dropout); ``"every_conv"``/``"every_layer"`` the stem convolution too.
    :attr:`sequence` holds stem, blocks and pooling in order.
    """

    def __init__(
        self,
        block: type,
        layers: tuple[int, ...],
        in_channels: int = 3,
        base: int = 64,
        *,
        dropout: float = 0.0,
        placement: str | None = None,
        stem: str = "cifar",
    ) -> None:
        super().__init__()
        if base < 1:
            raise ValueError(f"base must be >= 1, got {base}")
        if stem not in STEMS:
            raise ValueError(f"stem must be one of {STEMS}, got {stem!r}")
        placement = resolve_placement("resnet18", placement)
        in_blocks = 0.0 if placement == "head" else dropout
        in_stem = dropout if placement in ("every_conv", "every_layer") else 0.0
        if stem == "cifar":
            self.stem = nn.Sequential(
                nn.Conv2d(in_channels, base, 3, 1, 1, bias=False),
                nn.BatchNorm2d(base),
                nn.ReLU(),
                *dropout_layers(in_stem),
            )
        else:
            self.stem = nn.Sequential(
                nn.Conv2d(in_channels, base, 7, 2, 3, bias=False),
                nn.BatchNorm2d(base),
                nn.ReLU(),
                *dropout_layers(in_blocks),
                nn.MaxPool2d(3, 2, 1),
            )
        stages: list[nn.Module] = []
        c_in = base
        for i, n in enumerate(layers):
            c = base * 2**i
            for j in range(n):
                stages.append(block(c_in, c, 2 if (j == 0 and i > 0) else 1, in_blocks))
                c_in = c * block.expansion
        self.stages = nn.Sequential(*stages)
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.feature_dim = c_in

    @property
    def sequence(self) -> nn.Sequential:
        """Stem, residual blocks and pooling in order (their composition is :meth:`forward`)."""
        return nn.Sequential(self.stem, *self.stages, self.pool)

    def forward(self, x):
        return self.pool(self.stages(self.stem(x)))


def resnet18(
    in_channels: int = 3,
    base: int = 64,
    *,
    dropout: float = 0.0,
    placement: str | None = None,
    stem: str = "cifar",
) -> ResNet:
    """ResNet-18: basic blocks (2, 2, 2, 2)."""
    return ResNet(
        _Basic, (2, 2, 2, 2), in_channels, base, dropout=dropout, placement=placement, stem=stem
    )


def resnet50(
    in_channels: int = 3,
    base: int = 64,
    *,
    dropout: float = 0.0,
    placement: str | None = None,
    stem: str = "cifar",
) -> ResNet:
    """ResNet-50: bottleneck blocks (3, 4, 6, 3)."""
    return ResNet(
        _Bottleneck,
        (3, 4, 6, 3),
        in_channels,
        base,
        dropout=dropout,
        placement=placement,
        stem=stem,
    )
