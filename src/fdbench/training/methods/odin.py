"""ODIN (Liang, Li & Srikant, ICLR 2018) on the models of another method, ``kind: odin``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from . import ExternalSetName, MethodParams, TrainingMethod, register

if TYPE_CHECKING:
    import torch

    from ...data.studies import Experiment
    from ...models.network import Network
    from ...outputs import SplitOutputs
    from ..context import TrainContext

__all__ = ["ODIN", "ODIN_EPSILONS", "ODIN_TEMPERATURES", "ODINParams"]

#: Temperatures searched by Kim et al. (``methods/odin.py``), the range of Liang et al.
ODIN_TEMPERATURES = (1.0, 10.0, 100.0, 1000.0)
#: Perturbation magnitudes searched by Kim et al. (``methods/odin.py``; Lee et al. 2018's grid).
ODIN_EPSILONS = (0.0, 0.0005, 0.001, 0.0014, 0.002, 0.0024, 0.005, 0.01, 0.05, 0.1, 0.2)


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
    perturbation against the gradient of the max log-softmax (:mod:`fdbench.training.odin`),
    computed at inference (it needs the model) and stored as the head ``odin`` (CSF
    ``ODIN``). Training loads (or trains) the base model and, unless both are given, selects
    T and ε on the validation split against the external set, never a test set (Kim et al.,
    Section 4); the external set must be disjoint from the experiment's classes. The method's
    own confidence is the ODIN score."""

    name = "odin"
    params_model = ODINParams
    csfs = ("ODIN",)

    def dependencies(self) -> tuple[str, ...]:
        return (self.params.base,)

    def check_experiment(self, experiment: Experiment) -> None:
        """The external set must be disjoint from the experiment's classes and test sets
        (where T and ε are selected on it)."""
        from ...data.external import check_external_for_experiment

        p = self.params
        if p.temperature is None or p.epsilon is None:
            check_external_for_experiment(p.external, experiment)

    def train(self, ctx: TrainContext) -> tuple[Network, dict[str, Any]]:
        p = self.params
        net, info = ctx.train_or_load(p.base)
        if p.temperature is None or p.epsilon is None:
            from ...data.external import load_external
            from ..odin import select_odin_params

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
        from ..odin import odin_batch_scores

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
