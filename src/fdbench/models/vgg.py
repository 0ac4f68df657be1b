"""VGG-13 with batch normalisation and a CIFAR-style (32 × 32) head, as used by FD-Shifts."""

from __future__ import annotations

from torch import nn

__all__ = ["VGG13"]

_VGG13 = (64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")


class VGG13(nn.Module):
    """VGG-13 feature extractor (Simonyan & Zisserman 2015) for small images.

    Ten 3 × 3 conv layers with batch norm in five stages (each ending in 2 × 2 max-pooling),
    then global average pooling and one hidden linear layer of ``feature_dim`` units with ReLU.
    ``width_factor`` scales every channel count (1.0 = the original widths).
    """

    def __init__(
        self, in_channels: int = 3, feature_dim: int = 512, width_factor: float = 1.0
    ) -> None:
        super().__init__()
        if width_factor <= 0:
            raise ValueError(f"width_factor must be positive, got {width_factor}")
        self.feature_dim = feature_dim
        layers: list[nn.Module] = []
        c = in_channels
        for v in _VGG13:
            if v == "M":
                layers.append(nn.MaxPool2d(2, ceil_mode=True))
                continue
            out = max(1, round(v * width_factor))
            layers += [nn.Conv2d(c, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU()]
            c = out
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, feature_dim), nn.ReLU()]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)
