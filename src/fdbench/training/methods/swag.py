"""SWAG (Maddox et al., NeurIPS 2019): SGD with the SWA schedule, then a Gaussian posterior."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from . import EndToEndParams, TrainingMethod, register

if TYPE_CHECKING:
    import torch

    from ...models.network import Network
    from ..context import TrainContext

__all__ = ["SWAG", "SWAGParams", "swag_learning_rate"]


class SWAGParams(EndToEndParams):
    """SWAG: ``lr`` (or ``training.lr``) until half of ``swa_start`` epochs, decayed linearly to
    ``swa_lr`` by 0.9 · ``swa_start``, then constant; the weights after every epoch past
    ``swa_start`` (default: ¾ of the epochs) give the SWA mean, the diagonal variance and the
    last ``rank`` deviations; ``samples`` draws at scale ``scale`` predict, each with its
    batch-norm statistics re-estimated on the train split's batches, or on the first
    ``bn_subset`` of them (a fraction, at least one batch; swa_gaussian's ``bn_update(...,
    subset=...)`` in ``swag/utils.py``; default, left out of the dumped parameters: all)."""

    swa_start: int | None = Field(default=None, ge=0)
    swa_lr: float = Field(default=0.01, gt=0)
    rank: int = Field(default=20, ge=1)
    samples: int = Field(default=10, ge=1)
    scale: float = Field(default=0.5, ge=0)
    bn_subset: float | None = Field(default=None, gt=0, le=1, exclude_if=lambda v: v is None)


def swag_learning_rate(epoch: int, lr: float, swa_lr: float, swa_start: int) -> float:
    """The SWA/SWAG learning rate of ``epoch`` (from 0): ``lr`` for t = epoch / swa_start
    ≤ ½, linear to ``swa_lr`` at t = 0.9, then ``swa_lr`` (``schedule`` of
    ``classification/swag/train_swag.py`` in melanibe/failure_detection_benchmark, from
    wjmaddox/swa_gaussian's ``experiments/train/train.py``); ``swa_lr`` throughout when
    ``swa_start`` is 0."""
    if swa_start < 0 or lr <= 0 or swa_lr <= 0:
        raise ValueError(f"need swa_start >= 0 and positive rates, got {swa_start}, {lr}, {swa_lr}")
    t = epoch / swa_start if swa_start > 0 else 1.0
    ratio = swa_lr / lr
    if t <= 0.5:
        factor = 1.0
    elif t <= 0.9:
        factor = 1.0 - (1.0 - ratio) * (t - 0.5) / 0.4
    else:
        factor = ratio
    return lr * factor


@register
class SWAG(TrainingMethod):
    """SWA-Gaussian (Maddox et al., "A simple baseline for Bayesian uncertainty in deep
    learning", NeurIPS 2019) as Bernhardt et al. train and evaluate it
    (``classification/swag/train_swag.py``, ``failure_detection/uncertainty_scores/
    swag_scores.py`` of melanibe/failure_detection_benchmark): SGD with momentum and the SWA
    schedule (:func:`swag_learning_rate`), one weight snapshot after every epoch past
    ``swa_start`` (:class:`~fdbench.models.swag.SWAGMoments`: mean, diagonal, the last
    ``rank`` deviations); then ``samples`` draws (generator seeded by the run seed), each with
    its batch-norm statistics recomputed on the train split (unaugmented, in order; its first
    batches with ``bn_subset``), stored as the network head ``swag``. The network's own
    weights are the SWA mean (batch norm recomputed likewise), whose features are stored. The
    stored logits are the log of the samples' mean softmax, so MSR is the SWAG confidence (the
    average softmax of the predicted class).
    """

    name = "swag"
    display_prefix = "SWAG"
    params_model = SWAGParams
    network_head = "swag"

    def swa_start(self, epochs: int) -> int:
        """``params.swa_start`` or ¾ of ``epochs``; ``ValueError`` unless below ``epochs``."""
        start = self.params.swa_start
        if start is None:
            start = 3 * epochs // 4
        if start >= epochs:
            raise ValueError(f"swag: swa_start ({start}) must be below the epochs ({epochs})")
        return start

    def train(self, ctx: TrainContext) -> tuple[Network, dict[str, Any]]:
        import torch

        from ...models.swag import SWAGMoments, bn_state, recompute_batch_norm

        params = self.params
        epochs = params.epochs or ctx.config.training.epochs
        with ctx.session():
            build = ctx.build_spec("swag", params.dropout)
            build["options"] = {**build["options"], "swag_samples": params.samples}
            net = ctx.network(build)
            weights = [p for _, p in net.named_parameters()]
            module = ctx.module(net, self)
            module.swa_start = self.swa_start(epochs)
            module.swag_moments = SWAGMoments(sum(p.numel() for p in weights), params.rank)
            ctx.fit(module, self.train_data(ctx), epochs)
            moments = module.swag_moments
            x = ctx.images()
            size = ctx.config.training.batch_size
            batches = [x[i : i + size] for i in range(0, len(x), size)]
            if params.bn_subset is not None:
                batches = batches[: max(1, int(len(batches) * params.bn_subset))]
            generator = torch.Generator().manual_seed(ctx.seed)
            with torch.no_grad():
                for s in range(params.samples):
                    draw = moments.sample(generator, params.scale).float()
                    torch.nn.utils.vector_to_parameters(draw, weights)
                    recompute_batch_norm(net, batches)
                    net.swag.weights[s] = draw
                    net.swag.bn[s] = bn_state(net.body)
                torch.nn.utils.vector_to_parameters(moments.mean.float(), weights)
                recompute_batch_norm(net, batches)
        return net.eval(), build

    def configure_optimizers(self, module: Any) -> Any:
        """SGD with the configured momentum and weight decay and the SWA schedule per epoch."""
        import torch

        settings = module.settings
        opt = torch.optim.SGD(
            module.network.parameters(),
            lr=settings.lr,
            momentum=settings.momentum,
            weight_decay=settings.weight_decay,
        )
        start = module.swa_start
        swa_lr = self.params.swa_lr

        def factor(epoch: int) -> float:
            return swag_learning_rate(epoch, settings.lr, swa_lr, start) / settings.lr

        scheduler = torch.optim.lr_scheduler.LambdaLR(opt, factor)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": scheduler, "interval": "epoch"}}

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch.nn.functional as F

        x, y = batch
        return F.cross_entropy(module.network(x), y)

    def on_train_epoch_end(self, module: Any) -> None:
        """Collect the weights after every epoch past ``swa_start``."""
        import torch

        if module.current_epoch + 1 > module.swa_start:
            module.swag_moments.collect(
                torch.nn.utils.parameters_to_vector(module.network.parameters())
            )

    def predictive_logits(
        self, model: Network, images: torch.Tensor, features: torch.Tensor
    ) -> torch.Tensor:
        """Log of the mean softmax over the stored samples."""
        import math

        import torch
        from torch.func import functional_call

        from ...models.swag import batch_norm_layers

        names = [n for n, _ in model.named_parameters()]
        sizes = [p.numel() for _, p in model.named_parameters()]
        shapes = [p.shape for _, p in model.named_parameters()]
        bn_names = [f"body.{n}.{b}" for n, m in model.body.named_modules()
                    if m in batch_norm_layers(model.body)
                    for b in ("running_mean", "running_var")]  # fmt: skip
        bn_sizes = [model.get_buffer(n).numel() for n in bn_names]
        bn_shapes = [model.get_buffer(n).shape for n in bn_names]
        k = model.num_classes
        log_probs = []
        for w, bn in zip(model.swag.weights, model.swag.bn, strict=True):
            tensors = {
                n: t.view(shape) for n, t, shape in zip(names, w.split(sizes), shapes, strict=True)
            }
            tensors |= {
                n: t.view(shape)
                for n, t, shape in zip(bn_names, bn.split(bn_sizes), bn_shapes, strict=True)
            }
            out = functional_call(model, tensors, (images,))[:, :k]
            log_probs.append(torch.log_softmax(out.double(), dim=1))
        return torch.logsumexp(torch.stack(log_probs), dim=0) - math.log(len(log_probs))
