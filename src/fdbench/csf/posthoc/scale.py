"""SCALE: energy of the last layer on penultimate features scaled by the exponential of the
ratio of their sum to the sum of their top percentile (Xu et al., ICLR 2024)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._base import PostHocInputs, register_posthoc
from ._layer import check_last_layer, energy_of_layer, top_k_count
from .ash import keep_top_k

__all__ = ["scale", "scale_features"]


def scale_features(features: ArrayLike, percentile: float) -> np.ndarray:
    """``h · exp(s1 / s2)``: the unpruned features ``h`` times the exponential of their sum
    ``s1`` over the sum ``s2`` of their top ``k = D − round(D·percentile/100)`` entries."""
    h = np.asarray(features, dtype=np.float64)
    pruned = keep_top_k(h, top_k_count(h.shape[1], percentile))
    return h * np.exp(h.sum(axis=1, keepdims=True) / pruned.sum(axis=1, keepdims=True))


def scale(features: ArrayLike, weight: ArrayLike, bias: ArrayLike, percentile: float) -> np.ndarray:
    """SCALE, ``logsumexp_c (W h exp(s1/s2) + b)_c`` (:func:`scale_features`).

    Xu et al., "Scaling for Training Time and Post-hoc Out-of-distribution Detection
    Enhancement", ICLR 2024, Sec. 4; OpenOOD ``openood/networks/scale_net.py`` (``scale``: the
    *unpruned* input times ``exp(s1/s2)``, on the pooled features) and
    ``openood/postprocessors/scale_postprocessor.py``.
    """
    h, w, b = check_last_layer(features, weight, bias)
    return energy_of_layer(scale_features(h, percentile), w, b)


@register_posthoc(
    "SCALE",
    reads=("features", "last_layer"),
    grid={"percentile": (65, 70, 75, 80, 85, 90, 95)},
    source="Xu et al. ICLR 2024 Sec. 4; OpenOOD scale_net.py, scale_postprocessor.py",
    colour="#AA4499",
)
def _scale(inputs: PostHocInputs, split: str, *, percentile: float) -> np.ndarray:
    weight, bias = inputs.last_layer()
    return scale(inputs.features(split), weight, bias, percentile)
