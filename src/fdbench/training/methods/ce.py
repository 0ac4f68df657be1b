"""Cross-entropy training, the baseline method (``kind: ce``)."""

from __future__ import annotations

from typing import Any

from . import EndToEndParams, TrainingMethod, register

__all__ = ["CE", "CEParams"]


class CEParams(EndToEndParams):
    """Cross-entropy training; ``dropout`` switches the network's dropout on (MC dropout)."""


@register
class CE(TrainingMethod):
    """Cross-entropy of the K class outputs; its confidence is the maximum softmax response
    (Hendrycks & Gimpel, ICLR 2017)."""

    name = "ce"
    display_prefix = ""
    params_model = CEParams

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch.nn.functional as F

        x, y = batch
        return F.cross_entropy(module.network(x), y)
