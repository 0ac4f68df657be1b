"""Shared steps of the scores that recompute the last layer from penultimate features."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array

__all__ = ["check_last_layer", "energy_of_layer", "top_k_count"]


def check_last_layer(
    features: ArrayLike, weight: ArrayLike, bias: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``features`` (N, D), ``weight`` (K, D) and ``bias`` (K,) as float64, shapes checked."""
    h = as_float_array(features, "features", 2)
    w = as_float_array(weight, "weight", 2)
    b = as_float_array(bias, "bias", 1)
    if w.shape[1] != h.shape[1] or b.shape[0] != w.shape[0]:
        raise ValueError(f"weight must be K × {h.shape[1]} and bias K, got {w.shape} and {b.shape}")
    return h, w, b


def energy_of_layer(features: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``logsumexp_c (W h + b)_c`` for every row ``h`` of ``features``."""
    from scipy.special import logsumexp

    return logsumexp(features @ weight.T + bias, axis=1)


def top_k_count(dim: int, percentile: Any) -> int:
    """How many of ``dim`` activations ASH and SCALE keep at ``percentile``: ``dim −
    round(dim · percentile / 100)`` (OpenOOD ``openood/networks/ash_net.py``)."""
    if isinstance(percentile, bool) or not 0 <= float(percentile) <= 100:
        raise ValueError(f"percentile must lie in [0, 100], got {percentile!r}")
    k = dim - int(np.round(dim * float(percentile) / 100.0))
    if k < 1:
        raise ValueError(f"percentile {percentile!r} keeps no activation of {dim}")
    return k
