"""Pretrained ImageNet classifiers from timm (optional extra ``zoo``), as :class:`Network`s."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .network import Network

__all__ = ["build_zoo_model"]


def build_zoo_model(name: str, *, pretrained: bool = True, dropout: float = 0.0) -> Network:
    """A timm model split into body and final linear layer with the fdbench interface.

    ``timm.create_model(name, pretrained=pretrained)`` provides the network; its classifier
    (a ``Linear``) becomes :attr:`Network.classifier` and the rest (``reset_classifier(0)``:
    pooled pre-logit features) the body, preceded by the model's own input normalisation
    (``pretrained_cfg`` mean and std). Inputs are uint8 images already resized to the model's
    input size. ``dropout`` adds head dropout for MC dropout (Galil et al. evaluate it on
    ImageNet models). Raises ``ImportError`` naming the ``zoo`` extra when timm is missing.
    """
    try:
        import timm
    except ImportError as error:
        raise ImportError(
            "build_zoo_model needs timm: install fdbench with the 'zoo' extra "
            "(pip install 'fdbench[zoo]')"
        ) from error
    from torch import nn

    from .network import Network, Normalize

    model = timm.create_model(name, pretrained=pretrained)
    head = model.get_classifier()
    if not isinstance(head, nn.Linear):
        raise ValueError(
            f"model {name!r} has a {type(head).__name__} classifier; only a final nn.Linear "
            "can be split off as the fdbench classifier"
        )
    model.reset_classifier(0)
    cfg = model.pretrained_cfg
    net = Network(
        model,
        head.in_features,
        head.out_features,
        normalize=Normalize(tuple(cfg["mean"]), tuple(cfg["std"])),
        dropout=dropout,
    )
    net.classifier.load_state_dict(head.state_dict())
    return net.eval()
