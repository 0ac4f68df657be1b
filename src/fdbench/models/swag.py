"""SWAG: the SWA mean with a diagonal plus low-rank Gaussian posterior (Maddox et al., 2019).

Maddox et al., "A simple baseline for Bayesian uncertainty in deep learning", NeurIPS 2019, and
its code (wjmaddox/swa_gaussian, ``swag/posteriors/swag.py``) as Bernhardt et al. use it
(``classification/swag/swag.py`` and ``failure_detection/uncertainty_scores/swag_scores.py`` of
melanibe/failure_detection_benchmark: rank 20, scale ½, 10 samples, batch-norm statistics
recomputed on the train set for every sample).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import nn

__all__ = ["SWAGHead", "SWAGMoments", "batch_norm_layers", "bn_state", "recompute_batch_norm"]


class SWAGMoments:
    """Running SWAG moments of a sequence of flattened weight vectors θ_1, …, θ_n (P each):
    the mean ``θ̄ = (1/n) Σ θ_i``, the second moment ``(1/n) Σ θ_i²`` (elementwise) and the
    deviations ``θ_i − θ̄_i`` of the last ``rank`` vectors from the running mean *after* adding
    them (``D̂``, rows oldest first), as ``collect_model`` of swa_gaussian does."""

    def __init__(self, size: int, rank: int = 20) -> None:
        if size < 1 or rank < 1:
            raise ValueError(f"size and rank must be >= 1, got {size} and {rank}")
        self.rank = rank
        self.count = 0
        self.mean = torch.zeros(size, dtype=torch.float64)
        self.sq_mean = torch.zeros(size, dtype=torch.float64)
        self.deviations = torch.zeros(0, size, dtype=torch.float64)

    def collect(self, weights: torch.Tensor) -> None:
        """Add one weight vector (P)."""
        w = weights.detach().double().flatten()
        if w.shape != self.mean.shape:
            raise ValueError(f"weights must have {len(self.mean)} entries, got {w.numel()}")
        n = self.count
        self.mean = self.mean * (n / (n + 1)) + w / (n + 1)
        self.sq_mean = self.sq_mean * (n / (n + 1)) + w**2 / (n + 1)
        self.deviations = torch.cat([self.deviations, (w - self.mean)[None]])[-self.rank :]
        self.count = n + 1

    @property
    def variance(self) -> torch.Tensor:
        """The diagonal variance ``max(sq_mean − mean², 1e-30)`` (swa_gaussian's clamp)."""
        return (self.sq_mean - self.mean**2).clamp_min(1e-30)

    def sample(self, generator: torch.Generator, scale: float = 0.5) -> torch.Tensor:
        """One draw ``θ̄ + √scale (√var ⊙ z₁ + D̂ᵀ z₂ / √(K − 1))`` with z₁, z₂ standard
        normal and K the number of stored deviations (SWAG, Eq. 1 of Maddox et al.; the
        low-rank term is left out while K < 2)."""
        if self.count < 1:
            raise ValueError("no weights collected")
        if scale < 0:
            raise ValueError(f"scale must be >= 0, got {scale}")
        z1 = torch.randn(len(self.mean), generator=generator, dtype=torch.float64)
        draw = self.variance.sqrt() * z1
        k = len(self.deviations)
        if k >= 2:
            z2 = torch.randn(k, generator=generator, dtype=torch.float64)
            draw = draw + self.deviations.T @ z2 / math.sqrt(k - 1)
        return self.mean + math.sqrt(scale) * draw


def batch_norm_layers(module: nn.Module) -> list[nn.modules.batchnorm._BatchNorm]:
    """The batch-norm layers of ``module`` in module order."""
    return [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]


def bn_state(module: nn.Module) -> torch.Tensor:
    """The running means and variances of every batch-norm layer, concatenated (B)."""
    parts = [t.flatten() for m in batch_norm_layers(module) for t in (m.running_mean,
                                                                       m.running_var)]  # fmt: skip
    return torch.cat(parts) if parts else torch.zeros(0)


def recompute_batch_norm(model: nn.Module, batches: Iterable[torch.Tensor]) -> None:
    """Reset the batch-norm statistics of ``model`` and re-estimate them as the cumulative
    average over one pass of ``batches`` in train mode (swa_gaussian's ``bn_update``:
    momentum ``None``); the model is left in eval mode."""
    layers = batch_norm_layers(model)
    momenta = [m.momentum for m in layers]
    for m in layers:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for x in batches:
            model(x)
    for m, momentum in zip(layers, momenta, strict=True):
        m.momentum = momentum
    model.eval()


class SWAGHead(nn.Module):
    """The SWAG samples a network predicts with: ``weights`` (S × P, the flattened parameters
    of the network outside this head, in ``named_parameters`` order) and ``bn`` (S × B, the
    batch-norm statistics recomputed for each sample, :func:`bn_state` order)."""

    def __init__(self, samples: int, num_params: int, num_bn: int) -> None:
        super().__init__()
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        self.register_buffer("weights", torch.zeros(samples, num_params))
        self.register_buffer("bn", torch.zeros(samples, num_bn))
