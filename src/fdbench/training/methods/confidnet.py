"""ConfidNet (Corbière et al., NeurIPS 2019): a confidence MLP trained on a frozen classifier."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    classifier's own body staying untouched.
    """

    base: str = "ce"
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
    """

    def __init__(self, rest: Any, *, lr: float, prefix: Any = None) -> None:
        self.rest, self.prefix, self.lr = rest, prefix, lr

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
        """Nothing."""

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
    params_model = ConfidNetParams
    network_head = "confidnet"
    csfs = ("ConfidNet", "ConfidNet-MCD")

    def dependencies(self) -> tuple[str, ...]:
        return (self.params.base,)

    def train(self, ctx: TrainContext) -> tuple[Network, dict[str, Any]]:
        import torch

        from ...models.dropout import split_at_first_dropout
        from ..context import MethodModule
        from ..loader import make_loader

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
            loader = make_loader(inputs, labels, batch_size=batch_size, shuffle=True, seed=ctx.seed)
            ctx.fit(MethodModule(net, hooks), loader, params.epochs)
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
