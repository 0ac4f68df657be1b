"""ODIN (Liang, Li & Srikant, ICLR 2018) on the models of another method, ``kind: odin``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from fdbench.training.methods import ExternalSetName, MethodParams, TrainingMethod, register
from fdbench.training.methods.odin.grids import ODIN_EPSILONS, ODIN_TEMPERATURES

if TYPE_CHECKING:
    import torch

    from fdbench.data.types import Experiment
    from fdbench.models.network import Network
    from fdbench.outputs import SplitOutputs
    from fdbench.training.context import TrainContext

__all__ = ["ODIN", "ODIN_EPSILONS", "ODIN_TEMPERATURES", "ODINParams"]


class ODINParams(MethodParams):
    """ODIN on the model of method ``base`` (trained by it, unchanged). ``temperature`` and
    ``epsilon``: fixed values, or ``None`` to select them on the grids ``temperatures`` ×
    ``epsilons`` (Kim et al.'s ``methods/odin.py``) by the AUROC of the validation split
    (at most ``max_val`` images, seeded subset) against ``external_size`` images of the
    external set ``external`` generated with ``external_seed`` (apart from Outlier Exposure's
    training draw, seed 0). The selected values are recorded in the checkpoint's ``params``."""

    base: str = "ce"
    temperature: float | None = Field(default=None, gt=0)
    epsilon: float | None = Field(default=None, ge=0)
    temperatures: tuple[float, ...] = Field(default=ODIN_TEMPERATURES, min_length=1)
    epsilons: tuple[float, ...] = Field(default=ODIN_EPSILONS, min_length=1)
    external: ExternalSetName = "shapes"
    external_size: int = Field(default=1000, ge=1)
    external_seed: int = Field(default=1, ge=0)
    max_val: int | None = Field(default=1000, ge=1)
    batch_size: int = Field(default=500, ge=1)


@register
class ODIN(TrainingMethod):
    """ODIN scores of the model of method ``base``: temperature scaling plus input
    perturbation against the gradient of the max log-softmax
    (:mod:`fdbench.training.methods.odin.scores`), computed at inference (it needs the model) and
    stored as the head ``odin`` (CSF ``ODIN``). Training loads (or trains) the base model and,
    unless both are given, selects T and ε on the validation split against the external set, never a
    test set (Kim et al., Section 4); the external set must be disjoint from the experiment's
    classes. The method's own confidence is the ODIN score."""

    name = "odin"
    display_prefix = "ODIN"
    params_model = ODINParams
    csfs = ("ODIN",)

    def dependencies(self) -> tuple[str, ...]:
        return (self.params.base,)

    def check_experiment(self, experiment: Experiment) -> None:
        """The external set must be disjoint from the experiment's classes and test sets
        (where T and ε are selected on it)."""
        from fdbench.data.sources.external import check_external_for_experiment

        p = self.params
        if p.temperature is None or p.epsilon is None:
            check_external_for_experiment(p.external, experiment)

    def train(self, ctx: TrainContext) -> tuple[Network, dict[str, Any]]:
        p = self.params
        net, info = ctx.train_or_load(p.base)
        if p.temperature is None or p.epsilon is None:
            from fdbench.data.sources.external import load_external
            from fdbench.training.methods.odin.scores import select_odin_params

            self.check_experiment(ctx.experiment)
            val = ctx.experiment.val.images
            if p.max_val is not None and len(val) > p.max_val:
                rng = np.random.default_rng([ctx.seed, 3])
                val = val[np.sort(rng.choice(len(val), p.max_val, replace=False))]
            h, _, c = val.shape[1:]
            external = load_external(
                p.external, p.external_size, size=int(h), channels=int(c), seed=p.external_seed
            )
            with ctx.session():
                t, e, _ = select_odin_params(
                    net,
                    val,
                    external.images,
                    temperatures=p.temperatures if p.temperature is None else (p.temperature,),
                    epsilons=p.epsilons if p.epsilon is None else (p.epsilon,),
                    batch_size=p.batch_size,
                )
            self.params = p.model_copy(update={"temperature": t, "epsilon": e})
        return net.eval(), dict(info["spec"])

    def input_heads(self, model: Network, images: torch.Tensor) -> dict[str, torch.Tensor]:
        from fdbench.training.methods.odin.scores import odin_batch_scores

        p = self.params
        if p.temperature is None or p.epsilon is None:
            raise ValueError(
                "ODIN's temperature and epsilon are unset: they are selected when the method "
                "trains and recorded in its checkpoint's params"
            )
        return {"odin": odin_batch_scores(model, images, temperature=p.temperature,
                                          epsilon=p.epsilon)}  # fmt: skip

    def validation_confidence(self, split: SplitOutputs) -> np.ndarray:
        return np.asarray(split.heads["odin"], dtype=np.float64)
