"""DUQ: RBF class centroids on the features and a two-sided gradient penalty (van Amersfoort
et al., 2020).

van Amersfoort et al., "Uncertainty estimation using a single deep deterministic neural
network", ICML 2020, and its code (y0ast/deterministic-uncertainty-quantification,
``utils/resnet_duq.py``, ``train_duq_cifar.py``) as Bernhardt et al. use it
(``classification/duq/duq_model.py`` and ``classification/duq/train.py`` of
melanibe/failure_detection_benchmark: γ = 0.999, embedding size = feature size, centroids
initialised at N(0, 0.05²) with count 13).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["DUQHead", "gradient_penalty"]


class DUQHead(nn.Module):
    """Per-class linear embeddings ``e_c = W_c a`` (``W``: J × K × D) of the features ``a`` and
    their RBF kernels ``K_c = exp(−(1/J) ‖e_c − μ_c‖² / (2σ²))`` to centroids ``μ_c = m_c / N_c``,
    kept as exponential moving averages (rate γ) of the class's embedding sums ``m`` and counts
    ``N`` (:meth:`update`)."""

    def __init__(
        self,
        feature_dim: int,
        num_classes: int,
        *,
        embedding: int | None = None,
        length_scale: float = 0.1,
        gamma: float = 0.999,
    ) -> None:
        super().__init__()
        if length_scale <= 0:
            raise ValueError(f"length_scale must be > 0, got {length_scale}")
        if not 0.0 < gamma < 1.0:
            raise ValueError(f"gamma must lie in (0, 1), got {gamma}")
        j = feature_dim if embedding is None else embedding
        self.length_scale = float(length_scale)
        self.gamma = float(gamma)
        self.W = nn.Parameter(torch.empty(j, num_classes, feature_dim))
        nn.init.kaiming_normal_(self.W, nonlinearity="relu")
        self.register_buffer("N", torch.full((num_classes,), 13.0))
        self.register_buffer("m", torch.normal(torch.zeros(j, num_classes), 0.05) * 13.0)

    def embed(self, features: torch.Tensor) -> torch.Tensor:
        """The class embeddings ``W_c a`` (N × J × K)."""
        return torch.einsum("nd,jkd->njk", features, self.W.to(features.dtype))

    def log_kernel(self, features: torch.Tensor) -> torch.Tensor:
        """``log K_c`` (N × K) of ``features`` (N × D)."""
        centroids = (self.m / self.N).to(features.dtype)
        diff = self.embed(features) - centroids
        return -(diff**2).mean(dim=1) / (2 * self.length_scale**2)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """The kernel values ``K_c`` (N × K) of ``features`` (N × D)."""
        return torch.exp(self.log_kernel(features))

    @torch.no_grad()
    def update(self, features: torch.Tensor, onehot: torch.Tensor) -> None:
        """One moving-average step: ``N ← γ N + (1 − γ) Σ_n y_n``,
        ``m ← γ m + (1 − γ) Σ_n e(a_n) y_nᵀ`` (``y`` one-hot, N × K)."""
        g = self.gamma
        self.N.mul_(g).add_((1 - g) * onehot.sum(dim=0))
        sums = torch.einsum("njk,nk->jk", self.embed(features), onehot.to(features.dtype))
        self.m.mul_(g).add_((1 - g) * sums.to(self.m.dtype))


def gradient_penalty(inputs: torch.Tensor, kernels: torch.Tensor) -> torch.Tensor:
    """The two-sided penalty ``mean_n (‖∇_x Σ_c K_c(x_n)‖₂ − 1)²`` (``inputs`` must require
    grad and ``kernels`` be computed from them). As the authors' code
    (``calc_gradient_penalty`` of ``train_duq_cifar.py``) it penalises the norm; the paper's
    Eq. 6 writes its square."""
    grad = torch.autograd.grad(kernels.sum(), inputs, create_graph=True)[0]
    return ((grad.flatten(start_dim=1).norm(dim=1) - 1.0) ** 2).mean()
