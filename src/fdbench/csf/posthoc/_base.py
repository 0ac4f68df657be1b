"""The post-hoc scores' one list: each score's function, what it reads, its hyper-parameter grid
and source, and the read access to a run's stored outputs that they share."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fdbench.outputs.schema import RunOutputs

from ..specs import CSFSpec, add_csf

__all__ = [
    "PostHocInputs",
    "PostHocScore",
    "grid_points",
    "posthoc_score",
    "posthoc_scores",
    "register_posthoc",
]

#: What a post-hoc score may read from a run (:attr:`PostHocScore.reads`).
POSTHOC_READS = ("logits", "features", "last_layer", "train", "val")


class PostHocInputs:
    """Read access to the stored outputs of ``run`` for the post-hoc scores, with the fits on
    ``train``/``val`` made once (:meth:`fit`).

    Every split is read through :meth:`split` (``run.splits[name]``), so that an instrumented
    ``run.splits`` sees every split a score or a search reads.
    """

    def __init__(self, run: RunOutputs) -> None:
        if not isinstance(run, RunOutputs):
            raise TypeError(f"run must be a RunOutputs, got {type(run).__name__}")
        self.run = run
        self._fits: dict[Any, Any] = {}

    def has(self, name: str) -> bool:
        """Whether the run stores split ``name``."""
        return name in self.run.splits

    def split(self, name: str) -> Any:
        """The stored outputs of split ``name`` (``ValueError`` where there is none)."""
        if name not in self.run.splits:
            raise ValueError(f"split must be one of {sorted(self.run.splits)}, got {name!r}")
        return self.run.splits[name]

    def logits(self, name: str) -> np.ndarray:
        """The float64 logits (N, K) of split ``name``."""
        return np.asarray(self.split(name).logits, dtype=np.float64)

    def labels(self, name: str) -> np.ndarray:
        """The int64 labels (N,) of split ``name`` (-1: a new-class sample)."""
        return np.asarray(self.split(name).labels, dtype=np.int64)

    def features(self, name: str) -> np.ndarray:
        """The float64 penultimate features (N, D) of split ``name``."""
        features = self.split(name).features
        if features is None:
            raise ValueError(f"split {name!r} stores no penultimate features")
        return np.asarray(features, dtype=np.float64)

    def last_layer(self) -> tuple[np.ndarray, np.ndarray]:
        """The classifier's last layer, ``(W (K, D), b (K,))`` from ``meta['fc_weight']`` and
        ``meta['fc_bias']``."""
        meta = self.run.meta
        if "fc_weight" not in meta or "fc_bias" not in meta:
            raise ValueError("the run stores no last layer (meta 'fc_weight' and 'fc_bias')")
        return (
            np.asarray(meta["fc_weight"], dtype=np.float64),
            np.asarray(meta["fc_bias"], dtype=np.float64),
        )

    def fit(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()``, computed on the first call with ``key`` and reused after."""
        if key not in self._fits:
            self._fits[key] = make()
        return self._fits[key]

    def allows(self, reads: tuple[str, ...], split: str) -> bool:
        """Whether the run stores what a score that ``reads`` these outputs needs on ``split``."""
        meta, splits = self.run.meta, self.run.splits
        needs_features = "features" in reads
        checks = {
            "logits": True,
            "features": splits[split].features is not None,
            "last_layer": "fc_weight" in meta and "fc_bias" in meta,
            "train": "train" in splits
            and (not needs_features or splits["train"].features is not None),
            "val": "val" in splits and (not needs_features or splits["val"].features is not None),
        }
        return all(checks[r] for r in reads)


@dataclass(frozen=True)
class PostHocScore:
    """One post-hoc score and its facts.

    ``name``: its CSF name; ``compute(inputs, split, **params)``: its N confidences on
    ``split`` (higher = more confident); ``reads``: the outputs it needs
    (:data:`POSTHOC_READS`: ``train``/``val`` where it fits there); ``grid``: each
    hyper-parameter's default grid, searched on validation data
    (:func:`fdbench.csf.posthoc.search_posthoc`); ``source``: the paper section and the
    authors' code it follows.
    """

    name: str
    compute: Callable[..., np.ndarray]
    reads: tuple[str, ...]
    grid: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    source: str = ""

    def __post_init__(self) -> None:
        unknown = [r for r in self.reads if r not in POSTHOC_READS]
        if unknown:
            raise ValueError(f"reads of {self.name!r} must be among {POSTHOC_READS}, got {unknown}")
        for key, values in self.grid.items():
            if not isinstance(values, tuple) or not values:
                raise ValueError(f"grid[{key!r}] of {self.name!r} must be a non-empty tuple")


_POSTHOC: dict[str, PostHocScore] = {}


def grid_points(grid: Mapping[str, tuple[Any, ...]]) -> Iterator[dict[str, Any]]:
    """Every combination of the grid's values, in the order of the grid (the last
    hyper-parameter varying fastest); one empty combination for an empty grid."""
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        yield dict(zip(keys, values, strict=True))


def register_posthoc(
    name: str,
    *,
    reads: tuple[str, ...],
    grid: Mapping[str, tuple[Any, ...]] | None = None,
    source: str,
    colour: str,
    calibration: str = "platt",
) -> Callable[[Callable[..., np.ndarray]], Callable[..., np.ndarray]]:
    """Decorator entering ``compute(inputs, split, **params)`` as the post-hoc score ``name``:
    into this list (:func:`posthoc_scores`) and, as an opt-in CSF, into the list of CSFs
    (:func:`fdbench.csf.csf_specs`), so that :func:`fdbench.csf.compute_csfs` and the default
    benchmark leave it out and a comparison that asks for it evaluates it."""

    def decorate(compute: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        score = PostHocScore(name, compute, tuple(reads), dict(grid or {}), source)
        known = _POSTHOC.get(name)
        if known is not None and known.compute is not compute:
            raise ValueError(f"a post-hoc score named {name!r} is already registered")
        _POSTHOC[name] = score
        needs = ", ".join(reads) + ("; grid " + ", ".join(score.grid) if score.grid else "")
        add_csf(
            CSFSpec(
                name,
                compute,
                needs,
                "features" if "features" in reads else "logits",
                None,
                fit="val"
                if score.grid or "val" in reads
                else ("train" if "train" in reads else None),
                calibration=calibration,
                colour=colour,
                opt_in=True,
            )
        )
        return compute

    return decorate


def posthoc_scores() -> dict[str, PostHocScore]:
    """Every post-hoc score by name, in order of registration."""
    return dict(_POSTHOC)


def posthoc_score(name: str) -> PostHocScore:
    """The post-hoc score ``name``; ``ValueError`` listing the names where there is none."""
    if name not in _POSTHOC:
        raise ValueError(f"posthoc score must be one of {sorted(_POSTHOC)}, got {name!r}")
    return _POSTHOC[name]
