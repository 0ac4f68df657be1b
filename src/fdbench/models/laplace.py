"""Last-layer Laplace approximation with a Kronecker-factored GGN (Daxberger et al., 2021).

The last layer maps features ``a`` (D) to logits ``f = W ã`` with ``ã = [a, 1]`` (the bias as a
last input of value 1) and ``W`` (K × (D + 1)) the weight and bias of the final layer. Its
generalised Gauss-Newton (GGN) matrix of the summed softmax cross-entropy, in the row-major
vectorisation of ``W``, is ``Σ_n Λ_n ⊗ ã_n ã_nᵀ`` with ``Λ_n = diag(p_n) − p_n p_nᵀ``; the
Kronecker-factored (KFAC) approximation is ``G ⊗ A`` with ``G = (1/N) Σ_n Λ_n`` and
``A = Σ_n ã_n ã_nᵀ`` (exact for one sample). With an isotropic Gaussian prior of precision δ the
posterior precision is ``G ⊗ A + δ I``, diagonalised by the eigenvectors of the factors.

Daxberger et al., "Laplace Redux — effortless Bayesian deep learning", NeurIPS 2021, and its
library ``laplace-torch`` (``laplace/baselaplace.py``: ``KronLaplace``, ``log_marginal_likelihood``,
``_glm_predictive_distribution`` with ``link_approx='probit'``), which Bernhardt et al. use with
its defaults (``failure_detection/uncertainty_scores/laplace.py`` of
melanibe/failure_detection_benchmark: last layer, Kronecker factors, prior precision by
marginal likelihood, probit predictive).
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = [
    "LaplaceHead",
    "kfac_factors",
    "log_marginal_likelihood",
    "logit_variance",
    "optimal_prior_precision",
    "probit_log_probabilities",
    "sampled_log_probabilities",
]


def _homogeneous(features: torch.Tensor) -> torch.Tensor:
    if features.ndim != 2:
        raise ValueError(f"features must be N × D, got shape {tuple(features.shape)}")
    return torch.cat([features, features.new_ones(len(features), 1)], dim=1)


def kfac_factors(features: torch.Tensor, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The Kronecker factors ``(A, G)`` of the last-layer GGN of softmax cross-entropy:
    ``A = Σ_n ã_n ã_nᵀ`` ((D + 1) square, ``ã = [a, 1]``) and ``G = (1/N) Σ_n (diag p_n −
    p_n p_nᵀ)`` (K × K, ``p = softmax(f)``), so the GGN is approximated by ``G ⊗ A``."""
    if logits.ndim != 2 or len(logits) != len(features) or len(features) < 1:
        raise ValueError(
            f"features (N × D) and logits (N × K) must share N >= 1, got shapes "
            f"{tuple(features.shape)} and {tuple(logits.shape)}"
        )
    a = _homogeneous(features)
    p = torch.softmax(logits, dim=1)
    g = torch.diag(p.sum(dim=0)) - p.T @ p
    return a.T @ a, g / len(p)


def log_marginal_likelihood(
    eig_a: torch.Tensor, eig_g: torch.Tensor, weight_norm: float, prior_precision: float
) -> float:
    """The δ-dependent part of the Laplace log marginal likelihood (Daxberger et al. 2021,
    Eq. 6 with the MAP log-likelihood left out, it does not depend on δ):
    ``−½ (log det(G ⊗ A + δ I) − P log δ + δ ‖θ‖²)`` with ``P = K (D + 1)`` parameters and
    eigenvalues ``eig_a``, ``eig_g`` of the factors (those of ``G ⊗ A`` are their products)."""
    if prior_precision <= 0:
        raise ValueError(f"prior_precision must be > 0, got {prior_precision}")
    products = torch.outer(eig_g, eig_a).clamp_min(0)
    logdet = torch.log(products + prior_precision).sum()
    p = products.numel()
    return float(-0.5 * (logdet - p * math.log(prior_precision) + prior_precision * weight_norm))


def optimal_prior_precision(
    eig_a: torch.Tensor, eig_g: torch.Tensor, weight_norm: float, *, tol: float = 1e-10
) -> float:
    """The prior precision δ maximising :func:`log_marginal_likelihood`: the root of
    ``γ(δ) = δ ‖θ‖²`` with ``γ = Σ_i λ_i / (λ_i + δ)`` (MacKay's effective number of
    parameters; ``λ_i`` the eigenvalues of ``G ⊗ A``). ``δ ‖θ‖² − γ(δ)`` increases in δ, so the
    root is unique; found by bisection in log δ. laplace-torch reaches it by gradient ascent
    (``optimize_prior_precision(method='marglik')``)."""
    if weight_norm <= 0:
        raise ValueError(f"weight_norm must be > 0, got {weight_norm}")
    lam = torch.outer(eig_g, eig_a).clamp_min(0).flatten().double()

    def excess(log_delta: float) -> float:
        delta = math.exp(log_delta)
        return delta * weight_norm - float((lam / (lam + delta)).sum())

    low, high = -60.0, 60.0
    if excess(low) >= 0:
        return math.exp(low)
    while high - low > tol:
        mid = 0.5 * (low + high)
        if excess(mid) < 0:
            low = mid
        else:
            high = mid
    return math.exp(0.5 * (low + high))


def logit_variance(
    features: torch.Tensor,
    eigvecs_a: torch.Tensor,
    eigvals_a: torch.Tensor,
    eigvecs_g: torch.Tensor,
    eigvals_g: torch.Tensor,
    prior_precision: float,
) -> torch.Tensor:
    """Covariance ``J Σ Jᵀ`` (N × K × K) of the last-layer logits under the posterior
    ``Σ = (G ⊗ A + δ I)⁻¹``, with ``J = I_K ⊗ ãᵀ``: ``U_G diag(m) U_Gᵀ`` where
    ``m_k = Σ_j (U_Aᵀ ã)_j² / (λ_G,k λ_A,j + δ)``."""
    c = (_homogeneous(features) @ eigvecs_a) ** 2
    inv = 1.0 / (torch.outer(eigvals_g, eigvals_a).clamp_min(0) + prior_precision)
    m = c @ inv.T
    return torch.einsum("kl,nl,jl->nkj", eigvecs_g, m, eigvecs_g)


def probit_log_probabilities(logits: torch.Tensor, variance: torch.Tensor) -> torch.Tensor:
    """Log of the probit approximation of the predictive,
    ``softmax(f / sqrt(1 + π/8 · diag Σ_f))`` (laplace-torch's ``link_approx='probit'``;
    MacKay 1992)."""
    kappa = 1.0 / torch.sqrt(1.0 + math.pi / 8.0 * torch.diagonal(variance, dim1=1, dim2=2))
    return torch.log_softmax(kappa * logits, dim=1)


def sampled_log_probabilities(
    logits: torch.Tensor, variance: torch.Tensor, samples: int, generator: torch.Generator
) -> torch.Tensor:
    """Log of the Monte Carlo predictive, the mean softmax of ``samples`` draws
    ``f ~ N(f_MAP, Σ_f)`` (laplace-torch's ``link_approx='mc'``)."""
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    chol = torch.linalg.cholesky(variance)
    eps = torch.randn(samples, *logits.shape, generator=generator, dtype=logits.dtype)
    draws = logits + torch.einsum("nkj,snj->snk", chol, eps)
    return torch.logsumexp(torch.log_softmax(draws, dim=2), dim=0) - math.log(samples)


class LaplaceHead(nn.Module):
    """The fitted last-layer posterior: eigen-decompositions of the Kronecker factors ``A``
    ((D + 1) square) and ``G`` (K × K) and the prior precision δ, float64 buffers."""

    def __init__(self, feature_dim: int, num_classes: int) -> None:
        super().__init__()
        d = feature_dim + 1
        self.register_buffer("eigvecs_a", torch.eye(d, dtype=torch.float64))
        self.register_buffer("eigvals_a", torch.zeros(d, dtype=torch.float64))
        self.register_buffer("eigvecs_g", torch.eye(num_classes, dtype=torch.float64))
        self.register_buffer("eigvals_g", torch.zeros(num_classes, dtype=torch.float64))
        self.register_buffer("prior_precision", torch.ones((), dtype=torch.float64))

    def fit(self, features: torch.Tensor, logits: torch.Tensor, weight_norm: float) -> None:
        """Fit the factors on train ``features``/``logits`` (float64) and set δ by the
        marginal likelihood (:func:`optimal_prior_precision`); ``weight_norm`` is ‖θ_MAP‖²
        of the last layer."""
        a, g = kfac_factors(features, logits)
        eigvals_a, eigvecs_a = torch.linalg.eigh(a)
        eigvals_g, eigvecs_g = torch.linalg.eigh(g)
        self.eigvecs_a.copy_(eigvecs_a)
        self.eigvals_a.copy_(eigvals_a.clamp_min(0))
        self.eigvecs_g.copy_(eigvecs_g)
        self.eigvals_g.copy_(eigvals_g.clamp_min(0))
        delta = optimal_prior_precision(self.eigvals_a, self.eigvals_g, weight_norm)
        self.prior_precision.fill_(delta)

    def variance(self, features: torch.Tensor) -> torch.Tensor:
        """:func:`logit_variance` of ``features`` (float64) under the fitted posterior."""
        return logit_variance(
            features,
            self.eigvecs_a,
            self.eigvals_a,
            self.eigvecs_g,
            self.eigvals_g,
            float(self.prior_precision),
        )
