"""Your own network or a timm model as a :class:`~fdbench.models.network.Network`.

A benchmark configuration names one with ``architecture.factory`` (``"module:callable"``,
optionally ``architecture.classifier``) or ``architecture.timm`` (see
:class:`fdbench.config.schema.ArchitectureConfig`). fdbench needs the network split into a body (the
penultimate features, N × D) and a final ``nn.Linear`` (the classifier), as
:class:`~fdbench.models.network.Network` holds them: the feature CSFs read the body's output,
MC dropout samples the dropout before the classifier, and the confidence heads (DeVries,
ConfidNet, DUQ, ...) sit on the features. :func:`split_classifier` finds the split.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from torch import nn

from fdbench.core.callables import import_callable

if TYPE_CHECKING:
    from .network import Network

__all__ = ["build_custom_model", "split_classifier"]


def _attribute(module: nn.Module, path: str) -> tuple[Any, str, Any]:
    """The parent, last name and value of the dotted attribute ``path`` of ``module``."""
    *parents, last = path.split(".")
    parent: Any = module
    for name in parents:
        parent = getattr(parent, name, None)
        if parent is None:
            return None, last, None
    return parent, last, getattr(parent, last, None)


def split_classifier(module: nn.Module, classifier: str | None) -> tuple[nn.Module, nn.Linear]:
    """``(body, final linear layer)`` of ``module``.

    With ``classifier`` (a dotted attribute path such as ``"fc"`` or ``"head.fc"``) that
    attribute must be an ``nn.Linear``; it is replaced by ``nn.Identity`` in ``module``, which
    becomes the body (its output: the linear layer's inputs). Without it, ``module`` must have
    the body/classifier split of :class:`~fdbench.models.network.Network`: attributes
    ``body`` (a module returning N × D features) and ``classifier`` (an ``nn.Linear``).
    Anything else is a ``ValueError`` saying what to set.
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"expected a torch.nn.Module, got {type(module).__name__}")
    kind = type(module).__name__
    if classifier is not None:
        parent, last, layer = _attribute(module, classifier)
        if not isinstance(layer, nn.Linear):
            found = "nothing" if layer is None else type(layer).__name__
            raise ValueError(
                f"architecture.classifier {classifier!r} must name the final nn.Linear of the "
                f"{kind}; it names {found}"
            )
        setattr(parent, last, nn.Identity())
        return module, layer
    body, head = getattr(module, "body", None), getattr(module, "classifier", None)
    if isinstance(body, nn.Module) and isinstance(head, nn.Linear):
        return body, head
    raise ValueError(
        f"the {kind} has no body/classifier split (attributes 'body', a module, and "
        "'classifier', an nn.Linear): set architecture.classifier to the name of its final "
        "linear layer (e.g. 'fc')"
    )


def _network(
    body: nn.Module,
    linear: nn.Linear,
    *,
    num_classes: int,
    in_channels: int,
    image_size: int,
    dropout: float,
    head: str | None,
    mean: tuple[float, ...] | None,
    std: tuple[float, ...] | None,
    what: str,
    **heads: Any,
) -> Network:
    import torch

    from .network import Network, Normalize

    if linear.out_features != num_classes:
        raise ValueError(
            f"{what}: the final linear layer has {linear.out_features} outputs, but the data "
            f"has {num_classes} classes"
        )
    mean = (0.5,) * in_channels if mean is None else tuple(float(m) for m in mean)
    std = (0.25,) * in_channels if std is None else tuple(float(s) for s in std)
    body.eval()
    with torch.no_grad():
        out = body(torch.zeros(2, in_channels, image_size, image_size))
    body.train()
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (2, linear.in_features):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(
            f"{what}: the body must return N × {linear.in_features} features (the final "
            f"linear layer's inputs), got {shape} for 2 images of {in_channels} × "
            f"{image_size} × {image_size}"
        )
    net = Network(
        body,
        linear.in_features,
        num_classes,
        normalize=Normalize(mean, std),
        dropout=dropout,
        head=head,
        **heads,
    )
    if net.classifier.weight.shape == linear.weight.shape:
        net.classifier.load_state_dict(linear.state_dict())
    return net


def build_custom_model(
    *,
    factory: str | None = None,
    timm: str | None = None,
    classifier: str | None = None,
    num_classes: int,
    in_channels: int = 1,
    image_size: int = 28,
    dropout: float = 0.0,
    head: str | None = None,
    mean: tuple[float, ...] | None = None,
    std: tuple[float, ...] | None = None,
    **options: Any,
) -> Network:
    """A :class:`~fdbench.models.network.Network` of your own network (``factory``) or of a
    timm model (``timm``), untrained.

    ``factory`` (``"module:callable"``) is called as ``callable(num_classes=num_classes,
    in_channels=in_channels, image_size=image_size, **options)`` and split with
    :func:`split_classifier` (``classifier``). ``timm``: ``timm.create_model(timm,
    num_classes=num_classes, in_chans=in_channels, pretrained=False, **options)`` (the
    ``zoo`` extra; ``options`` may set ``pretrained``), split at its ``get_classifier()``.
    The body receives the images standardised by ``mean``/``std`` (per channel, default 0.5
    and 0.25) as float N × C × S × S; ``dropout`` is the rate of the dropout before the final
    layer (MC dropout), ``head`` and the head sizes among ``options`` (``confidnet_*``,
    ``duq_*``, ``swag_samples``: :data:`fdbench.models.HEAD_OPTIONS`) as
    :func:`fdbench.models.build_model`. The final layer keeps the
    network's own initial weights where their shape allows (not with DeepGamblers' extra
    output). Its output count must equal ``num_classes`` and the body must return N × D
    features (checked on a zero batch in eval mode): a ``ValueError`` otherwise.
    """
    from . import HEAD_OPTIONS

    if (factory is None) == (timm is None):
        raise ValueError("give exactly one of factory and timm")
    heads = {k: options.pop(k) for k in HEAD_OPTIONS if k in options}
    if timm is not None:
        if classifier is not None:
            raise ValueError("classifier applies to a factory; timm models are split by timm")
        try:
            import timm as timm_lib
        except ImportError as error:
            raise ImportError(
                f"architecture.timm {timm!r} needs timm: install fdbench with the 'zoo' extra "
                "(pip install 'fdbench[zoo]')"
            ) from error
        options = {"pretrained": False, **options}
        model = timm_lib.create_model(
            timm, num_classes=num_classes, in_chans=in_channels, **options
        )
        linear = model.get_classifier()
        if not isinstance(linear, nn.Linear):
            raise ValueError(
                f"timm model {timm!r} has a {type(linear).__name__} classifier; only a final "
                "nn.Linear can be split off as the fdbench classifier"
            )
        model.reset_classifier(0)
        body, what = model, f"timm model {timm!r}"
    else:
        make = import_callable(factory, "architecture.factory")
        model = make(num_classes=num_classes, in_channels=in_channels, image_size=image_size,
                     **options)  # fmt: skip
        body, linear = split_classifier(model, classifier)
        what = f"architecture.factory {factory!r}"
    return _network(
        body,
        linear,
        num_classes=num_classes,
        in_channels=in_channels,
        image_size=image_size,
        dropout=dropout,
        head=head,
        mean=mean,
        std=std,
        what=what,
        **heads,
    )
