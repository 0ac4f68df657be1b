"""The benchmark configuration: validated shapes (pydantic v2 models), no behaviour."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from fdbench.core.callables import FACTORY_PATTERN
from fdbench.core.names import did_you_mean
from fdbench.core.validation import check_config_scalars

__all__ = [
    "DATA_ARGS",
    "METHODS_CONTEXT",
    "NEW_CLASS_KINDS",
    "AnalysisConfig",
    "ArchitectureConfig",
    "AugmentationOp",
    "BenchmarkConfig",
    "DataConfig",
    "EnsembleCombinations",
    "FolderDataArgs",
    "FolderStudyConfig",
    "InferenceConfig",
    "MethodConfig",
    "MethodLookup",
    "NpzDataArgs",
    "NpzStudyConfig",
    "OpenMaxConfig",
    "ScheduleConfig",
    "SelectionConfig",
    "TrainingConfig",
    "config_digest",
]


#: Architecture names (kept in sync with ``fdbench.models.ARCHITECTURES``; no torch import here).
ARCHITECTURE_NAMES = ("convnet", "vgg13", "resnet18", "resnet50", "vit", "vit_b16")


PositiveInt = Annotated[int, Field(ge=1)]


PositiveFloat = Annotated[float, Field(gt=0)]


#: A method's ``kind`` -> its training method class (``ValueError`` for an unknown kind).
MethodLookup = Callable[[str], Any]
#: The key of pydantic's validation context under which the parser hands in the
#: :data:`MethodLookup` that methods are validated against (the configuration imports no
#: registry: :func:`fdbench.jobs.plan.parse_config` hands in fdbench's training methods).
METHODS_CONTEXT = "methods"


def _format_errors(error: ValidationError, prefix: str = "") -> str:
    lines = []
    for e in error.errors():
        where = ".".join(str(p) for p in (prefix, *e["loc"]) if p != "") or "<root>"
        lines.append(f"{where}: {e['msg']}")
    return "; ".join(lines)


def _method_lookup(info: ValidationInfo) -> MethodLookup:
    lookup = (info.context or {}).get(METHODS_CONTEXT)
    if lookup is None:
        raise ValueError(
            "a method is validated against the training methods: parse the configuration "
            "with fdbench.jobs.plan.parse_config (or hand in context={'methods': lookup})"
        )
    return lookup


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_lax_coercion(cls, values: Any) -> Any:
        """Refuse a value pydantic would coerce (``epochs: true``, ``lr: "0.1"``)."""
        return check_config_scalars(values, cls.model_fields)


class BinaryProtocolConfig(_Strict):
    """The binary protocol (Bernhardt et al., TMLR 2022): two-class experiments predict class 1
    where p_1 reaches the threshold with validation FPR ``fpr`` (see
    :mod:`fdbench.protocol.binary`). ``threshold_rule: roc_curve`` sets the threshold as the
    authors' code does (scikit-learn's ``roc_curve`` points, predict ``p_1 > t``:
    :func:`fdbench.protocol.binary.fpr_threshold_roc_curve`); left out of the dump when
    ``exact`` (the default), so configs without it keep their digest."""

    fpr: float = Field(default=0.2, ge=0.0, le=1.0)
    threshold_rule: Literal["exact", "roc_curve"] = Field(
        default="exact", exclude_if=lambda v: v == "exact"
    )


#: Study kinds (``fdbench.data.types.StudyKind`` values; no data import here).
STUDY_KINDS = (
    "iid", "corruption", "subclass", "new_class_semantic", "new_class_nonsemantic", "cood",
    "near_ood", "far_ood",
)  # fmt: skip


#: The kinds whose samples are of classes not trained on (label -1).
NEW_CLASS_KINDS = ("new_class_semantic", "new_class_nonsemantic", "near_ood", "far_ood")


StudyKindName = Literal[
    "iid", "corruption", "subclass", "new_class_semantic", "new_class_nonsemantic", "cood",
    "near_ood", "far_ood",
]  # fmt: skip


_RESERVED_STUDIES = ("iid", "train", "val")


def _check_study_names(studies: dict[str, Any]) -> None:
    taken = sorted(set(studies) & set(_RESERVED_STUDIES))
    if taken:
        raise ValueError(
            f"studies may not be named {taken}: iid is the test/ split, train and val the "
            "training splits"
        )
    if any(not name.strip() for name in studies):
        raise ValueError("study names must be non-empty")


class FolderStudyConfig(_Strict):
    """One shift study of an image-folder dataset: its ``kind`` (a study kind) and ``path``
    (relative to the dataset root; default: the study's name). Labelled kinds hold one
    sub-folder per training class; new-class kinds (:data:`NEW_CLASS_KINDS`) any images."""

    kind: StudyKindName
    path: str | None = None


class FolderDataArgs(_Strict):
    """Arguments of ``fdbench.data.folder_experiments`` (``data.builder: folder_experiments``):
    an image-folder tree ``root/{train,val,test}/<class>/<image>`` and its shift ``studies``.

    ``val/`` is optional: without it a seeded ``val_fraction`` of ``train/`` (``seed``) is
    held out. ``image_size`` resizes every image to a square of that side (needed when the
    sizes differ); ``channels`` (1 grey, 3 colour) converts them (default: 1 if every
    training image is grey, else 3). ``name`` names the experiment (default: the root
    folder's name)."""

    root: str
    name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_\-]+$")
    image_size: PositiveInt | None = None
    channels: Literal[1, 3] | None = None
    val_fraction: float = Field(default=0.1, gt=0.0, lt=1.0)
    seed: int = Field(default=0, ge=0)
    studies: dict[str, FolderStudyConfig] = Field(default_factory=dict)

    @field_validator("studies")
    @classmethod
    def _names(cls, studies: dict[str, FolderStudyConfig]) -> dict[str, FolderStudyConfig]:
        _check_study_names(studies)
        return studies


class NpzStudyConfig(_Strict):
    """One shift study of a MedMNIST-style ``.npz``: its ``kind`` and the ``key`` of its arrays
    ``<key>_images`` and ``<key>_labels`` (labels may be absent for new-class kinds; default
    key: the study's name)."""

    kind: StudyKindName
    key: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_\-]+$")


class NpzDataArgs(_Strict):
    """Arguments of ``fdbench.data.npz_experiments`` (``data.builder: npz_experiments``): a
    MedMNIST-style ``.npz`` (``train_images``, ``train_labels``, ``val_*``, ``test_*``; read
    with :func:`fdbench.data.sources.readers.read_medmnist`), the test split as study ``iid``, plus
    shift ``studies`` stored in the same file. ``class_names`` default to ``"0"``, ``"1"``, …;
    ``name`` to the file's stem."""

    path: str
    name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_\-]+$")
    class_names: list[str] | None = None
    studies: dict[str, NpzStudyConfig] = Field(default_factory=dict)

    @field_validator("studies")
    @classmethod
    def _names(cls, studies: dict[str, NpzStudyConfig]) -> dict[str, NpzStudyConfig]:
        _check_study_names(studies)
        return studies


#: Builders whose ``data.args`` the configuration validates.
DATA_ARGS: dict[str, type[BaseModel]] = {
    "folder_experiments": FolderDataArgs,
    "npz_experiments": NpzDataArgs,
}


class DataConfig(_Strict):
    """Which experiments to build: a builder function and its arguments.

    ``builder`` names a function ``fdbench.data.<builder>(**args)`` returning ``Experiment``s
    (``folder_experiments``: an image-folder tree, :class:`FolderDataArgs`;
    ``npz_experiments``: a MedMNIST-style ``.npz``, :class:`NpzDataArgs`), or your own as
    ``"module:callable"`` returning a list of :class:`fdbench.data.types.Experiment`;
    ``experiments`` restricts the run to the named ones (all when ``None``). With ``per_run``
    the experiments are built again for every run seed, the builder getting
    ``run_seed=<seed>`` (FD-Shifts re-draws SVHN's held-out classes for each run); left out of
    the dumped config when false, so configs without it keep their digest. ``binary_protocol``
    evaluates the two-class experiments at a validation-FPR threshold instead of arg-max
    (multi-class experiments are unaffected); left out of the dump when unset.
    """

    builder: str
    args: dict[str, Any] = Field(default_factory=dict)
    experiments: list[str] | None = None
    per_run: bool = Field(default=False, exclude_if=lambda v: not v)
    binary_protocol: BinaryProtocolConfig | None = Field(
        default=None, exclude_if=lambda v: v is None
    )

    @field_validator("builder")
    @classmethod
    def _builder_name(cls, builder: str) -> str:
        if not re.match(rf"^[A-Za-z_][A-Za-z0-9_]*$|{FACTORY_PATTERN}", builder):
            raise ValueError(
                "builder must name a function of fdbench.data (e.g. folder_experiments) or "
                f"your own as 'module:callable' (e.g. 'mypkg.data:experiments'), got {builder!r}"
            )
        return builder

    @model_validator(mode="after")
    def _builder_args(self) -> DataConfig:
        model = DATA_ARGS.get(self.builder)
        if model is not None:
            try:
                model.model_validate(self.args)
            except ValidationError as error:
                raise ValueError(
                    f"args of {self.builder}: {_format_errors(error, prefix='args')}"
                ) from None
        return self


class ArchitectureConfig(_Strict):
    """The network: a built-in architecture, your own, or a timm model; dropout; options.

    Exactly one of

    - ``name``: a built-in architecture (:data:`ARCHITECTURE_NAMES`);
    - ``factory``: ``"module:callable"``, your own network (:mod:`fdbench.models.custom`):
      called as ``callable(num_classes=K, in_channels=C, image_size=S, **options)``, it
      returns a ``torch.nn.Module`` with the body/classifier split of
      :class:`~fdbench.models.network.Network` (attributes ``body``, the features N × D, and
      ``classifier``, the final ``nn.Linear``), or any module whose final linear layer is
      named by ``classifier`` (a dotted attribute path, e.g. ``"fc"`` or ``"head.fc"``);
    - ``timm``: a timm model name (``timm.create_model(timm, num_classes=K, in_chans=C,
      **options)``, random weights unless ``options`` sets ``pretrained: true``; the ``zoo``
      extra), split at its ``get_classifier()``.

    ``dropout`` is the rate of the dropout layers of the methods trained with dropout;
    ``dropout_placement`` names where they go (``fdbench.models.dropout.resolve_placement``):
    ``"head"`` (before the final layer only), ``"fc"`` (before every fully connected layer),
    ``"fdshifts"`` (FD-Shifts' placement),
    ``"every_conv"`` (Kim et al.), ``"every_layer"`` (Bernhardt et al.), or ``None`` for the
    architecture's default (FD-Shifts' placement; ``"head"`` for ``vit``, your own and timm
    networks, which support only ``"head"``). ``factory``, ``classifier`` and ``timm`` are
    left out of the dumped config when unset, so built-in configs keep their digest.
    ``vit_b16`` is ViT-B/16 in timm's layout (:func:`fdbench.models.vit.vit_b16`;
    ``options.weights`` names a local pretrained state dict).
    """

    name: Literal["convnet", "vgg13", "resnet18", "resnet50", "vit", "vit_b16"] | None = None
    factory: str | None = Field(default=None, exclude_if=lambda v: v is None)
    classifier: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$",
        exclude_if=lambda v: v is None,
    )
    timm: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9_.\-]+$", exclude_if=lambda v: v is None
    )
    dropout: float = Field(default=0.3, ge=0.0, lt=1.0)
    dropout_placement: Literal["head", "fc", "fdshifts", "every_conv", "every_layer"] | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("factory")
    @classmethod
    def _factory_path(cls, factory: str | None) -> str | None:
        if factory is not None and not re.match(FACTORY_PATTERN, factory):
            raise ValueError(
                f"factory must be 'module:callable' (e.g. 'mypkg.nets:make'), got {factory!r}"
            )
        return factory

    @model_validator(mode="after")
    def _placement_supported(self) -> ArchitectureConfig:
        given = [k for k in ("name", "factory", "timm") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of name (a built-in: "
                f"{', '.join(ARCHITECTURE_NAMES)}), factory ('module:callable') or timm "
                f"(a timm model name); got {given or 'none'}"
            )
        if self.classifier is not None and self.factory is None:
            raise ValueError("classifier names the final linear layer of a factory's network")
        placement = self.dropout_placement
        if self.name is None and placement not in (None, "head"):
            raise ValueError(
                f"{self.label} supports only dropout_placement 'head' (dropout before the "
                f"final layer), got {placement!r}"
            )
        if self.name == "vit" and placement not in (None, "head"):
            raise ValueError(f"vit supports only dropout_placement 'head', got {placement!r}")
        if self.name == "vit_b16" and placement not in (None, "head", "fdshifts"):
            raise ValueError(
                f"vit_b16 supports dropout_placement 'head' or 'fdshifts', got {placement!r}"
            )
        if self.name is not None and self.name.startswith("resnet") and placement == "fc":
            raise ValueError(f"{self.name} has no hidden fully connected layer: use 'head'")
        return self

    @property
    def label(self) -> str:
        """The architecture as results name it: the built-in name, the factory, or
        ``timm:<model>``."""
        if self.name is not None:
            return self.name
        return self.factory if self.factory is not None else f"timm:{self.timm}"


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

    ``device`` trains on ``"cpu"``, ``"cuda"`` (an error where no GPU is visible) or
    ``"auto"`` (a GPU when one is visible, else the CPU; see
    :func:`fdbench.training.device.resolve_device`); ``precision`` is ``32`` (float32) or
    ``"bf16-mixed"`` (bfloat16 autocast, Lightning's mixed precision). Inference runs on the
    CPU whatever the device and keeps float64 logits. ``steps``: the methods trained end to
    end without their own ``epochs`` train for that many batches (optimiser steps) instead of
    ``epochs`` epochs (FD-Shifts' ``num_steps`` for the ViT, its Table 7). These three are left
    out of the dump at their
    defaults, so configs without them keep their digest; GPU-trained weights differ from CPU-
    trained ones in the last bits, so compare results within one device.
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
    device: Literal["auto", "cpu", "cuda"] = Field(default="auto", exclude_if=lambda v: v == "auto")
    precision: Literal["32", "bf16-mixed"] = Field(default="32", exclude_if=lambda v: v == "32")
    steps: PositiveInt | None = Field(default=None, exclude_if=lambda v: v is None)

    @field_validator("precision", mode="before")
    @classmethod
    def _precision_number(cls, value: Any) -> Any:
        return "32" if value == 32 and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _steps_with_step_schedule(self) -> TrainingConfig:
        schedule = self.schedule
        if self.steps and isinstance(schedule, ScheduleConfig) and schedule.interval == "epoch":
            raise ValueError(
                "training.steps trains for a number of batches: its schedule must be stepped "
                "per batch (schedule.interval: step)"
            )
        return self


#: Upper bounds of sizes a config states, refused when the config is read rather than after
#: training: MC-dropout passes (each a copy of every split's logits), bootstrap resamples and
#: points per stored risk-coverage curve.
MAX_MC_SAMPLES = 10_000
MAX_BOOTSTRAP = 1_000_000
MAX_CURVE_POINTS = 1_000_000


class InferenceConfig(_Strict):
    """Inference settings: MC-dropout samples, batch size, cap on stored train samples.

    ``mc_methods`` names the methods whose runs get the ``mc_samples`` MC-dropout passes
    (default, left out of the dumped config: every method whose network has dropout); the
    runs of the others store no MC-dropout outputs, so their MCD-* CSFs are not computed.
    """

    mc_samples: int = Field(default=50, ge=0, le=MAX_MC_SAMPLES)
    batch_size: PositiveInt = 500
    max_train_samples: PositiveInt = 10_000
    mc_methods: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)

    def mc_samples_of(self, method: str) -> int:
        """The MC-dropout passes the runs of ``method`` get: ``mc_samples``, or 0 when
        ``mc_methods`` leaves it out."""
        if self.mc_methods is not None and method not in self.mc_methods:
            return 0
        return self.mc_samples


class SelectionConfig(_Strict):
    """Model selection on the validation split: the metric minimised over the grid."""

    metric: Literal["aurc", "augrc"] = "augrc"


class AnalysisConfig(_Strict):
    """What the benchmark's analysis and report cover (results themselves do not depend on it).

    ``report_studies`` are glob patterns of the studies that get bootstrap rankings, curves,
    calibration and SGR analysis (every study is always in the results table).
    """

    n_bootstrap: int = Field(default=200, ge=0, le=MAX_BOOTSTRAP)
    bootstrap_seed: int = Field(default=0, ge=0)
    report_studies: list[str] = Field(default_factory=lambda: ["*"], min_length=1)
    curve_points: int = Field(default=300, ge=2, le=MAX_CURVE_POINTS)
    sgr_target_risks: list[Annotated[float, Field(gt=0.0, lt=1.0)]] = Field(
        default_factory=lambda: [0.01, 0.02, 0.05], min_length=1
    )
    sgr_delta: float = Field(default=0.001, gt=0.0, lt=1.0)
    operating_point_alpha: float = Field(default=0.1, gt=0.0, lt=1.0)
    operating_point_delta: float = Field(default=0.1, gt=0.0, lt=1.0)
    gallery_csfs: list[str] = Field(default_factory=lambda: ["MSR", "Mahalanobis"])
    gallery_k: PositiveInt = 6
    seed_boxplots: bool = Field(default=False, exclude_if=lambda v: not v)


class OpenMaxConfig(_Strict):
    """The OpenMax CSF (``fdbench.csf.openmax``), computed post hoc for every single run.

    Fields as ``fdbench.csf.OpenMaxParams``: ``tail_size`` (η), ``alpha`` (α), ``distance``,
    ``eu_weight``, ``rank_weights``; defaults from Kim et al.'s code.
    """

    tail_size: int = Field(default=20, ge=2)
    alpha: PositiveInt = 10
    distance: Literal["eucos", "euclidean", "cosine"] = "eucos"
    eu_weight: float = Field(default=5e-3, ge=0.0)
    rank_weights: Literal["linear", "half"] = "linear"


class PostHocConfig(_Strict):
    """The post-hoc scores of :mod:`fdbench.csf.posthoc`, evaluated on every single run with
    their hyper-parameters searched on validation data only (left out of the dump when unset).

    ``scores``: their names (default: all); ``mode``: ``"id"`` (select on ``val``) or
    ``"ood"`` (``val`` plus the ``val_ood`` splits, which must be disjoint from every test
    study); ``metric``: the selection metric (AURC by default). The planner checks the
    names (the configuration imports no registry).
    """

    scores: list[str] | None = None
    mode: Literal["id", "ood"] = "id"
    val_ood: list[str] = Field(default_factory=list)
    metric: str = "aurc"

    @model_validator(mode="after")
    def _check_mode(self) -> PostHocConfig:
        if (self.mode == "ood") != bool(self.val_ood):
            raise ValueError("posthoc: mode 'ood' and val_ood go together")
        return self


class MethodConfig(_Strict):
    """One benchmarked method: a label, its training method, seeds, parameters and a grid.

    ``kind`` names a registered training method (:func:`fdbench.training.methods.get_method`);
    ``params`` and every ``grid`` point are validated by that method's parameter model.
    ``grid`` maps parameter names to candidate values; every combination (with ``params`` as
    the base) is trained and evaluated, and each CSF keeps the candidate best on the validation
    split (:func:`fdbench.jobs.benchmark.select_candidates`).
    """

    name: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    kind: str
    seeds: list[int] = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, list[Any]] = Field(default_factory=dict)

    _method_class: Any = PrivateAttr(default=None)

    @field_validator("kind")
    @classmethod
    def _registered_kind(cls, kind: str, info: ValidationInfo) -> str:
        _method_lookup(info)(kind)
        return kind

    @field_validator("seeds")
    @classmethod
    def _unique_seeds(cls, seeds: list[int]) -> list[int]:
        if len(set(seeds)) != len(seeds) or min(seeds) < 0:
            raise ValueError(f"seeds must be distinct non-negative integers, got {seeds}")
        return seeds

    @model_validator(mode="after")
    def _check_params(self, info: ValidationInfo) -> MethodConfig:
        self._method_class = _method_lookup(info)(self.kind)
        model = self.method_class().params_model
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

    def method_class(self) -> Any:
        """The :class:`~fdbench.training.methods.TrainingMethod` of ``kind``, as the lookup
        handed in at validation gave it."""
        return self._method_class

    def candidates(self) -> list[Any]:
        """The validated parameter sets of every grid point, in a fixed order."""
        model = self.method_class().params_model
        keys = sorted(self.grid)
        out = []
        for values in itertools.product(*(self.grid[k] for k in keys)):
            point = dict(zip(keys, values, strict=True))
            out.append(model.model_validate({**self.params, **point}))
        return out

    def methods(self) -> list[Any]:
        """The training method of every grid candidate (:meth:`candidates`), in that order."""
        cls = self.method_class()
        return [cls(params) for params in self.candidates()]

    def dependencies(self) -> list[str]:
        """Names of the methods whose models any candidate of this method needs (its bases,
        e.g. ConfidNet's ``base``), in first-seen order."""
        names: list[str] = []
        for method in self.methods():
            names += [d for d in method.dependencies() if d not in names]
        return names


class EnsembleCombinations(_Strict):
    """Ensembles of ``size`` of a method's seeds, ``count`` different subsets, instead of one
    ensemble of all seeds: Bernhardt et al. (TMLR 2022) form 5 ensembles from 5 combinations of
    3 of the 5 trained models and report their mean and standard deviation
    (``get_ensemble_scores`` in ``failure_detection/uncertainty_scores/softmax_scorer.py`` of
    melanibe/failure_detection_benchmark: a random permutation of all combinations, the
    first 5). Here the permutation is drawn from ``numpy.random.default_rng(seed)``."""

    size: int = Field(default=3, ge=2)
    count: int = Field(default=5, ge=1)
    seed: int = Field(default=0, ge=0)

    def subsets(self, seeds: list[int]) -> list[tuple[int, ...]]:
        """The ``count`` subsets of ``seeds``: every combination of ``size`` of them
        (``itertools.combinations``, in the order of ``seeds``), permuted by
        ``default_rng(seed).permutation``, the first ``count``; ``ValueError`` if there are
        fewer combinations."""
        import math

        import numpy as np

        total = math.comb(len(seeds), self.size)
        if total < self.count:
            raise ValueError(
                f"ensemble_combinations: {self.count} subsets of {self.size} seeds need more "
                f"than the {len(seeds)} seeds {seeds} ({total} combinations)"
            )
        combinations = list(itertools.combinations(seeds, self.size))
        order = np.random.default_rng(self.seed).permutation(len(combinations))
        return [combinations[i] for i in order[: self.count]]


class BenchmarkConfig(_Strict):
    """A whole benchmark: data, architecture, training, inference, selection, methods, the deep
    ensembles formed from a method's seeds (all of them, or the subsets of
    ``ensemble_combinations``; left out of the dumped config when unset), the analysis
    settings, and the number of local
    worker processes its jobs run on by default (``workers``; ``None`` runs them in this
    process; the command line's ``--workers``/``--scheduler`` override it). ``workers`` does
    not change the results: every job's result depends on its arguments only.
    ``conventions`` adds authors'-code quantities to the results under their own names
    (``fdbench.metrics.CONVENTION_KEYS`` and ``OOD_CONVENTION_KEYS``, e.g. Kim et al.'s
    ``aurc_per_sample``; docs/metrics.md); left out of the dump when empty."""

    name: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    data: DataConfig
    architecture: ArchitectureConfig
    training: TrainingConfig = TrainingConfig()
    inference: InferenceConfig = InferenceConfig()
    selection: SelectionConfig = SelectionConfig()
    methods: list[MethodConfig] = Field(min_length=1)
    ensembles: list[str] = Field(default_factory=list)
    ensemble_combinations: EnsembleCombinations | None = Field(
        default=None, exclude_if=lambda v: v is None
    )
    analysis: AnalysisConfig = AnalysisConfig()
    workers: PositiveInt | None = None
    openmax: OpenMaxConfig | None = Field(default=None, exclude_if=lambda v: v is None)
    posthoc: PostHocConfig | None = Field(default=None, exclude_if=lambda v: v is None)
    conventions: list[
        Literal[
            "aurc_per_sample",
            "auroc_f_ordered",
            "coverage@acc99_first_drop",
            "fpr@95tpr_ood_positive",
        ]
    ] = Field(default_factory=list, exclude_if=lambda v: not v)

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
                    f"seeds (the ensemble members); methods: {names}{did_you_mean(name, names)}"
                )
            if self.ensemble_combinations is not None:
                self.ensemble_combinations.subsets(by_name[name].seeds)
        unknown = sorted(set(self.inference.mc_methods or ()) - set(names))
        if unknown:
            raise ValueError(
                f"inference.mc_methods: {unknown} name no method of this config; methods: "
                f"{names}{did_you_mean(unknown[0], names)}"
            )
        for m in self.methods:
            for dep in m.dependencies():
                base = by_name.get(dep)
                if base is None or base.name == m.name or base.dependencies():
                    raise ValueError(
                        f"method {m.name!r}: base {dep!r} must name a method of this config "
                        "that depends on no other (one of "
                        f"{[n for n in names if n != m.name and not by_name[n].dependencies()]})"
                        f"{did_you_mean(dep, [n for n in names if n != m.name])}"
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


def config_digest(config: BenchmarkConfig, method: str) -> str:
    """SHA-256 of everything that determines one method's models and outputs.

    Covers data, architecture, training, inference, selection, the method and the methods it
    depends on (ConfidNet's base); used to refuse resuming from outputs made under another
    configuration.
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
    bases = spec.dependencies()
    if bases:
        parts["bases"] = sorted(
            {json.dumps(config.method(b).model_dump(mode="json", exclude={"seeds"})) for b in bases}
        )
    blob = json.dumps(parts, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()
