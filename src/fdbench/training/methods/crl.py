"""Confidence-aware learning (Moon et al., ICML 2020): cross-entropy plus correctness ranking.

Moon, Kim, Shin & Hwang, "Confidence-Aware Learning for Deep Neural Networks", ICML 2020.
Every training sample keeps the count of its correct predictions during training; its
correctness ``c_i`` is that count over the epochs completed (at least one), Moon et al.'s
"proportion of correct prediction events over the total number of examinations". The
correctness ranking loss asks that a sample that was correct more often get a higher
confidence (maximum softmax response ``κ``), by a margin ``|c_i − c_j|``.

Pairs, confidence and counts follow the authors' code (daintlab/confidence-aware-learning,
``train.py``/``crl_utils.py``; the same in ``methods/crl/train.py`` of
daintlab/unknown-detection-benchmarks, Kim et al.): each sample of a batch is paired with the
next one (the batch rolled by one), ``κ`` is the softmax maximum of the training pass, and a
sample's count grows after each of its training steps with the correctness of that pass.
Two details differ from their code and follow the paper's formula instead: ``c_i`` is not
min-max normalised over the training set (Moon's ``correctness_normalize``) nor divided by the
total number of epochs (Kim's), and pairs of equal correctness add nothing (Kim's code pulls
their confidences together).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from . import EndToEndParams, TrainingMethod, register

if TYPE_CHECKING:
    import torch

__all__ = ["CRL", "CRLParams", "correctness_ranking_loss"]


class CRLParams(EndToEndParams):
    """CRL's balance weight λ of the ranking loss (``rank_weight``; Moon et al. and Kim et al.
    use 1.0)."""

    rank_weight: float = Field(default=1.0, ge=0.0)


def correctness_ranking_loss(confidence: torch.Tensor, correctness: torch.Tensor) -> torch.Tensor:
    """Correctness ranking loss of Moon et al. (ICML 2020, Section 3) over the pairs ``(i, i+1)``
    of the batch, the last sample paired with the first (the batch rolled by one):

    ``mean_i max(0, −g(c_i, c_j) (κ_i − κ_j) + |c_i − c_j|)``, ``j = i + 1 mod N``,

    with ``g = sign(c_i − c_j)`` (1, 0 or −1), ``κ`` the ``confidence`` and ``c`` the
    ``correctness`` (both of length N). Pairs of equal correctness contribute 0.
    """
    import torch

    if confidence.ndim != 1 or confidence.shape != correctness.shape:
        raise ValueError(
            "confidence and correctness must be vectors of one length, got shapes "
            f"{tuple(confidence.shape)} and {tuple(correctness.shape)}"
        )
    c = correctness.to(confidence.dtype)
    kappa_j = torch.roll(confidence, -1)
    c_j = torch.roll(c, -1)
    sign = torch.sign(c - c_j)
    return torch.clamp(-sign * (confidence - kappa_j) + (c - c_j).abs(), min=0.0).mean()


@register
class CRL(TrainingMethod):
    """Confidence-aware learning (Moon et al., ICML 2020; see the module docstring): the loss
    is ``CE + λ · correctness_ranking_loss(κ, c)`` on batches ``(images, labels, indices)``.
    No head; its confidence is the maximum softmax response (MSR)."""

    name = "crl"
    display_prefix = "CRL"
    params_model = CRLParams

    def train_data(self, ctx: Any) -> Any:
        """Shuffled, augmented ``(images, labels, sample indices)`` batches."""
        return ctx.loader(indices=True)

    def setup(self, module: Any) -> None:
        import torch

        n = len(module.context.experiment.train.labels)
        module.crl_counts = torch.zeros(n, dtype=torch.float64)

    def correctness(self, module: Any, indices: torch.Tensor) -> torch.Tensor:
        """``c_i``: the samples' correct predictions over the epochs completed (at least 1)."""
        return module.crl_counts[indices] / max(1, module.current_epoch)

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch
        import torch.nn.functional as F

        x, y, indices = batch
        out = module.network(x)
        confidence = torch.softmax(out, dim=1).max(dim=1).values
        correctness = self.correctness(module, indices).to(confidence.dtype)
        ranking = correctness_ranking_loss(confidence, correctness)
        loss = F.cross_entropy(out, y) + self.params.rank_weight * ranking
        module.crl_counts[indices] += (out.detach().argmax(dim=1) == y).to(torch.float64)
        return loss
