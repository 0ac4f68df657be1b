"""LogitNorm: cross-entropy of the logits normalised to a fixed norm (``kind: logitnorm``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fdbench.training.methods import EndToEndParams, TrainingMethod, register

__all__ = ["LogitNorm", "LogitNormParams", "logitnorm_loss"]


class LogitNormParams(EndToEndParams):
    """``temperature``: τ, the logits' norm is 1/τ during training (the authors' CIFAR-10
    value 0.04)."""

    temperature: float = Field(default=0.04, gt=0.0)


def logitnorm_loss(logits: Any, target: Any, temperature: float) -> Any:
    """``CE(z / (τ (‖z‖₂ + 1e-7)), y)``: the cross-entropy of the logits divided by their L2
    norm (plus 1e-7) and by τ (Wei et al., "Mitigating Neural Network Overconfidence with
    Logit Normalization", ICML 2022, Eq. 4; the authors' ``LogitNormLoss`` in
    github.com/hongxin001/logitnorm_ood, ``common/loss_function.py``)."""
    import torch
    import torch.nn.functional as F

    norms = torch.norm(logits, p=2, dim=-1, keepdim=True) + 1e-7
    return F.cross_entropy(torch.div(logits, norms) / temperature, target)


@register
class LogitNorm(TrainingMethod):
    """Cross-entropy on L2-normalised logits (:func:`logitnorm_loss`); at test time the raw
    logits are stored and every CSF reads them, so "MSR on a LogitNorm model" is
    ``LogitNorm-MSR``."""

    name = "logitnorm"
    display_prefix = "LogitNorm"
    params_model = LogitNormParams

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        x, y = batch
        return logitnorm_loss(module.network(x), y, self.params.temperature)
