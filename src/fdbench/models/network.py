"""The classifier wrapper shared by every architecture: body, head dropout, final layer, heads."""

from __future__ import annotations

import copy

import torch
from torch import nn

from .dropout import SampledDropout, has_dropout

__all__ = ["HEADS", "ConfidNetHead", "Network", "Normalize"]

#: Confidence heads a :class:`Network` can carry.
HEADS = ("devries", "deepgamblers", "confidnet", "duq", "laplace", "swag")


class Normalize(nn.Module):
    """Map uint8-range images (N × C × H × W, values 0..255) to standardised float inputs.

    ``y = (x / 255 − mean_c) / std_c`` with per-channel statistics stored as buffers, so a saved
    model carries its own preprocessing.
    """

    def __init__(self, mean: tuple[float, ...], std: tuple[float, ...]) -> None:
        super().__init__()
        if len(mean) != len(std):
            raise ValueError(f"mean and std must have equal length, got {len(mean)} and {len(std)}")
        if any(s <= 0 for s in std):
            raise ValueError(f"std must be positive, got {std}")
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.float() / 255.0 - self.mean) / self.std


class ConfidNetHead(nn.Module):
    """ConfidNet's confidence MLP (Corbière et al., NeurIPS 2019).

    A multi-layer perceptron on the penultimate features ending in one unit; its sigmoid is the
    estimate of the true-class probability (TCP) of the classifier's prediction.
    """

    def __init__(self, in_features: int, hidden: int = 400, depth: int = 4) -> None:
        super().__init__()
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        layers: list[nn.Module] = []
        width = in_features
        for _ in range(depth - 1):
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """Return the ConfidNet logit (N); the TCP estimate is its sigmoid."""
        return self.mlp(features).squeeze(-1)


class Network(nn.Module):
    """A classifier ``classifier(dropout(body(normalize(x))))`` with optional confidence heads.

    :attr:`dropout` (rate ``dropout``) sits between the feature extractor and the final linear
    layer; the body may hold more dropout layers (its placement, see
    :func:`~fdbench.models.dropout.resolve_placement`). All are
    :class:`~fdbench.models.dropout.SampledDropout`, so MC-dropout inference samples the whole
    network (:func:`~fdbench.models.dropout.sampling`). ``head`` adds:

    - ``"devries"``: a confidence branch ``sigmoid(Linear(features))`` (DeVries & Taylor 2018);
    - ``"deepgamblers"``: one extra output, the reservation (abstention) logit (Liu et al. 2019);
      :meth:`forward` returns all K + 1 outputs, :attr:`num_classes` stays K;
    - ``"confidnet"``: a :class:`ConfidNetHead` MLP on the features (Corbière et al. 2019);
      with ``confidnet_own_body`` the MLP reads the features of its own copy of the body
      (``confidnet_body``, fine-tuned by ConfidNet's optional third stage) while the
      classifier keeps the original body;
    - ``"duq"``: a :class:`~fdbench.models.duq.DUQHead` (RBF class centroids on the features,
      van Amersfoort et al. 2020) of ``duq_embedding`` dimensions (default: the feature
      size), length scale ``duq_length_scale`` and moving-average rate ``duq_gamma``;
    - ``"laplace"``: a :class:`~fdbench.models.laplace.LaplaceHead` (the last-layer Laplace
      posterior, Daxberger et al. 2021);
    - ``"swag"``: a :class:`~fdbench.models.swag.SWAGHead` of ``swag_samples`` SWAG weight
      samples of every other parameter with their batch-norm statistics (Maddox et al. 2019).
    """

    def __init__(
        self,
        body: nn.Module,
        feature_dim: int,
        num_classes: int,
        *,
        normalize: Normalize | None = None,
        dropout: float = 0.0,
        head: str | None = None,
        confidnet_hidden: int = 400,
        confidnet_depth: int = 4,
        confidnet_own_body: bool = False,
        duq_embedding: int | None = None,
        duq_length_scale: float = 0.1,
        duq_gamma: float = 0.999,
        swag_samples: int = 10,
    ) -> None:
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"num_classes must be >= 2, got {num_classes}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must lie in [0, 1), got {dropout}")
        if head is not None and head not in HEADS:
            raise ValueError(f"head must be None or one of {HEADS}, got {head!r}")
        self.num_classes = num_classes
        self.feature_dim = feature_dim
        self.head = head
        self.normalize = normalize if normalize is not None else nn.Identity()
        self.body = body
        self.dropout = SampledDropout(dropout)
        extra = 1 if head == "deepgamblers" else 0
        self.classifier = nn.Linear(feature_dim, num_classes + extra)
        self.devries = nn.Linear(feature_dim, 1) if head == "devries" else None
        self.confidnet = (
            ConfidNetHead(feature_dim, confidnet_hidden, confidnet_depth)
            if head == "confidnet"
            else None
        )
        if confidnet_own_body and head != "confidnet":
            raise ValueError("confidnet_own_body needs head='confidnet'")
        self.confidnet_body = copy.deepcopy(body) if confidnet_own_body else None
        self.duq = self.laplace = self.swag = None
        if head == "duq":
            from .duq import DUQHead

            self.duq = DUQHead(feature_dim, num_classes, embedding=duq_embedding,
                               length_scale=duq_length_scale, gamma=duq_gamma)  # fmt: skip
        elif head == "laplace":
            from .laplace import LaplaceHead

            self.laplace = LaplaceHead(feature_dim, num_classes)
        elif head == "swag":
            from .swag import SWAGHead, bn_state

            size = sum(p.numel() for p in self.parameters())
            self.swag = SWAGHead(swag_samples, size, len(bn_state(body)))

    @property
    def has_dropout(self) -> bool:
        """Whether the classifier (body or head) has dropout, i.e. MC dropout can sample it."""
        return has_dropout(self.body) or self.dropout.p > 0

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Penultimate features (N × D) of images ``x`` (N × C × H × W, 0..255)."""
        return self.body(self.normalize(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """All outputs of the final layer (N × K, or N × (K + 1) for DeepGamblers)."""
        return self.classifier(self.dropout(self.features(x)))
