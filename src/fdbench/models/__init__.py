"""Network architectures and the confidence heads some methods add (PyTorch, imported lazily)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .network import Network

__all__ = [
    "ARCHITECTURES",
    "HEADS",
    "HEAD_OPTIONS",
    "ConfidNetHead",
    "Network",
    "Normalize",
    "build_custom_model",
    "build_model",
    "build_zoo_model",
]

#: Architecture names accepted by :func:`build_model`.
ARCHITECTURES = ("convnet", "vgg13", "resnet18", "resnet50", "vit", "vit_b16")
#: Options that size a confidence head rather than the architecture (see :class:`Network`).
HEAD_OPTIONS = ("confidnet_hidden", "confidnet_depth", "confidnet_own_body", "duq_embedding",
                "duq_length_scale", "duq_gamma", "swag_samples")  # fmt: skip

_LAZY = {
    "ConfidNetHead": "network",
    "HEADS": "network",
    "Network": "network",
    "Normalize": "network",
    "build_custom_model": "custom",
    "build_zoo_model": "zoo",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_model(
    architecture: str,
    *,
    num_classes: int,
    in_channels: int = 1,
    image_size: int = 28,
    dropout: float = 0.0,
    dropout_placement: str | None = None,
    head: str | None = None,
    mean: tuple[float, ...] | None = None,
    std: tuple[float, ...] | None = None,
    **kwargs: Any,
) -> Network:
    """Build a :class:`Network` of the named architecture.

    ``architecture`` is one of :data:`ARCHITECTURES`; ``kwargs`` go to the feature extractor
    (``convnet``: ``width``, ``feature_dim``; ``vgg13``: ``feature_dim``, ``width_factor``;
    ``resnet18``/``resnet50``: ``base``, ``stem`` (``"cifar"`` or ``"imagenet"``); ``vit``:
    ``patch_size``, ``dim``, ``depth``, ``heads``, ``mlp_ratio``; ``vit_b16``: ``img_size``,
    ``patch_size``, ``dim``, ``depth``, ``heads``, ``mlp_ratio``, ``weights`` (a local timm
    state dict, see :func:`~fdbench.models.vit.vit_b16`)). ``mean``/``std`` (per channel, on
    the [0, 1] scale) set the input normalisation; by default 0.5 and 0.25. ``dropout`` is the
    dropout rate (used by MC dropout) and ``dropout_placement`` where it goes: one of
    ``fdbench.models.dropout``'s ``PLACEMENTS`` that the architecture supports, ``None`` for
    the architecture's default (FD-Shifts' placement; see
    :func:`~fdbench.models.dropout.resolve_placement`). Every
    placement has dropout before the final linear layer. ``head`` ``None`` or one of
    :data:`~fdbench.models.network.HEADS`.
    ``confidnet_hidden``/``confidnet_depth`` in ``kwargs`` size the ConfidNet MLP and
    ``confidnet_own_body`` gives it its own copy of the body; ``duq_*`` and ``swag_samples``
    size the ``"duq"`` and ``"swag"`` heads (see :class:`Network`).
    """
    from .dropout import resolve_placement
    from .network import Network, Normalize

    if architecture not in ARCHITECTURES:
        raise ValueError(
            f"architecture must be one of {ARCHITECTURES}, got {architecture!r} (your own "
            "network or a timm model: build_custom_model)"
        )
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must lie in [0, 1), got {dropout}")
    placement = resolve_placement(architecture, dropout_placement)
    if in_channels < 1:
        raise ValueError(f"in_channels must be >= 1, got {in_channels}")
    confid = {k: kwargs.pop(k) for k in HEAD_OPTIONS if k in kwargs}
    mean = (0.5,) * in_channels if mean is None else tuple(float(m) for m in mean)
    std = (0.25,) * in_channels if std is None else tuple(float(s) for s in std)
    if len(mean) != in_channels or len(std) != in_channels:
        raise ValueError(f"mean and std must have {in_channels} entries, got {mean} and {std}")
    if architecture == "convnet":
        from .convnet import SmallConvNet

        body = SmallConvNet(in_channels, dropout=dropout, placement=placement, **kwargs)
    elif architecture == "vgg13":
        from .vgg import VGG13

        body = VGG13(in_channels, dropout=dropout, placement=placement, **kwargs)
    elif architecture in ("resnet18", "resnet50"):
        from . import resnet

        body = getattr(resnet, architecture)(
            in_channels, dropout=dropout, placement=placement, **kwargs
        )
    elif architecture == "vit_b16":
        from .vit import vit_b16

        body = vit_b16(in_channels, dropout=dropout, placement=placement, **kwargs)
    else:
        from .vit import SmallViT

        body = SmallViT(image_size, in_channels, **kwargs)
    return Network(
        body,
        body.feature_dim,
        num_classes,
        normalize=Normalize(mean, std),
        dropout=dropout,
        head=head,
        **confid,
    )
