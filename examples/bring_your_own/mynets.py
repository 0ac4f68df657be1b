"""A user's own network for the bring-your-own example: any module with a final linear layer.

fdbench calls ``make(num_classes=K, in_channels=C, image_size=S, **options)`` (the config's
``architecture.factory: "mynets:make"``) and splits the network at ``fc`` (the config's
``architecture.classifier: fc``): everything before it is the body whose output the feature
CSFs read, ``fc`` the final layer.
"""

from __future__ import annotations

import torch
from torch import nn


class TinyNet(nn.Module):
    """Two convolution blocks with pooling, a hidden layer and the final linear layer ``fc``."""

    def __init__(self, num_classes: int, in_channels: int, image_size: int, width: int) -> None:
        super().__init__()
        side = image_size // 4
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, width, 3, padding=1),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1),
            nn.BatchNorm2d(2 * width),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(2 * width * side * side, 64),
            nn.ReLU(),
        )
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


def make(*, num_classes: int, in_channels: int, image_size: int, width: int = 16) -> TinyNet:
    """The factory the configuration names; ``width`` comes from ``architecture.options``."""
    return TinyNet(num_classes, in_channels, image_size, width)
