"""Training methods as plug-ins: the interface a method implements and the registry of methods.

A training method is one module (``fdbench/training/methods/<name>.py``, or a folder
``<name>/`` whose ``__init__.py`` holds the method and whose other modules its PyTorch
implementation) holding one subclass of :class:`TrainingMethod`, decorated with
:func:`register`. Adding a method touches that file (every module of this package is imported
with it, see CONTRIBUTING.md; methods of other packages register through an entry point) and
its tests; the configuration's validation (:func:`fdbench.jobs.plan.parse_config` hands
:func:`get_method` to it), ``jobs.py``, ``inference.py`` and the benchmark planner find it
here. Method modules import PyTorch only inside their hooks, so a configuration is validated
without it.

What a method declares
----------------------
``name``
    The ``kind`` of a method entry in a benchmark configuration.
``display_prefix``
    The prefix of its scoring methods' names in tables and reports (DeepGamblers: ``"DG"``, so
    its MSR is DG-MSR; the cross-entropy baseline: ``""``, its CSFs keep their names); ``None``
    (the default) uses :attr:`name`. :func:`register` hands it to the analysis
    (:func:`fdbench.analysis.scoring_methods.register_method_prefix`), which names scoring
    methods with it.
``params_model``
    A pydantic model (subclass of :class:`MethodParams`, extra keys forbidden) of the
    hyper-parameters; a method entry's ``params`` and every ``grid`` point are validated by it.
    Subclass :class:`EndToEndParams` for the shared ``dropout``, ``lr`` and ``epochs``.
``network_head``
    The confidence head the network needs (``None`` or one of ``fdbench.models.HEADS``); it is
    built into :class:`~fdbench.models.network.Network` (:meth:`head`, per parameters).
``mc_dropout``
    Whether inference stores MC-dropout samples of the final layer for the method's models
    when they have dropout (default ``True``; DUQ, whose final layer is unused, ``False``).
``csfs``
    The CSFs the method's stored outputs add to the logit/feature CSFs (names of
    :data:`fdbench.csf.REGISTRY`, documentation and tests; the CSF stage finds them by the
    stored heads, knowing nothing of training).
:meth:`dependencies`
    Names of other methods of the configuration whose trained models this one needs (ConfidNet:
    its ``base``); checked by the configuration, trained first, covered by the config digest.
:meth:`check_experiment`
    Raises ``ValueError`` if the method cannot run on an experiment (Outlier Exposure and ODIN:
    an external set overlapping a test set); called when the benchmark is planned, before any
    training.

How a method trains (hooks, each receives the Lightning module ``module`` whose ``network``,
``context`` (the job's TrainContext), ``current_epoch``, ``trainer`` it may read and on which
it may keep state)
------------------------------------------------------------------------------------------------
:meth:`train`
    The whole training of one candidate from a :class:`~fdbench.training.context.TrainContext`;
    returns ``(network, build_spec)``. The default trains end to end: it builds the network
    (:meth:`head`, ``params.dropout``), runs :meth:`train_data` through the hooks below for
    ``params.epochs`` (or ``training.epochs``) epochs. ConfidNet overrides it (a stage on a
    frozen base model).
:meth:`train_data`
    The training batches. Default: seeded shuffled ``(images, labels)`` batches with the
    configured augmentation (``ctx.loader()``). A method that needs sample indices (CRL) adds a
    tensor (``ctx.loader(indices=True)`` gives ``(images, labels, indices)``); one that needs
    another batch transform (AugMix) passes ``transform=`` to ``ctx.loader``; one that needs an
    extra data set (Outlier Exposure) returns any iterable of batches Lightning accepts, e.g.
    its own loader zipped with ``ctx.loader()`` (``ctx.config``, ``ctx.experiment`` and
    ``ctx.seed`` are at hand).
:meth:`setup`
    Called once with the module before training (initial state, e.g. DeVries' λ, CRL's
    correctness history sized by ``module.context.experiment.train``).
:meth:`training_step`
    The loss of one batch (as Lightning's ``training_step``).
:meth:`on_train_epoch_start`, :meth:`on_train_epoch_end`
    Lightning's epoch hooks.
:meth:`on_train_batch_end`
    Lightning's hook after each optimiser step (DUQ's centroid update).
:meth:`validation_step`
    Only with the ``plateau`` schedule (then the trainer gets the validation split): logs
    ``val_loss``, which the schedule watches. Default: cross-entropy of the K class outputs.
:meth:`configure_optimizers`
    Default: SGD with the configured momentum, Nesterov, weight decay and schedule.

What inference stores for it (:func:`fdbench.training.inference.predict_split`)
--------------------------------------------------------------------------------
Logits (the K class outputs of the final layer), MC-dropout logits, features and the network
heads' values are stored for every method. A method adds named heads (float64 arrays of N
values, or N × K) with

:meth:`output_heads`
    From the float64 outputs of the final layer (all of them, K or K + 1 columns), batch by
    batch, on the deterministic pass (EDL: the Dirichlet parameters α).
:meth:`input_heads`
    From the model and the uint8 image batch (N × C × H × W), batch by batch, for scores that
    need the model at inference, e.g. gradients w.r.t. the input (ODIN). It is called inside
    ``torch.inference_mode()``: a hook that needs autograd wraps its work in
    ``torch.inference_mode(False)`` and ``torch.enable_grad()`` and clones the inputs.

:meth:`predictive_logits`
    From the model, the uint8 image batch and the float64 features of the deterministic pass:
    float64 N × K log-probabilities of the method's predictive distribution (SWAG's sample
    average, Laplace's probit predictive, DUQ's log kernel values), stored as the split's
    ``logits`` instead of the final layer's outputs, so that the prediction (their arg-max)
    and every logit CSF (MSR: the predictive probability of the predicted class) follow the
    method's predictive. ``None`` (the default) keeps the final layer's logits.

How a candidate is selected
---------------------------
:meth:`validation_confidence` maps the stored outputs of the validation split to the method's
own confidence (default: the maximum softmax response), whose ``selection.metric`` picks the
model a dependent method trains on.

Registry
--------
:func:`register` (a class decorator) adds a method under its ``name``; :func:`get_method`
looks one up (a ``ValueError`` lists the registered names), :func:`method_names` lists them.
Methods of other packages register through the entry-point group ``fdbench.methods`` (each
entry point names a :class:`TrainingMethod` subclass), loaded on the first look-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from fdbench.analysis.scoring_methods import register_method_prefix
from fdbench.core.plugins import load_entry_points
from fdbench.core.validation import check_config_scalars

if TYPE_CHECKING:
    import torch

    from fdbench.data.types import Experiment

    from ...models.network import Network
    from ...outputs import SplitOutputs
    from ..context import TrainContext

__all__ = [
    "ENTRY_POINT_GROUP",
    "EndToEndParams",
    "ExternalSetName",
    "MethodParams",
    "TrainingMethod",
    "get_method",
    "method_names",
    "register",
]

#: Entry-point group through which other packages register training methods.
ENTRY_POINT_GROUP = "fdbench.methods"

_REGISTRY: dict[str, type[TrainingMethod]] = {}
_ENTRY_POINTS_LOADED = False


class MethodParams(BaseModel):
    """Base of every method's parameter model: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_lax_coercion(cls, values: Any) -> Any:
        """Refuse a value pydantic would coerce (``epochs: true``, ``lr: "0.1"``)."""
        return check_config_scalars(values, cls.model_fields)


class EndToEndParams(MethodParams):
    """Parameters shared by the methods trained end to end: ``dropout`` switches the network's
    dropout on; ``lr`` and ``epochs`` override ``training.lr`` and ``training.epochs``."""

    dropout: bool = False
    lr: float | None = Field(default=None, gt=0)
    epochs: int | None = Field(default=None, ge=1)


def _known_external(name: str) -> str:
    """:func:`fdbench.data.sources.external.check_external_name`, imported on first use."""
    from fdbench.data.sources.external import check_external_name

    return check_external_name(name)


#: Type of the ``external`` parameter of the methods that draw on an external data set
#: (Outlier Exposure, ODIN): a name of :data:`fdbench.data.sources.external.EXTERNAL_SETS`.
ExternalSetName = Annotated[str, AfterValidator(_known_external)]


class TrainingMethod:
    """A training method bound to its validated parameters ``params`` (see the module
    docstring for the hooks). Subclasses set :attr:`name` and :attr:`params_model`."""

    name: ClassVar[str]
    display_prefix: ClassVar[str | None] = None
    params_model: ClassVar[type[MethodParams]]
    network_head: ClassVar[str | None] = None
    mc_dropout: ClassVar[bool] = True
    csfs: ClassVar[tuple[str, ...]] = ()

    def __init__(self, params: MethodParams | dict[str, Any] | None = None) -> None:
        if params is None or isinstance(params, dict):
            params = self.params_model.model_validate(params or {})
        if not isinstance(params, self.params_model):
            raise TypeError(
                f"params must be a {self.params_model.__name__}, got {type(params).__name__}"
            )
        self.params = params

    # configuration -------------------------------------------------------------------------
    def dependencies(self) -> tuple[str, ...]:
        """Names of the methods whose trained models this one needs (none by default)."""
        return ()

    def check_experiment(self, experiment: Experiment) -> None:
        """Raise ``ValueError`` if this method cannot run on ``experiment`` (nothing by
        default)."""

    def head(self) -> str | None:
        """The network head of this method's models (:attr:`network_head` by default)."""
        return self.network_head

    # training ------------------------------------------------------------------------------
    def train(self, ctx: TrainContext) -> tuple[Network, dict[str, Any]]:
        """Train one model end to end; returns ``(network, build_spec)`` (see module doc)."""
        params = self.params
        dropout = bool(getattr(params, "dropout", False))
        own_epochs = getattr(params, "epochs", None)
        epochs = own_epochs or ctx.config.training.epochs
        steps = None if own_epochs else ctx.config.training.steps
        with ctx.session():
            build = ctx.build_spec(self.head(), dropout)
            net = ctx.network(build)
            module = ctx.module(net, self)
            ctx.fit(module, self.train_data(ctx), epochs, steps)
        return net.eval(), build

    def learning_rate(self, ctx: TrainContext) -> float:
        """``params.lr`` where set, else ``training.lr``."""
        return getattr(self.params, "lr", None) or ctx.config.training.lr

    def train_data(self, ctx: TrainContext) -> Any:
        """The training batches: seeded, shuffled, augmented ``(images, labels)``."""
        return ctx.loader()

    def setup(self, module: Any) -> None:
        """Initialise the method's training state on ``module`` (nothing by default)."""

    def training_step(self, module: Any, batch: Any, batch_idx: int) -> torch.Tensor:
        """The loss of one batch."""
        raise NotImplementedError(f"method {self.name!r} defines no training_step")

    def on_train_epoch_start(self, module: Any) -> None:
        """Lightning's epoch-start hook (nothing by default)."""

    def on_train_epoch_end(self, module: Any) -> None:
        """Lightning's epoch-end hook (nothing by default)."""

    def on_train_batch_end(self, module: Any, batch: Any, batch_idx: int) -> None:
        """Lightning's hook after each optimiser step (nothing by default)."""

    def validation_step(self, module: Any, batch: Any, batch_idx: int) -> torch.Tensor:
        """Cross-entropy of the K class outputs on a validation batch ``(images, labels)``,
        logged as ``val_loss`` for the ``plateau`` schedule (Lightning runs it in eval mode:
        dropout off, so DeVries' class branch reads the undropped features)."""
        import torch.nn.functional as F

        from ..schedules import VAL_LOSS

        x, y = batch
        net = module.network
        loss = F.cross_entropy(net(x)[:, : net.num_classes], y)
        module.log(VAL_LOSS, loss, on_epoch=True, batch_size=y.shape[0])
        return loss

    def configure_optimizers(self, module: Any) -> Any:
        """SGD with momentum (Nesterov if configured and momentum > 0), weight decay and the
        configured learning-rate schedule (:func:`fdbench.training.schedules.make_scheduler`)."""
        from ..context import sgd_with_schedule

        return sgd_with_schedule(module, module.network.parameters(), module.settings)

    # inference -----------------------------------------------------------------------------
    def output_heads(self, outputs: torch.Tensor, num_classes: int) -> dict[str, torch.Tensor]:
        """Heads computed from the float64 final-layer outputs (N × outputs); none by default."""
        return {}

    def input_heads(self, model: Network, images: torch.Tensor) -> dict[str, torch.Tensor]:
        """Heads computed from the model and a uint8 image batch; none by default."""
        return {}

    def predictive_logits(
        self, model: Network, images: torch.Tensor, features: torch.Tensor
    ) -> torch.Tensor | None:
        """Log-probabilities (N × K, float64) replacing the stored logits; ``None`` keeps the
        final layer's (the default)."""
        return None

    # selection -----------------------------------------------------------------------------
    def validation_confidence(self, split: SplitOutputs) -> np.ndarray:
        """The method's own confidence on a split's stored outputs: maximum softmax response."""
        logits = np.asarray(split.logits, dtype=np.float64)
        z = logits - logits.max(axis=1, keepdims=True)
        return 1.0 / np.exp(z).sum(axis=1)


def register(cls: type[TrainingMethod]) -> type[TrainingMethod]:
    """Class decorator adding a :class:`TrainingMethod` subclass to the registry by its name."""
    if not (isinstance(cls, type) and issubclass(cls, TrainingMethod)):
        raise TypeError(f"register expects a TrainingMethod subclass, got {cls!r}")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{cls.__name__}.name must be a non-empty str, got {name!r}")
    model = getattr(cls, "params_model", None)
    if not (isinstance(model, type) and issubclass(model, MethodParams)):
        raise TypeError(f"{cls.__name__}.params_model must be a MethodParams subclass")
    if _REGISTRY.get(name, cls) is not cls:
        raise ValueError(f"a training method named {name!r} is already registered")
    prefix = name if cls.display_prefix is None else cls.display_prefix
    if not isinstance(prefix, str):
        raise TypeError(f"{cls.__name__}.display_prefix must be a str or None, got {prefix!r}")
    _REGISTRY[name] = cls
    register_method_prefix(name, prefix)
    return cls


def _load_entry_points() -> None:
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    list(load_entry_points(ENTRY_POINT_GROUP, lambda _name, cls: register(cls)))


def method_names() -> tuple[str, ...]:
    """The names of every registered training method, sorted."""
    _load_entry_points()
    return tuple(sorted(_REGISTRY))


def get_method(name: str) -> type[TrainingMethod]:
    """The registered method class ``name``; ``ValueError`` listing the registered names and
    offering the closest."""
    import difflib

    _load_entry_points()
    if name not in _REGISTRY:
        close = difflib.get_close_matches(str(name), method_names(), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"method kind must be one of {list(method_names())}, got {name!r}{hint}")
    return _REGISTRY[name]


def _import_modules() -> None:
    """Import every module of this package, so that a module that registers a training method with
    :func:`register` (the recipe of CONTRIBUTING.md: one new file) is in the list without any
    other file naming it."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_import_modules()
