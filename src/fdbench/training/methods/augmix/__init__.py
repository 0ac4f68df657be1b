"""AugMix (Hendrycks et al., ICLR 2020), ``kind: augmix``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from fdbench.training.methods import EndToEndParams, TrainingMethod, register

if TYPE_CHECKING:
    from fdbench.training.context import TrainContext

__all__ = ["AugMix", "AugMixParams"]


class AugMixParams(EndToEndParams):
    """AugMix (Kim et al.'s CIFAR settings, ``methods/augmix/augmix_loader.py``): ``width``
    chains of ``depth`` operations (-1: 1–3 at random), ``severity``, Dirichlet / Beta
    ``alpha`` and the Jensen–Shannon ``weight`` λ."""

    width: int = Field(default=3, ge=1)
    depth: Literal[-1, 1, 2, 3] = -1
    severity: float = Field(default=3.0, gt=0, le=10)
    alpha: float = Field(default=1.0, gt=0)
    weight: float = Field(default=12.0, ge=0)


@register
class AugMix(TrainingMethod):
    """Cross-entropy on the clean (conventionally augmented) images plus λ times the
    Jensen–Shannon consistency of the clean and two AugMix views, one forward pass on all
    three (:mod:`fdbench.training.methods.augmix.ops`; Kim et al.'s ``methods/augmix/train.py``).
    The views are drawn from a generator seeded with the run seed. Confidence: the maximum
    softmax response."""

    name = "augmix"
    display_prefix = "AugMix"
    params_model = AugMixParams

    def train_data(self, ctx: TrainContext) -> Any:
        import torch

        self._generator = torch.Generator().manual_seed(ctx.seed + 7)
        return ctx.loader()

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch
        import torch.nn.functional as F

        from fdbench.training.methods.augmix.ops import augmix, jensen_shannon_consistency

        p = self.params
        x, y = batch
        mixing = {"width": p.width, "depth": p.depth, "severity": p.severity, "alpha": p.alpha}
        views = [augmix(x, self._generator, **mixing) for _ in range(2)]
        clean, aug1, aug2 = module.network(torch.cat([x.float(), *views])).split(len(x))
        return F.cross_entropy(clean, y) + p.weight * jensen_shannon_consistency(clean, aug1, aug2)
