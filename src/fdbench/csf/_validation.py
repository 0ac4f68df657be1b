"""Input checks shared by the confidence scoring functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from fdbench.core.validation import as_real_array


def as_float_array(value: Any, name: str, ndim: int) -> np.ndarray:
    """Return ``value`` as a finite float64 array with ``ndim`` dimensions, else raise."""
    array = as_real_array(value, name)
    if array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {array.shape}")
    if array.size == 0 or any(s == 0 for s in array.shape):
        raise ValueError(f"{name} must not be empty, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, found {int((~np.isfinite(array)).sum())} NaN/inf")
    return array


def as_label_array(value: Any, name: str, n: int, n_classes: int | None = None) -> np.ndarray:
    """Return ``value`` as an int64 vector of length ``n`` (labels in [0, n_classes) if given)."""
    array = np.asarray(value)
    if array.dtype.kind not in "biu":
        raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")
    if array.ndim != 1 or array.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},), got {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")
    array = array.astype(np.int64)
    if n_classes is not None and array.size and (array.min() < 0 or array.max() >= n_classes):
        raise ValueError(f"{name} must lie in [0, {n_classes}), got [{array.min()}, {array.max()}]")
    return array
