"""Validated benchmark configuration (pydantic v2 models read from YAML files)."""

from __future__ import annotations

import itertools
import json
import os
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

__all__ = [
    "AnalysisConfig",
    "ArchitectureConfig",
    "AugmentationOp",
    "BenchmarkConfig",
    "CEParams",
    "ConfidNetParams",
    "DataConfig",
    "DeepGamblersParams",
    "DevriesParams",
    "InferenceConfig",
    "MethodConfig",
    "ScheduleConfig",
    "SelectionConfig",
    "TrainingConfig",
    "config_digest",
    "load_config",
    "parse_config",
]

#: Architecture names (kept in sync with ``fdbench.models.ARCHITECTURES``; no torch import here).
ARCHITECTURE_NAMES = ("convnet", "vgg13", "resnet18", "resnet50", "vit")

PositiveInt = Annotated[int, Field(ge=1)]
PositiveFloat = Annotated[float, Field(gt=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BinaryProtocolConfig(_Strict):
    """The binary protocol (Bernhardt et al., TMLR 2022): two-class experiments predict class 1
    where p_1 reaches the threshold with validation FPR ``fpr`` (see
    :mod:`fdbench.protocol.binary`)."""

    fpr: float = Field(default=0.2, ge=0.0, le=1.0)


class DataConfig(_Strict):
    """Which experiments to build: a builder function of ``fdbench.data`` and its arguments.

    ``builder`` names a function ``fdbench.data.<builder>(**args)`` returning ``Experiment``s;
    ``experiments`` restricts the run to the named ones (all when ``None``). With ``per_run``
    the experiments are built again for every run seed, the builder getting
    ``run_seed=<seed>`` (FD-Shifts re-draws SVHN's held-out classes for each run); left out of
    the dumped config when false, so configs without it keep their digest. ``binary_protocol``
    evaluates the two-class experiments at a validation-FPR threshold instead of arg-max
    (multi-class experiments are unaffected); left out of the dump when unset.
    """

    builder: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    args: dict[str, Any] = Field(default_factory=dict)
    experiments: list[str] | None = None
    per_run: bool = Field(default=False, exclude_if=lambda v: not v)
    binary_protocol: BinaryProtocolConfig | None = Field(
        default=None, exclude_if=lambda v: v is None
    )


class ArchitectureConfig(_Strict):
    """The network: one of the architecture names, dropout rate and placement, builder options.

    ``dropout`` is the rate of the dropout layers of the methods trained with dropout;
    ``dropout_placement`` names where they go (``fdbench.models.dropout.resolve_placement``):
    ``"head"`` (before the final layer only), ``"fc"`` (before every fully connected layer),
    ``"fdshifts"`` (FD-Shifts' placement),
    ``"every_conv"`` (Kim et al.), ``"every_layer"`` (Bernhardt et al.), or ``None`` for the
    architecture's default (FD-Shifts' placement; ``"head"`` for ``vit``).
    """

    name: Literal["convnet", "vgg13", "resnet18", "resnet50", "vit"]
    dropout: float = Field(default=0.3, ge=0.0, lt=1.0)
    dropout_placement: (
        Literal["head", "fc", "fdshifts", "every_conv", "every_layer"] | None
    ) = None
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _placement_supported(self) -> ArchitectureConfig:
        placement = self.dropout_placement
        if self.name == "vit" and placement not in (None, "head"):
            raise ValueError(f"vit supports only dropout_placement 'head', got {placement!r}")
        if self.name.startswith("resnet") and placement == "fc":
            raise ValueError(f"{self.name} has no hidden fully connected layer: use 'head'")
        return self


Fill = Annotated[int, Field(ge=0, le=255)] | list[Annotated[int, Field(ge=0, le=255)]]


class RandomCropOp(_Strict):
    """Pad by ``padding`` pixels of value ``fill`` and crop back to size at a random offset."""

    name: Literal["random_crop"]
    padding: int = Field(ge=0)
    fill: Fill = 0


class HFlipOp(_Strict):
    """Mirror horizontally with probability ``p``."""

    name: Literal["hflip"]
    p: float = Field(default=0.5, ge=0.0, le=1.0)


class RotateOp(_Strict):
    """Rotate by a uniform angle in [−``degrees``, ``degrees``]; outside pixels ``fill``."""

    name: Literal["rotate"]
    degrees: float = Field(ge=0.0)
    fill: Fill = 0


class CutoutOp(_Strict):
    """Cutout: one square hole of side ``size`` (value ``fill``) with probability ``p``."""

    name: Literal["cutout"]
    size: PositiveInt
    p: float = Field(default=1.0, ge=0.0, le=1.0)
    fill: Fill = 0


class ColorJitterOp(_Strict):
    """Brightness, contrast and saturation jitter of the given strengths (random order)."""

    name: Literal["color_jitter"]
    brightness: float = Field(default=0.0, ge=0.0)
    contrast: float = Field(default=0.0, ge=0.0)
    saturation: float = Field(default=0.0, ge=0.0)


#: One training augmentation: an operation of ``fdbench.training.augment`` with its parameters.
AugmentationOp = Annotated[
    RandomCropOp | HFlipOp | RotateOp | CutoutOp | ColorJitterOp, Field(discriminator="name")
]


class ScheduleConfig(_Strict):
    """A learning-rate schedule (``fdbench.training.schedules``), stepped every ``interval``.

    ``name``: ``constant``; ``cosine`` (annealed to 0 over all intervals, torch's
    ``CosineAnnealingLR``); ``warmup_cosine`` (linear warm-up from 0 over ``warmup``
    intervals, then cosine to 0; pl_bolts' ``LinearWarmupCosineAnnealingLR`` as FD-Shifts uses
    it for ViTs); ``multistep`` (times ``gamma`` at each of ``milestones``); ``step`` (times
    ``gamma`` every ``step_size`` intervals). ``interval``: ``step`` (every batch) or ``epoch``.

    ``plateau`` (Bernhardt et al., TMLR 2022): the validation loss is computed after every
    epoch; the rate is multiplied by ``gamma`` after ``patience`` (default 10) epochs without a
    decrease (torch's ``ReduceLROnPlateau``), training stops after ``stop_patience`` (e.g. 15)
    such epochs in a row (none when unset) and the weights of the epoch with the lowest
    validation loss are kept. ``patience``/``stop_patience`` are left out of the dump when
    unset, so other schedules keep their digest.
    """

    name: Literal["constant", "cosine", "warmup_cosine", "multistep", "step", "plateau"]
    interval: Literal["step", "epoch"] = "step"
    warmup: int = Field(default=0, ge=0)
    milestones: list[PositiveInt] = Field(default_factory=list)
    step_size: PositiveInt | None = None
    gamma: float = Field(default=0.1, gt=0.0)
    patience: PositiveInt | None = Field(default=None, exclude_if=lambda v: v is None)
    stop_patience: PositiveInt | None = Field(default=None, exclude_if=lambda v: v is None)

    @model_validator(mode="after")
    def _check_params(self) -> ScheduleConfig:
        if self.name != "plateau" and (self.patience or self.stop_patience):
            raise ValueError("patience and stop_patience belong to the plateau schedule")
        if self.name == "plateau" and self.interval != "epoch":
            raise ValueError("plateau is stepped once per epoch: set interval: epoch")
        if self.name == "warmup_cosine" and self.warmup < 1:
            raise ValueError("warmup_cosine needs warmup >= 1 (intervals of linear warm-up)")
        if self.name == "multistep" and (
            not self.milestones or self.milestones != sorted(set(self.milestones))
        ):
            raise ValueError(f"multistep needs increasing milestones, got {self.milestones}")
        if self.name == "step" and self.step_size is None:
            raise ValueError("step needs step_size")
        return self


class TrainingConfig(_Strict):
    """Optimisation defaults shared by all methods (SGD with momentum), the learning-rate
    schedule and the training augmentation.

    ``schedule``: ``"cosine"`` (per batch, to 0 over all batches), ``"constant"``, or a
    :class:`ScheduleConfig`. ``augment``: ``true`` (horizontal flips with probability ½, the
    historical meaning, kept batch for batch), ``false`` (none), or a list of operations
    applied in order (``random_crop``, ``hflip``, ``rotate``, ``cutout``, ``color_jitter``;
    see ``fdbench.training.augment``), every draw seeded by the run seed.
    """

    epochs: PositiveInt = 10
    batch_size: PositiveInt = 128
    lr: PositiveFloat = 0.05
    momentum: float = Field(default=0.9, ge=0.0, lt=1.0)
    nesterov: bool = True
    weight_decay: float = Field(default=5e-4, ge=0.0)
    schedule: Literal["cosine", "constant"] | ScheduleConfig = "cosine"
    augment: bool | list[AugmentationOp] = True
    threads: PositiveInt = 2


class InferenceConfig(_Strict):
    """Inference settings: MC-dropout samples, batch size, cap on stored train samples."""

    mc_samples: int = Field(default=50, ge=0)
    batch_size: PositiveInt = 500
    max_train_samples: PositiveInt = 10_000


class SelectionConfig(_Strict):
    """Model selection on the validation split: the metric minimised over the grid."""

    metric: Literal["aurc", "augrc"] = "augrc"


class AnalysisConfig(_Strict):
    """What the benchmark's analysis and report cover (results themselves do not depend on it).

    ``report_studies`` are glob patterns of the studies that get bootstrap rankings, curves,
    calibration and SGR analysis (every study is always in the results table).
    """

    n_bootstrap: int = Field(default=200, ge=0)
    bootstrap_seed: int = Field(default=0, ge=0)
    report_studies: list[str] = Field(default_factory=lambda: ["*"], min_length=1)
    curve_points: int = Field(default=300, ge=2)
    sgr_target_risks: list[Annotated[float, Field(gt=0.0, lt=1.0)]] = Field(
        default_factory=lambda: [0.01, 0.02, 0.05], min_length=1
    )
    sgr_delta: float = Field(default=0.001, gt=0.0, lt=1.0)
    gallery_csfs: list[str] = Field(default_factory=lambda: ["MSR", "Mahalanobis"])
    gallery_k: PositiveInt = 6
    seed_boxplots: bool = Field(default=False, exclude_if=lambda v: not v)


class _MethodParams(_Strict):
    dropout: bool = False
    lr: PositiveFloat | None = None
    epochs: PositiveInt | None = None


class CEParams(_MethodParams):
    """Cross-entropy training; ``dropout`` switches the head dropout on."""


class DeepGamblersParams(_MethodParams):
    """Gambler's loss (Liu et al. 2019): reward ``o`` > 1, CE pre-training epochs.

    Rewards ``o`` >= K (FD-Shifts uses 6 and 10 on CAMELYON, K = 2) are accepted with a logged
    warning: abstention is then never optimal in the gambler's-loss theory.
    """

    reward: float = Field(default=2.2, gt=1.0)
    pretrain_epochs: int = Field(default=2, ge=0)


class DevriesParams(_MethodParams):
    """Learned confidence (DeVries & Taylor 2018): hint budget β and initial λ."""

    budget: float = Field(default=0.3, gt=0.0)
    lambda_init: float = Field(default=0.1, gt=0.0)


class ConfidNetParams(_Strict):
    """ConfidNet second stage (Corbière et al. 2019) on the frozen models of method ``base``.

    The MLP (``depth`` layers, ``hidden`` units) is trained with Adam at ``lr`` for ``epochs``
    epochs on the train split; with ``finetune_epochs`` > 0 a copy of the body feeding the MLP
    is then fine-tuned together with it (Adam at ``finetune_lr``, batch norm frozen), the
    classifier's own body staying untouched.
    """

    base: str = "ce"
    epochs: PositiveInt = 5
    lr: PositiveFloat = 1e-3
    hidden: PositiveInt = 400
    depth: PositiveInt = 4
    finetune_epochs: int = Field(default=0, ge=0)
    finetune_lr: PositiveFloat = 1e-5


_PARAMS: dict[str, type[_Strict]] = {
    "ce": CEParams,
    "deepgamblers": DeepGamblersParams,
    "devries": DevriesParams,
    "confidnet": ConfidNetParams,
}


class MethodConfig(_Strict):
    """One benchmarked method: a label, its training method, seeds, parameters and a grid.

    ``grid`` maps parameter names to candidate values; every combination (with ``params`` as
    the base) is trained and evaluated, and each CSF keeps the candidate best on the validation
    split (:func:`fdbench.benchmark.select_candidates`).
    """

    name: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    kind: Literal["ce", "deepgamblers", "devries", "confidnet"]
    seeds: list[int] = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, list[Any]] = Field(default_factory=dict)

    @field_validator("seeds")
    @classmethod
    def _unique_seeds(cls, seeds: list[int]) -> list[int]:
        if len(set(seeds)) != len(seeds) or min(seeds) < 0:
            raise ValueError(f"seeds must be distinct non-negative integers, got {seeds}")
        return seeds

    @model_validator(mode="after")
    def _check_params(self) -> MethodConfig:
        model = _PARAMS[self.kind]
        for key, values in self.grid.items():
            if key not in model.model_fields:
                raise ValueError(
                    f"grid key {key!r} is not a parameter of method kind {self.kind!r} "
                    f"(expected one of {sorted(model.model_fields)})"
                )
            if not values:
                raise ValueError(f"grid[{key!r}] must list at least one value")
        self.candidates()
        return self

    def candidates(self) -> list[_Strict]:
        """The validated parameter sets of every grid point, in a fixed order."""
        model = _PARAMS[self.kind]
        keys = sorted(self.grid)
        out = []
        for values in itertools.product(*(self.grid[k] for k in keys)):
            point = dict(zip(keys, values, strict=True))
            out.append(model.model_validate({**self.params, **point}))
        return out


class BenchmarkConfig(_Strict):
    """A whole benchmark: data, architecture, training, inference, selection, methods, the deep
    ensembles formed from a method's seeds, the analysis settings, and the number of local
    worker processes its jobs run on by default (``workers``; ``None`` runs them in this
    process; the command line's ``--workers``/``--scheduler`` override it). ``workers`` does
    not change the results: every job's result depends on its arguments only."""

    name: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    data: DataConfig
    architecture: ArchitectureConfig
    training: TrainingConfig = TrainingConfig()
    inference: InferenceConfig = InferenceConfig()
    selection: SelectionConfig = SelectionConfig()
    methods: list[MethodConfig] = Field(min_length=1)
    ensembles: list[str] = Field(default_factory=list)
    analysis: AnalysisConfig = AnalysisConfig()
    workers: PositiveInt | None = None

    @model_validator(mode="after")
    def _check_methods(self) -> BenchmarkConfig:
        names = [m.name for m in self.methods]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"method names must be unique, repeated: {dupes}")
        by_name = {m.name: m for m in self.methods}
        if self.data.per_run and self.ensembles:
            raise ValueError(
                "ensembles need one label space for all their members; data.per_run draws "
                f"the classes per seed, so leave ensembles empty (got {self.ensembles})"
            )
        for name in self.ensembles:
            if name not in by_name or len(by_name[name].seeds) < 2:
                raise ValueError(
                    f"ensembles: {name!r} must name a method of this config with at least two "
                    f"seeds (the ensemble members); methods: {names}"
                )
        for m in self.methods:
            if m.kind != "confidnet":
                continue
            for params in m.candidates():
                base = by_name.get(params.base)
                if base is None or base.kind == "confidnet":
                    raise ValueError(
                        f"method {m.name!r}: base {params.base!r} must name a non-ConfidNet "
                        f"method of this config (one of {[n for n in names if n != m.name]})"
                    )
                missing = sorted(set(m.seeds) - set(base.seeds))
                if missing:
                    raise ValueError(
                        f"method {m.name!r}: seeds {missing} have no base model in method "
                        f"{base.name!r} (seeds {base.seeds})"
                    )
        return self

    def method(self, name: str) -> MethodConfig:
        """The method named ``name``; ``ValueError`` if the config has none."""
        for m in self.methods:
            if m.name == name:
                return m
        raise ValueError(f"method must be one of {[m.name for m in self.methods]}, got {name!r}")


def _format_errors(error: ValidationError) -> str:
    lines = []
    for e in error.errors():
        where = ".".join(str(p) for p in e["loc"]) or "<root>"
        lines.append(f"{where}: {e['msg']}")
    return "; ".join(lines)


def parse_config(data: Any, *, source: str = "config") -> BenchmarkConfig:
    """Validate a mapping (e.g. parsed YAML) into a :class:`BenchmarkConfig`.

    Raises ``ValueError`` whose message names ``source`` and, for every problem, the dotted
    path of the offending field and what was expected.
    """
    if not isinstance(data, dict):
        raise ValueError(
            f"{source}: expected a mapping at the top level, got {type(data).__name__}"
        )
    try:
        return BenchmarkConfig.model_validate(data)
    except ValidationError as error:
        raise ValueError(f"{source}: invalid configuration: {_format_errors(error)}") from None


def load_config(path: str | os.PathLike[str]) -> BenchmarkConfig:
    """Read and validate a YAML benchmark configuration file (see :func:`parse_config`)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except FileNotFoundError:
        raise ValueError(f"config file {path!r} does not exist") from None
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML: {error}") from None
    return parse_config(data, source=path)


def config_digest(config: BenchmarkConfig, method: str) -> str:
    """SHA-256 of everything that determines one method's models and outputs.

    Covers data, architecture, training, inference, selection, the method and (for ConfidNet)
    its base method; used to refuse resuming from outputs made under another configuration.
    """
    import hashlib

    spec = config.method(method)
    parts: dict[str, Any] = {
        "data": config.data.model_dump(mode="json"),
        "architecture": config.architecture.model_dump(mode="json"),
        "training": config.training.model_dump(mode="json"),
        "inference": config.inference.model_dump(mode="json"),
        "selection": config.selection.model_dump(mode="json"),
        "method": spec.model_dump(mode="json", exclude={"seeds"}),
    }
    if spec.kind == "confidnet":
        parts["bases"] = sorted(
            {
                json.dumps(config.method(p.base).model_dump(mode="json", exclude={"seeds"}))
                for p in spec.candidates()
            }
        )
    blob = json.dumps(parts, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()
