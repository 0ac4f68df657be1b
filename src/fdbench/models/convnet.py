"""A small convolutional network for 28 × 28 (grey or colour) images."""

from __future__ import annotations

from torch import nn

__all__ = ["SmallConvNet"]


def _block(c_in: int, c_out: int) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU()]


class SmallConvNet(nn.Module):
    """Feature extractor: three conv stages (``width``, ``2·width``, ``4·width`` channels).

    Stages 1 and 2 end in 2 × 2 max-pooling, stage 3 in global average pooling, followed by a
    linear layer to ``feature_dim`` units with ReLU. Input N × C × H × W (any H, W >= 4);
    output N × ``feature_dim``.
    """

    def __init__(self, in_channels: int = 1, width: int = 32, feature_dim: int = 128) -> None:
        super().__init__()
        if width < 1 or feature_dim < 1:
            raise ValueError(f"width and feature_dim must be >= 1, got {width}, {feature_dim}")
        self.feature_dim = feature_dim
        self.net = nn.Sequential(
            *_block(in_channels, width),
            nn.MaxPool2d(2),
            *_block(width, 2 * width),
            nn.MaxPool2d(2),
            *_block(2 * width, 4 * width),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(4 * width, feature_dim),
            nn.ReLU(),
        )

    def forward(self, x):
        return self.net(x)
