"""Deep Gamblers (Liu et al., NeurIPS 2019): the gambler's loss with a reservation output."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from pydantic import Field

from . import EndToEndParams, TrainingMethod, register

__all__ = ["DeepGamblers", "DeepGamblersParams"]

_log = logging.getLogger(__name__)


class DeepGamblersParams(EndToEndParams):
    """Gambler's loss (Liu et al. 2019): reward ``o`` > 1, CE pre-training epochs.

    Rewards ``o`` >= K (FD-Shifts uses 6 and 10 on CAMELYON, K = 2) are accepted with a logged
    warning: abstention is then never optimal in the gambler's-loss theory.
    """

    reward: float = Field(default=2.2, gt=1.0)
    pretrain_epochs: int = Field(default=2, ge=0)


@register
class DeepGamblers(TrainingMethod):
    """Cross-entropy on the K class outputs for ``pretrain_epochs`` epochs, then the gambler's
    loss (:func:`fdbench.training.losses.gambler_loss`) with reward ``o`` on the K + 1 outputs
    (network head ``deepgamblers``: one reservation output). A reward ``o`` >= K is accepted
    with a logged warning: abstaining then never pays in the gambler's-loss theory, but
    FD-Shifts trains with such rewards (o ∈ {2.2, 3, 6, 10} on CAMELYON, K = 2;
    ``fd_shifts/experiments/__init__.py``). Stored head ``dg_reservation`` (the reservation
    probability); CSFs DG-Res and DG-Res-MCD; its own confidence is DG-Res.
    """

    name = "deepgamblers"
    # FD-Shifts' DeepGamblers prefix (fd_shifts/reporting/__init__.py, _confid_string_to_name:
    # "DG-MCD-MSR", "DG-PE"); the other methods follow the same pattern
    display_prefix = "DG"
    params_model = DeepGamblersParams
    network_head = "deepgamblers"
    csfs = ("DG-Res", "DG-Res-MCD")

    def setup(self, module: Any) -> None:
        net = module.network
        if net.head != "deepgamblers":
            raise ValueError("method 'deepgamblers' needs a network with head 'deepgamblers'")
        if self.params.reward >= net.num_classes:
            _log.warning(
                "DeepGamblers reward o = %s >= K = %d: abstention is never optimal in the "
                "gambler's-loss theory (Liu et al. 2019)",
                self.params.reward,
                net.num_classes,
            )

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch.nn.functional as F

        from ..losses import gambler_loss

        x, y = batch
        out = module.network(x)
        if module.current_epoch < self.params.pretrain_epochs:
            return F.cross_entropy(out[:, :-1], y)
        return gambler_loss(out, y, self.params.reward)

    def validation_confidence(self, split: Any) -> np.ndarray:
        """The negated reservation probability."""
        return -split.heads["dg_reservation"]
