"""Last-layer Laplace (Daxberger et al., NeurIPS 2021) on the trained models of another method."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from . import MethodParams, TrainingMethod, register

if TYPE_CHECKING:
    import torch

    from ...models.network import Network
    from ..context import TrainContext

__all__ = ["Laplace", "LaplaceParams"]


class LaplaceParams(MethodParams):
    """Last-layer Laplace on the models of method ``base``: ``predictive`` ``"probit"`` (the
    default of laplace-torch and of Bernhardt et al.) or ``"mc"`` with ``mc_samples`` draws of
    the logits."""

    base: str = "ce"
    predictive: Literal["probit", "mc"] = "probit"
    mc_samples: int = Field(default=100, ge=1)


@register
class Laplace(TrainingMethod):
    """Last-layer Laplace approximation (Daxberger et al., "Laplace Redux — effortless Bayesian
    deep learning", NeurIPS 2021) as Bernhardt et al. use it (``Laplace(model,
    'classification')``, ``fit(train_loader)``, ``optimize_prior_precision(method='marglik')``,
    probit predictive: ``failure_detection/uncertainty_scores/laplace.py`` of
    melanibe/failure_detection_benchmark). The base model is kept; the posterior of its final
    layer (Kronecker-factored GGN on the train split's deterministic features, prior precision
    by marginal likelihood: :mod:`fdbench.models.laplace`) is stored as the network head
    ``laplace``. The stored logits are the log predictive probabilities, so MSR is the
    Laplace confidence (the predictive probability of the predicted class). Depends on
    ``base``; laplace-torch itself is not used (it requires torchvision, which would replace
    the pinned CPU PyTorch by a CUDA build).
    """

    name = "laplace"
    display_prefix = "Laplace"
    params_model = LaplaceParams
    network_head = "laplace"

    def dependencies(self) -> tuple[str, ...]:
        return (self.params.base,)

    def train(self, ctx: TrainContext) -> tuple[Network, dict[str, Any]]:
        import torch

        base, base_info = ctx.train_or_load(self.params.base)
        build = dict(base_info["spec"])
        if build.get("head") is not None:
            raise ValueError(
                f"laplace: base {self.params.base!r} must be a plain classifier, "
                f"got head {build['head']!r}"
            )
        build["head"] = "laplace"
        with ctx.session():
            net = ctx.network(build)
            missing, unexpected = net.load_state_dict(base.state_dict(), strict=False)
            if unexpected or any(not k.startswith("laplace.") for k in missing):
                raise ValueError(f"base {self.params.base!r} does not match the Laplace network")
            net.eval()
            x = ctx.images()
            with torch.inference_mode():
                features = torch.cat(
                    [net.features(x[i : i + 1000]).double() for i in range(0, len(x), 1000)]
                )
                weight = net.classifier.weight.double()
                bias = net.classifier.bias.double()
                logits = features @ weight.T + bias
                norm = float((weight**2).sum() + (bias**2).sum())
                net.laplace.fit(features, logits, norm)
        return net.eval(), build

    def predictive_logits(
        self, model: Network, images: torch.Tensor, features: torch.Tensor
    ) -> torch.Tensor:
        """Log of the probit (or Monte Carlo, draws seeded by 0 in every batch) predictive
        probabilities."""
        import torch

        from ...models.laplace import probit_log_probabilities, sampled_log_probabilities

        weight = model.classifier.weight.double()
        logits = features @ weight.T + model.classifier.bias.double()
        variance = model.laplace.variance(features)
        if self.params.predictive == "probit":
            return probit_log_probabilities(logits, variance)
        generator = torch.Generator().manual_seed(0)
        return sampled_log_probabilities(logits, variance, self.params.mc_samples, generator)
