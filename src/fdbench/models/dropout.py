"""Dropout placements of the architectures and the seeded dropout used for MC-dropout inference."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

__all__ = [
    "DEFAULT_PLACEMENT",
    "PLACEMENTS",
    "SampledDropout",
    "dropout_layers",
    "first_dropout",
    "has_dropout",
    "resolve_placement",
    "sampling",
    "split_at_first_dropout",
]

#: Named dropout placements (which layers are followed by dropout), see :func:`resolve_placement`.
PLACEMENTS = ("head", "fc", "fdshifts", "every_conv", "every_layer")

#: Placements each architecture supports.
SUPPORTED = {
    "convnet": PLACEMENTS,
    "vgg13": PLACEMENTS,
    "resnet18": ("head", "fdshifts", "every_conv", "every_layer"),
    "resnet50": ("head", "fdshifts", "every_conv", "every_layer"),
    "vit": ("head",),
    "vit_b16": ("head", "fdshifts"),
}

#: The placement an architecture gets when none is named: FD-Shifts' for its networks.
DEFAULT_PLACEMENT = {
    "convnet": "fdshifts",
    "vgg13": "fdshifts",
    "resnet18": "fdshifts",
    "resnet50": "fdshifts",
    "vit": "head",
    "vit_b16": "fdshifts",
}


def resolve_placement(architecture: str, placement: str | None) -> str:
    """The dropout placement of ``architecture``: ``placement``, or the architecture's default.

    Every placement puts dropout before the final linear layer (rate ``dropout``); they differ
    in the body:

    - ``"head"``: nowhere else (the body is deterministic, MC dropout samples only the head);
    - ``"fc"``: before every fully connected layer, i.e. also before the hidden linear layer
      that ends the body of ``convnet`` and ``vgg13`` (the classic placement of Krizhevsky et
      al. 2012 and Simonyan & Zisserman 2015; the convolutions stay deterministic, so an MC
      pass costs two small matrix products);
    - ``"fdshifts"``: FD-Shifts' placement (Jaeger et al., ICLR 2023; IML-DKFZ/fd-shifts,
      ``fd_shifts/models/networks/``). ``convnet``: after each of the three stages (after its
      pooling) and after the hidden linear layer, as in ``svhn_small_conv.py`` (rate 0.3 there);
      ``vgg13``: after every convolution not followed by pooling (rate 0.6·p after the first,
      0.8·p after the others), before and after the hidden linear layer (p), as ``vgg.py``
      builds it with ``dropout_rate`` 1 (rates 0.3, 0.4, 0.5 at p = 0.5); ``resnet18``/``50``:
      after every convolution of every residual block, before the residual sum, as in
      ``resnet50_imagenet.py`` (stem not followed by dropout);
    - ``"every_conv"``: after every convolution and before the final layer (Kim et al. 2021,
      following Zhang et al. 2019): for ``resnet`` the stem too;
    - ``"every_layer"``: after every weight layer but the final one (Bernhardt et al. 2022,
      p = 0.1 there). On these architectures the only hidden linear layer feeds the final
      layer, so the network is the one ``"every_conv"`` builds.

    ``vit_b16``: ``"fdshifts"`` puts dropout where timm's ``drop_rate`` does (after the
    position embedding, the attention projection and both MLP layers of every block), as
    FD-Shifts' ``fd_shifts/models/networks/vit.py`` builds it; ``"head"`` only before the
    final layer. ``vit`` supports only ``"head"`` (PyTorch's fused transformer layer ignores
    dropout in eval mode, so encoder dropout could not be sampled with batch statistics
    frozen).
    """
    if architecture not in SUPPORTED:
        raise ValueError(f"architecture must be one of {tuple(SUPPORTED)}, got {architecture!r}")
    if placement is None:
        return DEFAULT_PLACEMENT[architecture]
    if placement not in SUPPORTED[architecture]:
        raise ValueError(
            f"dropout_placement for {architecture!r} must be one of "
            f"{SUPPORTED[architecture]}, got {placement!r}"
        )
    return placement


class SampledDropout(nn.Dropout):
    """:class:`torch.nn.Dropout` that can also be sampled from a generator in eval mode.

    In training mode (and in eval mode without a generator) it is ``nn.Dropout``. While
    :func:`sampling` has set ``generator``, it drops units with Bernoulli(1 − p) masks drawn
    from that generator (a unit is kept where a float32 uniform draw is >= p) whatever the
    mode, and scales the kept ones by 1 / (1 − p). So MC-dropout inference keeps batch norm in
    eval mode and is reproducible (FD-Shifts switches only its dropout layers to training mode:
    ``enable_dropout`` in ``fd_shifts/models/networks/vgg.py``).
    """

    generator: torch.Generator | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.generator is None or self.p == 0:
            return super().forward(x)
        # the mask as float 1/0 in the draws' buffer: the same products as with a boolean mask,
        # without promoting it to float (about as costly as drawing it)
        keep = torch.rand(x.shape, generator=self.generator, device=x.device).ge_(self.p)
        return (x * keep).mul_(1.0 / (1.0 - self.p))


def dropout_layers(p: float) -> list[nn.Module]:
    """``[SampledDropout(p)]`` when ``p`` > 0, else nothing (a network without dropout keeps
    exactly its layers)."""
    return [SampledDropout(p)] if p > 0 else []


def has_dropout(module: nn.Module) -> bool:
    """Whether ``module`` contains a :class:`SampledDropout` with a positive rate."""
    return any(isinstance(m, SampledDropout) and m.p > 0 for m in module.modules())


def first_dropout(sequence: nn.Sequential) -> int:
    """Index of the first element of ``sequence`` that contains dropout (its length if none).

    The elements before it compute the same activations in every MC-dropout pass.
    """
    for i, module in enumerate(sequence):
        if has_dropout(module):
            return i
    return len(sequence)


@contextmanager
def sampling(module: nn.Module, generator: torch.Generator) -> Iterator[None]:
    """Within the block every :class:`SampledDropout` of ``module`` samples from ``generator``."""
    layers = [m for m in module.modules() if isinstance(m, SampledDropout)]
    for m in layers:
        m.generator = generator
    try:
        yield
    finally:
        for m in layers:
            m.generator = None


def split_at_first_dropout(body: nn.Module) -> tuple[nn.Module, nn.Module]:
    """``(prefix, rest)`` with ``rest(prefix(x)) == body(x)``; the prefix holds no dropout.

    A body exposing its layers as ``sequence`` is split at its first layer with dropout, so
    whatever samples dropout (MC-dropout inference, ConfidNet's training on dropped-out
    features) computes the prefix once and repeats only the rest; a body without dropout is
    all prefix; any other body is all rest.
    """
    if not has_dropout(body):
        return body, nn.Identity()
    sequence = getattr(body, "sequence", None)
    if not isinstance(sequence, nn.Sequential):
        return nn.Identity(), body
    i = first_dropout(sequence)
    return sequence[:i], sequence[i:]
