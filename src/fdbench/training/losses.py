"""Loss functions of the training methods (cross-entropy, gambler's, DeVries, ConfidNet)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["confidnet_loss", "devries_loss", "gambler_loss", "update_devries_lambda"]


def gambler_loss(outputs: torch.Tensor, targets: torch.Tensor, reward: float) -> torch.Tensor:
    """Gambler's loss of Deep Gamblers (Liu et al., NeurIPS 2019).

    With ``p = softmax(outputs)`` over K classes plus the reservation output (last column),
    ``L = −mean_i log(p_{i,y_i} + p_{i,K} / o)`` for reward ``o`` (1 < o ≤ K). Computed as a
    log-sum-exp of ``z_y`` and ``z_K − log o`` minus the log-partition, which is stable.
    """
    if reward <= 1.0:
        raise ValueError(f"reward must be > 1, got {reward}")
    if outputs.ndim != 2 or outputs.shape[1] < 3:
        raise ValueError(f"outputs must be N × (K + 1) with K >= 2, got {tuple(outputs.shape)}")
    gain = outputs.gather(1, targets.view(-1, 1)).squeeze(1)
    reservation = outputs[:, -1] - torch.log(torch.tensor(reward, dtype=outputs.dtype))
    log_num = torch.logaddexp(gain, reservation)
    return (torch.logsumexp(outputs, dim=1) - log_num).mean()


def devries_loss(
    logits: torch.Tensor,
    confidence_logit: torch.Tensor,
    targets: torch.Tensor,
    hints: torch.Tensor,
    lam: float,
    eps: float = 1e-12,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Learned-confidence loss (DeVries & Taylor 2018, "Learning Confidence for OOD Detection").

    ``c = sigmoid(confidence_logit)``; on samples with ``hints`` = 1 the prediction is nudged
    towards the label, ``p' = c·p + (1 − c)·onehot(y)`` (the other samples keep ``p``, i.e.
    ``c`` = 1 there). Returns ``(L_t + λ·L_c, L_c)`` with ``L_t = −mean log p'_y`` and
    ``L_c = −mean log c`` over all samples. ``p`` and ``c`` are clamped to [eps, 1 − eps].
    """
    probs = torch.softmax(logits, dim=1).clamp(eps, 1.0 - eps)
    conf = torch.sigmoid(confidence_logit).clamp(eps, 1.0 - eps)
    hinted = conf * hints + (1.0 - hints)
    onehot = F.one_hot(targets, logits.shape[1]).to(probs.dtype)
    mixed = hinted.unsqueeze(1) * probs + (1.0 - hinted.unsqueeze(1)) * onehot
    task = F.nll_loss(torch.log(mixed), targets)
    confidence = -torch.log(conf).mean()
    return task + lam * confidence, confidence


def update_devries_lambda(lam: float, confidence_loss: float, budget: float) -> float:
    """DeVries & Taylor's λ schedule: λ/1.01 while ``L_c`` < budget β, else λ/0.99."""
    return lam / 1.01 if confidence_loss < budget else lam / 0.99


def confidnet_loss(
    confidence_logit: torch.Tensor, logits: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """ConfidNet loss (Corbière et al., NeurIPS 2019): MSE between ``sigmoid(confidence_logit)``
    and the true-class probability ``TCP = softmax(logits)_y`` of the (frozen) classifier."""
    tcp = torch.softmax(logits.detach(), dim=1).gather(1, targets.view(-1, 1)).squeeze(1)
    return F.mse_loss(torch.sigmoid(confidence_logit), tcp)
