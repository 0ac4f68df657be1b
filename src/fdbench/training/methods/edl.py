"""Evidential deep learning (Sensoy et al., NeurIPS 2018): a Dirichlet output trained by its loss.

Sensoy, Kaplan & Kandemir, "Evidential deep learning to quantify classification uncertainty",
NeurIPS 2018. The network's K outputs ``z`` become non-negative evidence ``e = act(z)`` and the
parameters ``α = e + 1`` of a Dirichlet distribution over the class probabilities, with
strength ``S = Σ_j α_j``. Kim et al. (2023, Section 4) chose, on their validation set, the
Type II maximum-likelihood loss and the exponential activation, the defaults here; their code
clamps the exponential's input to [−10, 10] (``exp_evidence`` in
``methods/edl/edl_loss.py`` of daintlab/unknown-detection-benchmarks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field

from . import EndToEndParams, TrainingMethod, register

if TYPE_CHECKING:
    import torch

__all__ = [
    "EDL",
    "EDLParams",
    "annealing_coefficient",
    "dirichlet_kl_to_uniform",
    "edl_loss",
    "evidence",
]

ACTIVATIONS = ("relu", "softplus", "exp")
LOSSES = ("type2_ml", "bayes_ce", "bayes_mse")


class EDLParams(EndToEndParams):
    """EDL's choices: the evidence ``activation`` (``relu``, ``softplus`` or ``exp``, its input
    clamped to [−``exp_clamp``, ``exp_clamp``]), the ``loss`` (``type2_ml``: Type II maximum
    likelihood, Sensoy's Eq. 3; ``bayes_ce``: Bayes risk of the cross-entropy, Eq. 4;
    ``bayes_mse``: Bayes risk of the squared error, Eq. 5) and ``annealing_epochs``, the epochs
    over which the KL regulariser's weight grows to 1 (Sensoy et al.: 10)."""

    activation: Literal["relu", "softplus", "exp"] = "exp"
    loss: Literal["type2_ml", "bayes_ce", "bayes_mse"] = "type2_ml"
    annealing_epochs: int = Field(default=10, ge=0)
    exp_clamp: float = Field(default=10.0, gt=0)


def evidence(outputs: torch.Tensor, activation: str, *, exp_clamp: float = 10.0) -> torch.Tensor:
    """Non-negative evidence ``e = act(outputs)``: ``relu``, ``softplus`` or ``exp`` of the
    outputs clamped to [−``exp_clamp``, ``exp_clamp``] (as daintlab's ``exp_evidence``)."""
    import torch
    import torch.nn.functional as F

    if activation == "relu":
        return F.relu(outputs)
    if activation == "softplus":
        return F.softplus(outputs)
    if activation == "exp":
        return torch.exp(torch.clamp(outputs, -exp_clamp, exp_clamp))
    raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")


def dirichlet_kl_to_uniform(alpha: torch.Tensor) -> torch.Tensor:
    """``KL(Dir(α) ‖ Dir(1))`` per row of ``alpha`` (N × K), Sensoy et al.'s regulariser:

    ``ln Γ(S) − ln Γ(K) − Σ_j ln Γ(α_j) + Σ_j (α_j − 1) (ψ(α_j) − ψ(S))``, ``S = Σ_j α_j``.
    """
    import torch

    s = alpha.sum(dim=1)
    k = torch.tensor(float(alpha.shape[1]), dtype=alpha.dtype)
    log_norm = torch.lgamma(s) - torch.lgamma(k) - torch.lgamma(alpha).sum(dim=1)
    digammas = ((alpha - 1.0) * (torch.digamma(alpha) - torch.digamma(s)[:, None])).sum(dim=1)
    return log_norm + digammas


def annealing_coefficient(epoch: int, annealing_epochs: int) -> float:
    """``min(1, epoch / annealing_epochs)`` (1 when ``annealing_epochs`` is 0), the weight of
    the KL term in epoch ``epoch`` (0-based), as Sensoy et al. anneal it."""
    if epoch < 0 or annealing_epochs < 0:
        raise ValueError(
            f"epoch and annealing_epochs must be >= 0, got {epoch} and {annealing_epochs}"
        )
    if annealing_epochs == 0:
        return 1.0
    return min(1.0, epoch / annealing_epochs)


def edl_loss(
    alpha: torch.Tensor, targets: torch.Tensor, loss: str, kl_weight: float
) -> torch.Tensor:
    """Mean over the batch of one of Sensoy et al.'s losses plus ``kl_weight`` times the KL
    regulariser, for Dirichlet parameters ``alpha`` (N × K) and integer ``targets``.

    With ``y`` the one-hot target, ``S = Σ_j α_j`` and ``p̂ = α / S``:

    - ``type2_ml``: ``Σ_j y_j (log S − log α_j)`` (Type II maximum likelihood, Eq. 3);
    - ``bayes_ce``: ``Σ_j y_j (ψ(S) − ψ(α_j))`` (Bayes risk of the cross-entropy, Eq. 4);
    - ``bayes_mse``: ``Σ_j (y_j − p̂_j)² + p̂_j (1 − p̂_j) / (S + 1)`` (Eq. 5);

    each plus ``kl_weight · KL(Dir(α̃) ‖ Dir(1))`` with ``α̃ = y + (1 − y) α`` (the evidence of
    the wrong classes, :func:`dirichlet_kl_to_uniform`).
    """
    import torch
    import torch.nn.functional as F

    if alpha.ndim != 2:
        raise ValueError(f"alpha must be N × K, got shape {tuple(alpha.shape)}")
    y = F.one_hot(targets, alpha.shape[1]).to(alpha.dtype)
    s = alpha.sum(dim=1, keepdim=True)
    if loss == "type2_ml":
        data = (y * (torch.log(s) - torch.log(alpha))).sum(dim=1)
    elif loss == "bayes_ce":
        data = (y * (torch.digamma(s) - torch.digamma(alpha))).sum(dim=1)
    elif loss == "bayes_mse":
        p = alpha / s
        data = ((y - p) ** 2 + p * (1.0 - p) / (s + 1.0)).sum(dim=1)
    else:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    kl = dirichlet_kl_to_uniform(y + (1.0 - y) * alpha)
    return (data + kl_weight * kl).mean()


@register
class EDL(TrainingMethod):
    """Evidential deep learning (Sensoy et al., NeurIPS 2018; see the module docstring).

    Trains the K outputs by :func:`edl_loss` with the KL weight
    :func:`annealing_coefficient` of the epoch. Stored head ``edl_alpha``: the N × K Dirichlet
    parameters ``α = evidence(logits) + 1`` (the stored logits are the raw outputs ``z``, so
    MSR & co. are the softmax scores Kim et al.'s code reports for EDL); CSFs EDL-MSR
    (``max_j α_j / S``) and EDL-Unc (``−K / S``); its own confidence is EDL-MSR.
    """

    name = "edl"
    display_prefix = "EDL"
    params_model = EDLParams
    csfs = ("EDL-MSR", "EDL-Unc")

    def alpha(self, outputs: torch.Tensor) -> torch.Tensor:
        """Dirichlet parameters ``evidence(outputs) + 1`` under this method's activation."""
        p = self.params
        return evidence(outputs, p.activation, exp_clamp=p.exp_clamp) + 1.0

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        x, y = batch
        weight = annealing_coefficient(module.current_epoch, self.params.annealing_epochs)
        return edl_loss(self.alpha(module.network(x)), y, self.params.loss, weight)

    def output_heads(self, outputs: torch.Tensor, num_classes: int) -> dict[str, torch.Tensor]:
        """``edl_alpha``: the Dirichlet parameters of the K class outputs."""
        return {"edl_alpha": self.alpha(outputs[..., :num_classes])}

    def validation_confidence(self, split: Any) -> np.ndarray:
        """EDL-MSR, the largest expected class probability ``max_j α_j / S``."""
        from ...csf.evidential import edl_msr

        return edl_msr(split.heads["edl_alpha"])
