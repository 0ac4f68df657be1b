"""The plain-data objects of one model run's outputs and their validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RunOutputs", "SplitOutputs", "validate_run", "validate_split"]


@dataclass
class SplitOutputs:
    """Outputs of one model on one named split (``train``, ``val`` or one test study).

    Attributes
    ----------
    labels : int64 array of shape (N,); ``-1`` marks a new-class sample.
    logits : float64 array of shape (N, K).
    mcd_logits : optional float64 array of shape (N, S, K), S MC-dropout samples.
    features : optional float64 array of shape (N, D), penultimate-layer features.
    heads : named float64 arrays of shape (N,) or (N, K), the outputs a training method adds:
        learned confidence heads (``"devries"``, ``"dg_reservation"``, ``"confidnet"``) and
        per-class outputs (``"edl_alpha"``, EDL's Dirichlet parameters).
    kind : the study kind (a ``StudyKind`` value, or ``"val"`` / ``"train"``).
    groups : optional int64 array of shape (N,), a group code per sample (a site, a sex, a
        scanner): per-group selective risk and Mondrian operating points
        (docs/operating_points.md).
    """

    labels: np.ndarray
    logits: np.ndarray
    mcd_logits: np.ndarray | None = None
    features: np.ndarray | None = None
    heads: dict[str, np.ndarray] = field(default_factory=dict)
    kind: str = "iid"
    groups: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        """Number of samples N."""
        return int(self.labels.shape[0])

    @property
    def n_classes(self) -> int:
        """Number of classes K (columns of ``logits``)."""
        return int(self.logits.shape[1])


@dataclass
class RunOutputs:
    """One model run's outputs on all its splits, plus metadata.

    ``meta`` holds JSON-serialisable values (classes, model, method, seed, dataset, ...) and
    optionally NumPy arrays; ``fc_weight`` (K × D) and ``fc_bias`` (K,) of the final linear layer
    are used by ViM.
    """

    splits: dict[str, SplitOutputs]
    meta: dict[str, Any] = field(default_factory=dict)


def _check_dtype(split: str, name: str, array: Any, dtype: type, ndim: int) -> None:
    if not isinstance(array, np.ndarray) and not hasattr(array, "dtype"):
        raise TypeError(
            f"split {split!r}: {name} must be a numpy array, got {type(array).__name__}"
        )
    if array.dtype != np.dtype(dtype):
        raise TypeError(
            f"split {split!r}: {name} must have dtype {np.dtype(dtype)}, got {array.dtype}"
        )
    if array.ndim != ndim:
        raise ValueError(
            f"split {split!r}: {name} must be {ndim}-dimensional, got shape {tuple(array.shape)}"
        )


def _check_finite(split: str, name: str, array: np.ndarray) -> None:
    bad = ~np.isfinite(array)
    if bad.any():
        first = np.argwhere(bad)[0]
        raise ValueError(
            f"split {split!r}: {name} holds {int(bad.sum())} non-finite value(s), "
            f"first at index {tuple(int(i) for i in first)}"
        )


def validate_split(name: str, split: SplitOutputs, *, check_values: bool = True) -> None:
    """Check dtypes, shapes and (if ``check_values``) values of one split.

    Raises ``TypeError``/``ValueError`` naming the split and the array. ``check_values=False``
    checks only dtypes and shapes (for lazily read arrays).
    """
    if not isinstance(split, SplitOutputs):
        raise TypeError(f"split {name!r} must be a SplitOutputs, got {type(split).__name__}")
    if not isinstance(split.kind, str) or not split.kind:
        raise TypeError(f"split {name!r}: kind must be a non-empty str, got {split.kind!r}")
    _check_dtype(name, "labels", split.labels, np.int64, 1)
    _check_dtype(name, "logits", split.logits, np.float64, 2)
    n, k = split.logits.shape
    if split.labels.shape[0] != n:
        raise ValueError(
            f"split {name!r}: labels has {split.labels.shape[0]} samples but logits has {n}"
        )
    if k < 1:
        raise ValueError(f"split {name!r}: logits must have at least one class column")
    if split.mcd_logits is not None:
        _check_dtype(name, "mcd_logits", split.mcd_logits, np.float64, 3)
        if split.mcd_logits.shape[0] != n or split.mcd_logits.shape[2] != k:
            raise ValueError(
                f"split {name!r}: mcd_logits must have shape ({n}, S, {k}), "
                f"got {tuple(split.mcd_logits.shape)}"
            )
        if split.mcd_logits.shape[1] < 1:
            raise ValueError(f"split {name!r}: mcd_logits must hold at least one MC sample")
    if split.features is not None:
        _check_dtype(name, "features", split.features, np.float64, 2)
        if split.features.shape[0] != n:
            raise ValueError(
                f"split {name!r}: features has {split.features.shape[0]} samples, expected {n}"
            )
    if split.groups is not None:
        _check_dtype(name, "groups", split.groups, np.int64, 1)
        if split.groups.shape[0] != n:
            raise ValueError(
                f"split {name!r}: groups has {split.groups.shape[0]} samples, expected {n}"
            )
    if not isinstance(split.heads, dict):
        raise TypeError(f"split {name!r}: heads must be a dict, got {type(split.heads).__name__}")
    for head, values in split.heads.items():
        if not isinstance(head, str) or not head or "/" in head:
            raise ValueError(f"split {name!r}: head name {head!r} must be a non-empty str")
        ndim = 2 if getattr(values, "ndim", 1) == 2 else 1
        _check_dtype(name, f"heads[{head!r}]", values, np.float64, ndim)
        if ndim == 2 and values.shape[1] != k:
            raise ValueError(
                f"split {name!r}: heads[{head!r}] must have shape ({n},) or ({n}, {k}), "
                f"got {tuple(values.shape)}"
            )
        if values.shape[0] != n:
            raise ValueError(
                f"split {name!r}: heads[{head!r}] has {values.shape[0]} samples, expected {n}"
            )
    if not check_values:
        return
    labels = np.asarray(split.labels)
    if labels.size and (labels.min() < -1 or labels.max() >= k):
        bad = np.flatnonzero((labels < -1) | (labels >= k))
        raise ValueError(
            f"split {name!r}: labels must lie in [-1, {k}), found {int(labels[bad[0]])} "
            f"at index {int(bad[0])} ({bad.size} out of range)"
        )
    _check_finite(name, "logits", np.asarray(split.logits))
    if split.mcd_logits is not None:
        _check_finite(name, "mcd_logits", np.asarray(split.mcd_logits))
    if split.features is not None:
        _check_finite(name, "features", np.asarray(split.features))
    for head, values in split.heads.items():
        _check_finite(name, f"heads[{head!r}]", np.asarray(values))


def validate_run(run: RunOutputs, *, check_values: bool = True) -> None:
    """Validate every split of ``run`` (see :func:`validate_split`) and the type of ``meta``."""
    if not isinstance(run, RunOutputs):
        raise TypeError(f"run must be a RunOutputs, got {type(run).__name__}")
    if not isinstance(run.splits, dict) or not run.splits:
        raise ValueError("run.splits must be a non-empty dict of split name -> SplitOutputs")
    if not isinstance(run.meta, dict):
        raise TypeError(f"run.meta must be a dict, got {type(run.meta).__name__}")
    for name, split in run.splits.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"split names must be non-empty str, got {name!r}")
        validate_split(name, split, check_values=check_values)
    n_classes = {s.logits.shape[1] for s in run.splits.values()}
    if len(n_classes) > 1:
        raise ValueError(f"all splits must have the same number of classes, got {n_classes}")
    _validate_last_layer(run, n_classes.pop())


def _validate_last_layer(run: RunOutputs, k: int) -> None:
    """``meta['fc_weight']`` (K × D, D the features' width) and ``meta['fc_bias']`` (K), where
    present, are finite float arrays of the last layer of a K-class network."""
    widths = {s.features.shape[1] for s in run.splits.values() if s.features is not None}
    for key, ndim in (("fc_weight", 2), ("fc_bias", 1)):
        if key not in run.meta:
            continue
        value = run.meta[key]
        if not isinstance(value, np.ndarray) or value.dtype.kind != "f" or value.ndim != ndim:
            raise TypeError(f"meta[{key!r}] must be a {ndim}-dimensional float numpy array")
        if value.shape[0] != k or (ndim == 2 and widths and {value.shape[1]} != widths):
            expected = f"({k}, {sorted(widths) or 'D'})" if ndim == 2 else f"({k},)"
            raise ValueError(
                f"meta[{key!r}] must have shape {expected} (the last layer of the logits and "
                f"features), got {value.shape}"
            )
        if not np.isfinite(value).all():
            raise ValueError(f"meta[{key!r}] holds non-finite values")
