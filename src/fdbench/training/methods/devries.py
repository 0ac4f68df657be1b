"""Learned confidence (DeVries & Taylor 2018): a confidence branch trained with hints."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from . import EndToEndParams, TrainingMethod, register

__all__ = ["DeVries", "DevriesParams"]


class DevriesParams(EndToEndParams):
    """Learned confidence (DeVries & Taylor 2018): hint budget β and initial λ."""

    budget: float = Field(default=0.3, gt=0.0)
    lambda_init: float = Field(default=0.1, gt=0.0)


@register
class DeVries(TrainingMethod):
    """The learned-confidence loss (:func:`fdbench.training.losses.devries_loss`) with hints on
    a Bernoulli(½) half of each batch and λ adjusted after every step towards the budget β
    (DeVries & Taylor, arXiv:1802.04865, 2018). Class and confidence branches read the same
    dropped-out features, as in FD-Shifts, whose encoder ends in the dropout layer
    (``fd_shifts/models/networks/devries_network.py``). Network head ``devries``; stored head
    ``devries``; CSFs DeVries and DeVries-MCD; its own confidence is DeVries.
    """

    name = "devries"
    display_prefix = "DeVries"
    params_model = DevriesParams
    network_head = "devries"
    csfs = ("DeVries", "DeVries-MCD")

    def setup(self, module: Any) -> None:
        if module.network.head != "devries":
            raise ValueError("method 'devries' needs a network with head 'devries'")
        module.lam = self.params.lambda_init

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch

        from ..losses import devries_loss, update_devries_lambda

        x, y = batch
        net = module.network
        features = net.dropout(net.features(x))
        logits = net.classifier(features)
        confidence = net.devries(features).squeeze(-1)
        hints = torch.bernoulli(torch.full_like(confidence, 0.5))
        loss, conf_loss = devries_loss(logits, confidence, y, hints, module.lam)
        module.lam = update_devries_lambda(
            module.lam, float(conf_loss.detach()), self.params.budget
        )
        return loss

    def validation_confidence(self, split: Any) -> np.ndarray:
        """The DeVries head."""
        return split.heads["devries"]
