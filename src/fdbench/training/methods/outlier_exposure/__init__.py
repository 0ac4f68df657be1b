"""Outlier Exposure (Hendrycks, Mazeika & Dietterich, ICLR 2019), ``kind: outlier_exposure``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from fdbench.training.methods import EndToEndParams, ExternalSetName, TrainingMethod, register

if TYPE_CHECKING:
    from fdbench.data.types import Experiment
    from fdbench.training.context import TrainContext

__all__ = ["OutlierExposure", "OutlierExposureParams"]


class OutlierExposureParams(EndToEndParams):
    """Outlier Exposure, trained from scratch: λ (``weight``, 0.5 as Hendrycks et al. and Kim
    et al.), outlier batches ``ratio`` (2, Kim et al.) times the in-distribution batch, drawn
    from ``external_size`` images of the external set ``external``
    (:data:`fdbench.data.sources.external.EXTERNAL_SETS`) generated with ``external_seed``."""

    external: ExternalSetName = "shapes"
    external_size: int = Field(default=20_000, ge=1)
    external_seed: int = Field(default=0, ge=0)
    weight: float = Field(default=0.5, ge=0)
    ratio: int = Field(default=2, ge=1)


@register
class OutlierExposure(TrainingMethod):
    """Cross-entropy on the in-distribution batch plus λ times the cross-entropy to the uniform
    distribution on a twice as large batch of external outliers, one forward pass on both
    (:mod:`fdbench.training.methods.outlier_exposure.loss`; Kim et al.'s ``methods/oe/train.py``).
    The external set must be disjoint from the experiment's in-distribution, near-OoD and far-OoD
    classes (:func:`fdbench.data.sources.external.check_external_for_experiment`), checked when the
    benchmark is planned and again before training. Confidence: the maximum softmax response."""

    name = "outlier_exposure"
    display_prefix = "OE"
    params_model = OutlierExposureParams

    def check_experiment(self, experiment: Experiment) -> None:
        """The external set must be disjoint from the experiment's classes and test sets."""
        from fdbench.data.sources.external import check_external_for_experiment

        check_external_for_experiment(self.params.external, experiment)

    def train_data(self, ctx: TrainContext) -> Any:
        from fdbench.data.sources.external import load_external
        from fdbench.training.augment import Pipeline
        from fdbench.training.loader import augmentation_ops, image_tensor
        from fdbench.training.methods.outlier_exposure.loss import outlier_loader

        p = self.params
        self.check_experiment(ctx.experiment)
        h, _, c = ctx.experiment.train.images.shape[1:]
        external = load_external(
            p.external, p.external_size, size=int(h), channels=int(c), seed=p.external_seed
        )
        ops = augmentation_ops(ctx.config.training.augment)
        return outlier_loader(
            ctx.images(),
            ctx.labels(),
            image_tensor(external.images),
            batch_size=ctx.config.training.batch_size,
            seed=ctx.seed,
            ratio=p.ratio,
            augment=(lambda s: Pipeline(ops, s)) if ops else None,
        )

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> Any:
        import torch

        from fdbench.training.methods.outlier_exposure.loss import outlier_exposure_loss

        x, y, outliers = batch
        logits = module.network(torch.cat([x, outliers]))
        return outlier_exposure_loss(logits[: len(x)], y, logits[len(x) :], self.params.weight)
