"""Validated configuration of the zoo job (pydantic v2, read from YAML; unknown keys are errors)."""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from fdbench.core.names import check_path_name
from fdbench.core.validation import check_config_scalars, first_non_finite, format_bytes
from fdbench.core.yaml import load_yaml

from .urls import is_url

__all__ = [
    "CoodSettings",
    "PNormSettings",
    "SourcesSettings",
    "TimmSource",
    "ZooConfig",
    "load_zoo_config",
    "parse_zoo_config",
]

#: Upper bounds of the sizes a zoo config states, checked before anything is allocated: the
#: p-NormSoftmax temperature grid, the member bootstrap's resamples (a resamples x members
#: matrix) and the samples of one streamed block (a block x classes matrix of float64).
MAX_GRID = 10_000
MAX_BOOTSTRAP = 1_000_000
MAX_CHUNK = 1_000_000
#: Bytes per member and resample of the member bootstrap (:func:`bootstrap_memory`): the int64
#: index and, for the two columns of a pair, the gathered values and their ranks (float64).
BOOTSTRAP_BYTES = 8 + 2 * 8 + 2 * 8
#: The fewest members the member bootstrap resamples (a Spearman ρ needs three).
MIN_BOOTSTRAP_MEMBERS = 3
#: CSFs the zoo evaluates on every member (MCD-* only where a member has MC-dropout logits).
ZOO_CSFS = ("MSR", "MLS", "PE", "MaxLogit-pNorm", "pNormSoftmax", "MCD-MSR", "MCD-PE")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_lax_coercion(cls, values: Any) -> Any:
        """Refuse a value pydantic would coerce (``epochs: true``, ``lr: "0.1"``)."""
        return check_config_scalars(values, cls.model_fields)


class CoodSettings(_Strict):
    """C-OOD levels of Galil et al. (Appendix L): per OOD class ``n_estimation`` samples
    estimate its severity and ``n_test`` test it; classes with fewer than ``n_estimation +
    n_test`` samples are removed first (App. L.1: fewer than 200) unless
    ``keep_small_classes`` (then they are split 3:1, see
    :func:`fdbench.data.shifts.cood.cood_estimation_split`); ``n_levels`` percentile levels;
    levels are built for every CSF of ``csfs`` separately (Appendix M)."""

    n_estimation: int = Field(default=150, ge=1)
    n_test: int = Field(default=50, ge=1)
    keep_small_classes: bool = False
    n_levels: int = Field(default=11, ge=2, le=1000)
    csfs: tuple[str, ...] = ("MSR", "MLS", "PE", "MaxLogit-pNorm", "MCD-PE")

    @field_validator("csfs")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [c for c in value if c not in ZOO_CSFS]
        if unknown:
            raise ValueError(f"unknown CSF {unknown[0]!r}; expected some of {list(ZOO_CSFS)}")
        return value


class PNormSettings(_Strict):
    """The grids p and t are searched on: Cattelan & Silva's p = 0..9; t over their range
    0.01..1.99 but 40 evenly spaced values by default instead of their 199 (step 0.01), with
    which a 10 000 × 100 member takes 2.4 × the CPU time (0.93 s instead of 0.39 s;
    ``t_count: 199`` restores their grid)."""

    p_grid: tuple[Annotated[float, Field(ge=0)], ...] = Field(
        default=tuple(float(p) for p in range(10)), min_length=1, max_length=1000
    )
    t_start: float = Field(default=0.01, gt=0)
    t_stop: float = Field(default=1.99, gt=0)
    t_count: int = Field(default=40, ge=1, le=MAX_GRID)
    softmax: bool = True

    def t_grid(self) -> tuple[float, ...]:
        """The temperatures of p-NormSoftmax's search, ``t_count`` evenly spaced values."""
        import numpy as np

        return tuple(float(t) for t in np.linspace(self.t_start, self.t_stop, self.t_count))


class TimmSource(_Strict):
    """timm models run on an image folder (ImageNet val layout) as members
    (:func:`fdbench.zoo.timm_members.timm_members`; timm must be installed). The OOD pool is
    ``ood`` (one sub-folder per class) or ``imagenet21k`` (an ImageNet-21K copy, filtered as
    Galil et al., App. L.1, with ``wordnet``'s ``data.noun``, ``ood_samples`` images per
    class); ``imagenet_o`` (the ImageNet-O release) is an extra OOD set."""

    models: tuple[str, ...] = Field(min_length=1)
    dataset: str
    ood: str | None = None
    imagenet21k: str | None = None
    imagenet_o: str | None = None
    wordnet: str | None = None
    ood_samples: int = Field(default=200, ge=1)
    weights: dict[str, str] = Field(default_factory=dict)
    max_per_class: int | None = Field(default=None, ge=1)
    batch_size: int = Field(default=64, ge=1)

    @model_validator(mode="after")
    def _one_pool(self) -> TimmSource:
        if self.ood is not None and self.imagenet21k is not None:
            raise ValueError("give either ood or imagenet21k as the OOD pool, not both")
        return self


class SourcesSettings(_Strict):
    """Members written into the zoo folder before the evaluation: ``timm`` models and the
    models of fdbench benchmark run folders (``benchmark_runs``)."""

    timm: TimmSource | None = None
    benchmark_runs: tuple[str, ...] = ()


class ZooConfig(_Strict):
    """A zoo study: the zoo folder and the analysis settings (see docs/zoo.md).

    ``authors_code`` adds to every in-distribution row the quantities of Galil et al.'s
    released code under their own names (``aurc_per_sample``, ``auroc_f_ordered`` and
    ``sac@<target>_first_drop`` per SAC target; :mod:`fdbench.metrics.conventions`), ties in
    that order (``torch``: their ``torch.argsort``; ``stable``: input order); off by default.
    """

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    zoo: str
    val_fraction: float = Field(default=0.1, gt=0, lt=1)
    seed: int = Field(default=0, ge=0)
    cood: CoodSettings = CoodSettings()
    pnorm: PNormSettings = PNormSettings()
    sac_targets: tuple[Annotated[float, Field(gt=0, lt=1)], ...] = (0.95, 0.99)
    n_bins: int = Field(default=15, ge=1, le=100_000)
    n_bootstrap: int = Field(default=1000, ge=10)
    chunk_size: int = Field(default=4096, ge=1, le=MAX_CHUNK)
    workers: int = Field(default=0, ge=0)
    sources: SourcesSettings = SourcesSettings()
    authors_code: Literal["stable", "torch"] | None = None

    @field_validator("n_bootstrap")
    @classmethod
    def _bootstrap_fits(cls, n_bootstrap: int) -> int:
        """More than :data:`MAX_BOOTSTRAP` resamples are refused with the memory they would
        need for the fewest members (the members are known only later)."""
        if n_bootstrap > MAX_BOOTSTRAP:
            need = bootstrap_memory(n_bootstrap, MIN_BOOTSTRAP_MEMBERS)
            raise ValueError(
                f"{n_bootstrap} resamples would need at least {format_bytes(need)} of memory "
                f"({MIN_BOOTSTRAP_MEMBERS} members); at most {MAX_BOOTSTRAP} are allowed"
            )
        return n_bootstrap

    @field_validator("name")
    @classmethod
    def _name_is_a_folder_name(cls, name: str) -> str:
        """``runs/<name>`` is the default run folder: ``..`` would be the working folder."""
        return check_path_name(name, "name")


def bootstrap_memory(n_bootstrap: int, n_members: int) -> int:
    """Bytes the member bootstrap of :func:`fdbench.zoo.analyses.spearman_table` holds for one
    pair of columns: ``n_bootstrap`` x ``n_members`` values of :data:`BOOTSTRAP_BYTES`."""
    return n_bootstrap * n_members * BOOTSTRAP_BYTES


def quick_config(config: ZooConfig) -> ZooConfig:
    """The ``--quick`` variant of a config: 200 bootstrap resamples and a p-NormSoftmax
    temperature grid of 20 values over the same range (results of other CSFs unchanged)."""
    pnorm = config.pnorm.model_copy(update={"t_count": min(config.pnorm.t_count, 20)})
    return config.model_copy(update={"n_bootstrap": min(config.n_bootstrap, 200), "pnorm": pnorm})


def _format_errors(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: "
        f"{e['msg'].removeprefix('Value error, ')}"
        for e in error.errors()
    )


def parse_zoo_config(data: Any, *, source: str = "zoo config") -> ZooConfig:
    """Validate a mapping into a :class:`ZooConfig`; ``ValueError`` names every bad field."""
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise ValueError(f"{source}: expected a mapping at the top level, got {kind}")
    bad = first_non_finite(data)
    if bad is not None:
        raise ValueError(
            f"{source}: invalid configuration: {bad}: expected a finite number, got NaN or infinity"
        )
    try:
        return ZooConfig.model_validate(data)
    except ValidationError as error:
        raise ValueError(f"{source}: invalid configuration: {_format_errors(error)}") from None


def load_zoo_config(path: str | os.PathLike[str]) -> ZooConfig:
    """Read a YAML zoo config with :func:`fdbench.core.yaml.load_yaml` (repeated keys, alias
    bombs and ``!!python`` tags refused) and validate it; relative paths (``zoo``, the
    ``sources``' folders and weight files) are taken relative to the file."""
    path = os.fspath(path)
    config = parse_zoo_config(load_yaml(path), source=path)
    base = os.path.dirname(os.path.abspath(path))

    def resolve(folder: str) -> str:
        return os.path.normpath(folder if os.path.isabs(folder) else os.path.join(base, folder))

    sources = config.sources
    timm = sources.timm
    if timm is not None:
        timm = timm.model_copy(
            update={
                "dataset": resolve(timm.dataset),
                **{
                    key: resolve(getattr(timm, key))
                    for key in ("ood", "imagenet21k", "imagenet_o", "wordnet")
                    if getattr(timm, key) is not None
                },
                "weights": {k: resolve(v) for k, v in timm.weights.items()},
            }
        )
    sources = sources.model_copy(
        update={"timm": timm, "benchmark_runs": tuple(resolve(r) for r in sources.benchmark_runs)}
    )
    zoo = config.zoo if is_url(config.zoo) else resolve(config.zoo)
    return config.model_copy(update={"zoo": zoo, "sources": sources})
