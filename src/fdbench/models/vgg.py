"""VGG-13 with batch normalisation and a CIFAR-style (32 × 32) head, as used by FD-Shifts."""

from __future__ import annotations

from torch import nn

from .dropout import dropout_layers, resolve_placement

__all__ = ["VGG13"]

_VGG13 = (64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")


class VGG13(nn.Module):
    """VGG-13 feature extractor (Simonyan & Zisserman 2015) for small images.

    Ten 3 × 3 conv layers with batch norm in five stages (each ending in 2 × 2 max-pooling),
    then global average pooling and one hidden linear layer of ``feature_dim`` units with ReLU.
    ``width_factor`` scales every channel count (1.0 = the original widths). Dropout where
    ``placement`` puts it (see :func:`~fdbench.models.dropout.resolve_placement`):
    ``"fdshifts"`` as FD-Shifts' ``fd_shifts/models/networks/vgg.py`` (after the first
    convolution of each stage, rate 0.6·``dropout`` for the very first and 0.8·``dropout`` for
    the others, and before the hidden linear layer, rate ``dropout``); ``"fc"`` only before the
    hidden linear layer; ``"every_conv"`` and
    ``"every_layer"`` after every convolution (rate ``dropout``). :attr:`sequence` holds all
    layers in order.
    """

    def __init__(
        self,
        in_channels: int = 3,
        feature_dim: int = 512,
        width_factor: float = 1.0,
        *,
        dropout: float = 0.0,
        placement: str | None = None,
    ) -> None:
        super().__init__()
        if width_factor <= 0:
            raise ValueError(f"width_factor must be positive, got {width_factor}")
        placement = resolve_placement("vgg13", placement)
        self.feature_dim = feature_dim
        layers: list[nn.Module] = []
        c = in_channels
        for i, v in enumerate(_VGG13):
            if v == "M":
                layers.append(nn.MaxPool2d(2, ceil_mode=True))
                continue
            out = max(1, round(v * width_factor))
            layers += [nn.Conv2d(c, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU()]
            if placement == "fdshifts" and _VGG13[i + 1] != "M":
                layers += dropout_layers(dropout * (0.6 if i == 0 else 0.8))
            elif placement in ("every_conv", "every_layer"):
                layers += dropout_layers(dropout)
            c = out
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        layers += dropout_layers(dropout if placement in ("fdshifts", "fc") else 0.0)
        layers += [nn.Linear(c, feature_dim), nn.ReLU()]
        self.net = nn.Sequential(*layers)

    @property
    def sequence(self) -> nn.Sequential:
        """The layers in order (their composition is :meth:`forward`)."""
        return self.net

    def forward(self, x):
        return self.net(x)
