"""ConfidNet (Corbière et al., NeurIPS 2019): a confidence MLP trained on a frozen classifier."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field

from . import MethodParams, TrainingMethod, register

if TYPE_CHECKING:
    from ...models.network import Network
    from ..context import TrainContext

__all__ = ["ConfidNet", "ConfidNetParams"]

#: Largest cache (bytes) of the body's dropout-free prefix outputs ConfidNet's stage trains on;
#: above it the prefix runs on the images in every step.
CACHE_BYTES = 1 << 30


class ConfidNetParams(MethodParams):
    """ConfidNet second stage (Corbière et al. 2019) on the frozen models of method ``base``.

    The MLP (``depth`` layers, ``hidden`` units) is trained with Adam at ``lr`` for ``epochs``
    epochs on the train split; with ``finetune_epochs`` > 0 a copy of the body feeding the MLP
    is then fine-tuned together with it (Adam at ``finetune_lr``, batch norm frozen), the
    classifier's own body staying untouched. ``checkpoint``: ``"last"`` keeps the MLP of the
    last epoch; ``"best_val_aupr_error"`` the one of the epoch with the best validation
    AUPR-Error (as Bernhardt et al.; see :class:`Stage2`).
    """

    base: str = "ce"
    checkpoint: Literal["last", "best_val_aupr_error"] = "last"
    epochs: int = Field(default=5, ge=1)
    lr: float = Field(default=1e-3, gt=0)
    hidden: int = Field(default=400, ge=1)
    depth: int = Field(default=4, ge=1)
    finetune_epochs: int = Field(default=0, ge=0)
    finetune_lr: float = Field(default=1e-5, gt=0)


class Stage2:
    """Hooks of ConfidNet's second stage (as FD-Shifts' stage 1,
    ``fd_shifts/models/confidnet_model.py``, ``training_stage == 1``): fits the ConfidNet MLP
    of the module's network, whose body and classifier stay frozen (``requires_grad``), by MSE
    to the true-class probability, with Adam at ``lr``.

    Every step runs a dropped-out pass of the frozen network: its dropout layers sample (batch
    norm stays in eval mode), the MLP reads the pass's features after the final dropout layer,
    and the target is the TCP of that pass's class outputs. A network without dropout gives
    the deterministic features and TCP.

    Batches are ``(inputs, labels)``; ``rest`` maps ``prefix(inputs)`` to the body's features.
    With ``prefix=None`` the inputs are the outputs of the body's dropout-free prefix, computed
    once (:func:`~fdbench.models.dropout.split_at_first_dropout`); otherwise images, run
    through ``prefix`` (normalisation and the prefix) in every step.


    With ``validation`` (uint8 images, int64 labels) the MLP is scored after every epoch by
    :func:`validation_aupr_error` and the best state is kept in :attr:`best` (the score and
    a copy of the MLP's state; the first epoch's when no epoch has a finite score).
    """

    def __init__(
        self,
        rest: Any,
        *,
        lr: float,
        prefix: Any = None,
        validation: tuple[Any, Any] | None = None,
    ) -> None:
        self.rest, self.prefix, self.lr = rest, prefix, lr
        self.validation = validation
        self.best: tuple[float, dict[str, Any]] | None = None

    def setup(self, module: Any) -> None:
        from ...models.network import ConfidNetHead

        if not isinstance(module.network.confidnet, ConfidNetHead):
            raise TypeError("network must carry a ConfidNet head")

    def on_train_epoch_start(self, module: Any) -> None:
        import torch

        net = module.network
        net.eval()
        for layer in net.modules():
            if isinstance(layer, torch.nn.Dropout):
                layer.train()
        net.confidnet.train()

    def on_train_epoch_end(self, module: Any) -> None:
        """With ``validation``: score the epoch's MLP and keep the best."""
        import copy

        if self.validation is None:
            return
        net = module.network
        score = validation_aupr_error(net, *self.validation)
        if self.best is None or score > self.best[0]:
            self.best = (score, copy.deepcopy(net.confidnet.state_dict()))

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch

        from ..losses import confidnet_loss

        inputs, y = batch
        net = module.network
        with torch.no_grad():
            h = inputs if self.prefix is None else self.prefix(inputs)
            features = net.dropout(self.rest(h))
            logits = net.classifier(features)[:, : net.num_classes]
        return confidnet_loss(net.confidnet(features), logits, y)

    def configure_optimizers(self, module: Any) -> Any:
        import torch

        return torch.optim.Adam(module.network.confidnet.parameters(), lr=self.lr)


def validation_aupr_error(net: Any, images: Any, labels: Any) -> float:
    """AUPR-Error of the ConfidNet head of ``net`` on uint8 ``images`` (eval mode, no dropout):
    average precision of the classifier's failures scored by the negated predicted TCP, as
    the ``Val/ErrorAUPR`` that selects Bernhardt et al.'s ConfidNet checkpoint
    (``failure_detection/uncertainty_scores/confidNet/confidNet.py`` and ``train.py`` of
    melanibe/failure_detection_benchmark: ``AveragePrecision`` of ``(-output, errors)``,
    ``ModelCheckpoint(monitor="Val/ErrorAUPR", mode="max")``; the paper's "lowest" reads
    against its code, which keeps the highest). ``-inf`` when there is no failure."""
    import math

    import numpy as np
    import torch

    from ... import metrics

    training = net.confidnet.training
    net.eval()
    with torch.inference_mode():
        features = torch.cat([net.features(images[i : i + 1000])
                              for i in range(0, len(images), 1000)])  # fmt: skip
        predictions = net.classifier(features)[:, : net.num_classes].argmax(dim=1)
        tcp = torch.sigmoid(net.confidnet(features))
    net.confidnet.train(training)
    residuals = (predictions != labels).numpy().astype(np.float64)
    if not residuals.any():
        return -math.inf
    return metrics.ap_f_error(residuals, tcp.double().numpy())


class Finetune:
    """Hooks of ConfidNet's optional fine-tuning stage (Corbière et al. 2019): the network's
    own ConfidNet body (a copy of the classifier's body) and the MLP are trained together by
    MSE to the true-class probability of the frozen classifier, with Adam at ``lr``.

    Batches are ``(images, logits, labels)`` with the classifier's logits precomputed; the
    caller keeps batch norm of the ConfidNet body in eval mode.
    """

    def __init__(self, *, lr: float) -> None:
        self.lr = lr

    def setup(self, module: Any) -> None:
        net = module.network
        if net.confidnet is None or net.confidnet_body is None:
            raise ValueError("network must carry a ConfidNet head with its own body")

    def on_train_epoch_start(self, module: Any) -> None:
        """Nothing."""

    def on_train_epoch_end(self, module: Any) -> None:
        """Nothing."""

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        from ..losses import confidnet_loss

        x, logits, y = batch
        net = module.network
        features = net.confidnet_body(net.normalize(x))
        return confidnet_loss(net.confidnet(features), logits, y)

    def configure_optimizers(self, module: Any) -> Any:
        import torch

        net = module.network
        params = [*net.confidnet_body.parameters(), *net.confidnet.parameters()]
        return torch.optim.Adam(params, lr=self.lr)


@register
class ConfidNet(TrainingMethod):
    """ConfidNet (Corbière et al., "Addressing failure prediction by learning model
    confidence", NeurIPS 2019): the models of method ``base`` get a ConfidNet MLP (network head
    ``confidnet``) trained by :class:`Stage2` and optionally :class:`Finetune`; the classifier
    stays the base model's. Stored head ``confidnet`` (the predicted TCP); CSFs ConfidNet and
    ConfidNet-MCD; its own confidence is ConfidNet. Depends on ``base``.
    """

    name = "confidnet"
    display_prefix = "ConfidNet"
    params_model = ConfidNetParams
    network_head = "confidnet"
    csfs = ("ConfidNet", "ConfidNet-MCD")

    def dependencies(self) -> tuple[str, ...]:
        return (self.params.base,)

    def train(self, ctx: TrainContext) -> tuple[Network, dict[str, Any]]:
        import torch

        from ...models.dropout import split_at_first_dropout
        from ..context import MethodModule
        from ..loader import image_tensor, make_loader

        params = self.params
        batch_size = ctx.config.training.batch_size
        base, base_info = ctx.train_or_load(params.base)
        build = dict(base_info["spec"])
        build["head"] = "confidnet"
        build["options"] = {
            **build["options"],
            "confidnet_hidden": params.hidden,
            "confidnet_depth": params.depth,
            "confidnet_own_body": params.finetune_epochs > 0,
        }
        with ctx.session():
            net = ctx.network(build)
            missing, unexpected = net.load_state_dict(base.state_dict(), strict=False)
            if unexpected or any(
                not k.startswith(("confidnet.", "confidnet_body.")) for k in missing
            ):
                raise ValueError(f"base {params.base!r} does not match the ConfidNet network")
            if net.confidnet_body is not None:
                net.confidnet_body.load_state_dict(net.body.state_dict())
            net.eval()
            for p in net.parameters():
                p.requires_grad_(False)
            for p in net.confidnet.parameters():
                p.requires_grad_(True)
            x = ctx.images()
            labels = ctx.labels()
            prefix, rest = split_at_first_dropout(net.body)
            with torch.inference_mode():
                size = prefix(net.normalize(x[:1]))[0].numel() * len(x) * 4
            if size <= CACHE_BYTES:
                with torch.inference_mode():
                    inputs = torch.cat(
                        [prefix(net.normalize(x[i : i + 1000])) for i in range(0, len(x), 1000)]
                    ).clone()
                hooks = Stage2(rest, lr=params.lr)
            else:
                inputs = x
                hooks = Stage2(
                    rest, lr=params.lr, prefix=torch.nn.Sequential(net.normalize, prefix)
                )
            if params.checkpoint == "best_val_aupr_error":
                val = ctx.experiment.val
                hooks.validation = (
                    image_tensor(val.images),
                    torch.from_numpy(np.asarray(val.labels, dtype=np.int64)),
                )
            loader = make_loader(inputs, labels, batch_size=batch_size, shuffle=True, seed=ctx.seed)
            ctx.fit(MethodModule(net, hooks), loader, params.epochs)
            if hooks.best is not None:
                net.confidnet.load_state_dict(hooks.best[1])
            net.eval()
            if params.finetune_epochs > 0:
                with torch.inference_mode():
                    logits = torch.cat([net(x[i : i + 1000]) for i in range(0, len(x), 1000)])
                logits = logits[:, : net.num_classes]
                for p in net.confidnet_body.parameters():
                    p.requires_grad_(True)
                images = make_loader(
                    x, logits.clone(), labels, batch_size=batch_size, shuffle=True,
                    seed=ctx.seed + 1,
                )  # fmt: skip
                ctx.fit(MethodModule(net, Finetune(lr=params.finetune_lr)), images,
                        params.finetune_epochs)  # fmt: skip
        return net.eval(), build

    def validation_confidence(self, split: Any) -> np.ndarray:
        """The ConfidNet head."""
        return split.heads["confidnet"]
