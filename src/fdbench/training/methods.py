"""Lightning modules of the training methods: ce, deepgamblers, devries and ConfidNet's stage 2."""

from __future__ import annotations

import logging

import lightning as L
import torch
import torch.nn.functional as F

from ..config import ScheduleConfig
from ..models.network import ConfidNetHead, Network
from .losses import confidnet_loss, devries_loss, gambler_loss, update_devries_lambda
from .schedules import make_scheduler

__all__ = ["ClassifierModule", "ConfidNetFinetuneModule", "ConfidNetModule"]

KINDS = ("ce", "deepgamblers", "devries")

_log = logging.getLogger(__name__)


class ClassifierModule(L.LightningModule):
    """Trains a :class:`~fdbench.models.network.Network` end to end with one method's loss.

    - ``ce``: cross-entropy;
    - ``deepgamblers``: cross-entropy on the K class outputs for ``pretrain_epochs`` epochs,
      then the gambler's loss with reward ``reward`` > 1 (Liu et al. 2019). A reward ``o`` >= K
      is accepted with a logged warning: abstaining then never pays in the gambler's-loss
      theory, but FD-Shifts trains with such rewards (o ∈ {2.2, 3, 6, 10} on CAMELYON, K = 2;
      ``fd_shifts/experiments/__init__.py``);
    - ``devries``: the learned-confidence loss with hints on a Bernoulli(½) half of each batch
      and λ adjusted after every step towards the budget β (DeVries & Taylor 2018); class and
      confidence branches read the same dropped-out features, as in FD-Shifts, whose encoder
      ends in the dropout layer (``fd_shifts/models/networks/devries_network.py``).

    Optimiser: SGD with momentum (optionally Nesterov) and weight decay; learning-rate
    ``schedule``: ``"constant"``, ``"cosine"`` (annealed to 0 over all steps) or a
    :class:`~fdbench.config.ScheduleConfig` (see :func:`fdbench.training.schedules.make_scheduler`).
    """

    def __init__(
        self,
        network: Network,
        kind: str,
        *,
        lr: float,
        momentum: float,
        nesterov: bool,
        weight_decay: float,
        schedule: str | ScheduleConfig,
        reward: float = 2.2,
        pretrain_epochs: int = 0,
        budget: float = 0.3,
        lambda_init: float = 0.1,
    ) -> None:
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        expected = {"ce": None, "deepgamblers": "deepgamblers", "devries": "devries"}[kind]
        if network.head != expected:
            raise ValueError(f"method {kind!r} needs a network with head {expected!r}")
        if kind == "deepgamblers" and not reward > 1.0:
            raise ValueError(f"reward must be > 1, got {reward}")
        if kind == "deepgamblers" and reward >= network.num_classes:
            _log.warning(
                "DeepGamblers reward o = %s >= K = %d: abstention is never optimal in the "
                "gambler's-loss theory (Liu et al. 2019)",
                reward,
                network.num_classes,
            )
        if not isinstance(schedule, ScheduleConfig) and schedule not in ("cosine", "constant"):
            raise ValueError(
                f"schedule must be 'cosine', 'constant' or a ScheduleConfig, got {schedule!r}"
            )
        self.network = network
        self.kind = kind
        self.lr, self.momentum, self.nesterov = lr, momentum, nesterov
        self.weight_decay, self.schedule = weight_decay, schedule
        self.reward, self.pretrain_epochs = reward, pretrain_epochs
        self.budget = budget
        self.lam = lambda_init

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int):
        x, y = batch
        net = self.network
        if self.kind == "ce":
            return F.cross_entropy(net(x), y)
        if self.kind == "deepgamblers":
            out = net(x)
            if self.current_epoch < self.pretrain_epochs:
                return F.cross_entropy(out[:, :-1], y)
            return gambler_loss(out, y, self.reward)
        features = net.dropout(net.features(x))
        logits = net.classifier(features)
        confidence = net.devries(features).squeeze(-1)
        hints = torch.bernoulli(torch.full_like(confidence, 0.5))
        loss, conf_loss = devries_loss(logits, confidence, y, hints, self.lam)
        self.lam = update_devries_lambda(self.lam, float(conf_loss.detach()), self.budget)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int):
        """Cross-entropy of the class outputs, logged as ``val_loss`` for the plateau recipe."""
        x, y = batch
        net = self.network
        if self.kind == "devries":
            logits = net.classifier(net.features(x))
        else:
            logits = net(x)[:, : net.num_classes]
        loss = F.cross_entropy(logits, y)
        self.log("val_loss", loss, on_epoch=True, batch_size=y.shape[0])
        return loss

    def configure_optimizers(self):
        opt = torch.optim.SGD(
            self.network.parameters(),
            lr=self.lr,
            momentum=self.momentum,
            nesterov=self.nesterov and self.momentum > 0,
            weight_decay=self.weight_decay,
        )
        if self.schedule == "constant":
            return opt
        steps = max(1, int(self.trainer.estimated_stepping_batches))
        scheduler = make_scheduler(opt, self.schedule, steps=steps, epochs=self.trainer.max_epochs)
        if scheduler is None:
            return opt
        return {"optimizer": opt, "lr_scheduler": scheduler}


class ConfidNetModule(L.LightningModule):
    """ConfidNet's second stage (Corbière et al. 2019): fits the ConfidNet MLP of ``network``,
    whose body and classifier stay frozen, by MSE to the true-class probability, with Adam.

    As FD-Shifts' stage 1 (``fd_shifts/models/confidnet_model.py``, ``training_stage == 1``:
    ``self.network(x)`` in training mode, the encoder frozen through ``requires_grad`` only),
    every step runs a dropped-out pass of the frozen network: its dropout layers sample (batch
    norm stays in eval mode), the MLP reads the pass's features after the final dropout layer,
    and the target is the TCP of that pass's class outputs. A network without dropout gives
    the deterministic features and TCP.

    Batches are ``(inputs, labels)``; ``rest`` maps ``prefix(inputs)`` to the body's features.
    With ``prefix=None`` the inputs are the outputs of the body's dropout-free prefix, computed
    once (:func:`~fdbench.models.dropout.split_at_first_dropout`); otherwise images, run
    through ``prefix`` (normalisation and the prefix) in every step.
    """

    def __init__(
        self,
        network: Network,
        rest: torch.nn.Module,
        *,
        lr: float,
        prefix: torch.nn.Module | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(network.confidnet, ConfidNetHead):
            raise TypeError("network must carry a ConfidNet head")
        self.network = network
        self.rest = rest
        self.prefix = prefix
        self.lr = lr

    def on_train_epoch_start(self) -> None:
        self.network.eval()
        for module in self.network.modules():
            if isinstance(module, torch.nn.Dropout):
                module.train()
        self.network.confidnet.train()

    def training_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int):
        inputs, y = batch
        net = self.network
        with torch.no_grad():
            h = inputs if self.prefix is None else self.prefix(inputs)
            features = net.dropout(self.rest(h))
            logits = net.classifier(features)[:, : net.num_classes]
        return confidnet_loss(net.confidnet(features), logits, y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.network.confidnet.parameters(), lr=self.lr)


class ConfidNetFinetuneModule(L.LightningModule):
    """ConfidNet's optional fine-tuning stage (Corbière et al. 2019): the network's own ConfidNet
    body (a copy of the classifier's body) and the MLP are trained together by MSE to the
    true-class probability of the frozen classifier, with Adam.

    Batches are ``(images, logits, labels)`` with the classifier's logits precomputed; the
    caller keeps batch norm of the ConfidNet body in eval mode.
    """

    def __init__(self, network: Network, *, lr: float) -> None:
        super().__init__()
        if network.confidnet is None or network.confidnet_body is None:
            raise ValueError("network must carry a ConfidNet head with its own body")
        self.network = network
        self.lr = lr

    def training_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int):
        x, logits, y = batch
        net = self.network
        features = net.confidnet_body(net.normalize(x))
        return confidnet_loss(net.confidnet(features), logits, y)

    def configure_optimizers(self):
        net = self.network
        params = [*net.confidnet_body.parameters(), *net.confidnet.parameters()]
        return torch.optim.Adam(params, lr=self.lr)
