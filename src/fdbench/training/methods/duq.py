"""DUQ (van Amersfoort et al., ICML 2020): RBF class centroids with a gradient penalty."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from . import EndToEndParams, TrainingMethod, register

if TYPE_CHECKING:
    import torch

    from ...models.network import Network
    from ..context import TrainContext

__all__ = ["DUQ", "DUQParams"]


class DUQParams(EndToEndParams):
    """DUQ: length scale σ, centroid moving-average rate γ, gradient-penalty weight λ and the
    embedding size (default: the feature size). Defaults: Bernhardt et al.'s
    (``configs/default_config.py``; their MedMNIST configs use λ = 0.1)."""

    length_scale: float = Field(default=0.1, gt=0)
    gamma: float = Field(default=0.999, gt=0, lt=1)
    gradient_penalty: float = Field(default=0.5, ge=0)
    embedding: int | None = Field(default=None, ge=1)


@register
class DUQ(TrainingMethod):
    """Deterministic uncertainty quantification (van Amersfoort et al., "Uncertainty estimation
    using a single deep deterministic neural network", ICML 2020) as Bernhardt et al. train it
    (``classification/duq/train.py``, ``classification/duq/duq_model.py`` of
    melanibe/failure_detection_benchmark): loss = binary cross-entropy of the kernel values
    ``K_c`` (:class:`~fdbench.models.duq.DUQHead`, network head ``duq``) against the one-hot
    labels + λ · the two-sided gradient penalty w.r.t. the normalised input
    (:func:`~fdbench.models.duq.gradient_penalty`); after every optimiser step the centroids
    move towards the batch's embeddings of the updated network in eval mode. The final linear
    layer is not used, and no MC-dropout samples of it are stored. Stored logits: ``log K_c``
    (the prediction is the arg-max kernel); stored head ``duq``: ``max_c K_c``, the DUQ
    confidence (CSF ``DUQ``), also its own confidence for selection.
    """

    name = "duq"
    display_prefix = "DUQ"
    params_model = DUQParams
    network_head = "duq"
    mc_dropout = False
    csfs = ("DUQ",)

    def train(self, ctx: TrainContext) -> tuple[Network, dict[str, Any]]:
        params = self.params
        epochs = params.epochs or ctx.config.training.epochs
        with ctx.session():
            build = ctx.build_spec("duq", params.dropout)
            build["options"] = {
                **build["options"],
                "duq_embedding": params.embedding,
                "duq_length_scale": params.length_scale,
                "duq_gamma": params.gamma,
            }
            net = ctx.network(build)
            ctx.fit(ctx.module(net, self), self.train_data(ctx), epochs)
        return net.eval(), build

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch.nn.functional as F

        from ...models.duq import gradient_penalty

        x, y = batch
        net = module.network
        inputs = net.normalize(x).requires_grad_(True)
        kernels = net.duq(net.dropout(net.body(inputs)))
        onehot = F.one_hot(y, net.num_classes).to(kernels.dtype)
        loss = F.binary_cross_entropy(kernels, onehot)
        if self.params.gradient_penalty > 0:
            loss = loss + self.params.gradient_penalty * gradient_penalty(inputs, kernels)
        return loss

    def validation_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        """The binary cross-entropy of the kernel values to the one-hot labels (the training
        loss without the gradient penalty), logged as ``val_loss`` for ``plateau``."""
        import torch.nn.functional as F

        from ..schedules import VAL_LOSS

        x, y = batch
        net = module.network
        kernels = net.duq(net.features(x))
        loss = F.binary_cross_entropy(kernels, F.one_hot(y, net.num_classes).to(kernels.dtype))
        module.log(VAL_LOSS, loss, on_epoch=True, batch_size=y.shape[0])
        return loss

    def on_train_batch_end(self, module: Any, batch: Any, batch_idx: int) -> None:
        """Move the centroids with the batch's embeddings of the updated network (eval mode)."""
        import torch

        x, y = batch
        net = module.network
        onehot = torch.nn.functional.one_hot(y, net.num_classes).float()
        net.eval()
        with torch.no_grad():
            net.duq.update(net.features(x), onehot)
        net.train()

    def predictive_logits(
        self, model: Network, images: torch.Tensor, features: torch.Tensor
    ) -> torch.Tensor:
        """``log K_c`` of the float64 features."""
        return model.duq.log_kernel(features)

    def input_heads(self, model: Network, images: torch.Tensor) -> dict[str, torch.Tensor]:
        """``duq``: the largest kernel value, float64."""
        kernels = model.duq(model.features(images).double())
        return {"duq": kernels.max(dim=1).values}

    def validation_confidence(self, split: Any) -> np.ndarray:
        """The DUQ head."""
        return split.heads["duq"]
