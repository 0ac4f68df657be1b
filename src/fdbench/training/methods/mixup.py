"""Mixup: cross-entropy on convex combinations of pairs of samples and of their labels
(``kind: mixup``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from fdbench.training.methods import EndToEndParams, TrainingMethod, register

if TYPE_CHECKING:
    from fdbench.training.context import TrainContext

__all__ = ["Mixup", "MixupParams", "mixup_loss"]


class MixupParams(EndToEndParams):
    """``alpha``: the Beta(α, α) distribution of the mixing weight λ (the authors' CIFAR value
    1.0)."""

    alpha: float = Field(default=1.0, gt=0.0)


def mixup_loss(network: Any, x: Any, y: Any, lam: float, permutation: Any) -> Any:
    """``λ CE(f(x̃), y) + (1 − λ) CE(f(x̃), y[π])`` with ``x̃ = λ x + (1 − λ) x[π]`` (Zhang et
    al., "mixup: Beyond Empirical Risk Minimization", ICLR 2018, Eq. 1; the authors'
    ``mixup_data``/``mixup_criterion`` in github.com/facebookresearch/mixup-cifar10,
    ``train.py``)."""
    import torch.nn.functional as F

    mixed = lam * x + (1.0 - lam) * x[permutation]
    out = network(mixed)
    return lam * F.cross_entropy(out, y) + (1.0 - lam) * F.cross_entropy(out, y[permutation])


@register
class Mixup(TrainingMethod):
    """Mixup training (:func:`mixup_loss`), one λ ~ Beta(α, α) and one permutation π per batch
    as the authors' code, drawn from generators seeded with the run seed; the stored logits are
    those of the unmixed test images."""

    name = "mixup"
    display_prefix = "Mixup"
    params_model = MixupParams

    def train_data(self, ctx: TrainContext) -> Any:
        import numpy as np
        import torch

        self._rng = np.random.default_rng(ctx.seed + 11)
        self._generator = torch.Generator().manual_seed(ctx.seed + 11)
        return ctx.loader()

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch

        x, y = batch
        lam = float(self._rng.beta(self.params.alpha, self.params.alpha))
        permutation = torch.randperm(len(x), generator=self._generator).to(x.device)
        return mixup_loss(module.network, x.float(), y, lam, permutation)
