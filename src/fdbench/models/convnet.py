"""A small convolutional network for 28 × 28 (grey or colour) images."""

from __future__ import annotations

from torch import nn

from .dropout import dropout_layers, resolve_placement

__all__ = ["SmallConvNet"]


def _block(c_in: int, c_out: int) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU()]


class SmallConvNet(nn.Module):
    """Feature extractor: three conv stages (``width``, ``2·width``, ``4·width`` channels).

    Stages 1 and 2 end in 2 × 2 max-pooling, stage 3 in global average pooling, followed by a
    linear layer to ``feature_dim`` units with ReLU. Input N × C × H × W (any H, W >= 4);
    output N × ``feature_dim``. Dropout at rate ``dropout`` where ``placement`` puts it (see
    :func:`~fdbench.models.dropout.resolve_placement`): ``"fdshifts"`` after each stage,
    ``"every_conv"``/``"every_layer"`` after each convolution (before its pooling), ``"fc"``
    before the hidden linear layer, ``"head"`` nowhere in the body. :attr:`sequence` holds all
    layers in order.
    """

    def __init__(
        self,
        in_channels: int = 1,
        width: int = 32,
        feature_dim: int = 128,
        *,
        dropout: float = 0.0,
        placement: str | None = None,
    ) -> None:
        super().__init__()
        if width < 1 or feature_dim < 1:
            raise ValueError(f"width and feature_dim must be >= 1, got {width}, {feature_dim}")
        placement = resolve_placement("convnet", placement)
        after_conv = dropout if placement in ("every_conv", "every_layer") else 0.0
        after_stage = dropout if placement == "fdshifts" else 0.0
        self.feature_dim = feature_dim
        layers: list[nn.Module] = []
        c = in_channels
        for i, c_out in enumerate((width, 2 * width, 4 * width)):
            layers += _block(c, c_out) + dropout_layers(after_conv)
            layers.append(nn.MaxPool2d(2) if i < 2 else nn.AdaptiveAvgPool2d(1))
            layers += dropout_layers(after_stage)
            c = c_out
        layers.append(nn.Flatten())
        layers += dropout_layers(dropout if placement == "fc" else 0.0)
        layers += [nn.Linear(c, feature_dim), nn.ReLU()]
        self.net = nn.Sequential(*layers)

    @property
    def sequence(self) -> nn.Sequential:
        """The layers in order (their composition is :meth:`forward`)."""
        return self.net

    def forward(self, x):
        return self.net(x)
