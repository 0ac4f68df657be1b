"""DICE: energy of the last layer with its weights sparsified by their contribution to the mean
training feature (Sun & Li, ECCV 2022)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ._base import PostHocInputs, register_posthoc
from ._layer import check_last_layer, energy_of_layer

__all__ = ["dice", "dice_mask"]


def dice_mask(mean_features: ArrayLike, weight: ArrayLike, p: float) -> np.ndarray:
    """The 0/1 mask (K, D) of the weights whose contribution ``m_d · W_cd`` to the mean
    feature ``m`` exceeds the ``p``-th percentile of all K·D contributions."""
    m = as_float_array(mean_features, "mean_features", 1)
    w = as_float_array(weight, "weight", 2)
    if not 0 <= float(p) <= 100:
        raise ValueError(f"p must lie in [0, 100], got {p!r}")
    contribution = m[None, :] * w
    return (contribution > np.percentile(contribution, float(p))).astype(np.float64)


def dice(
    features: ArrayLike, weight: ArrayLike, bias: ArrayLike, mean_features: ArrayLike, p: float
) -> np.ndarray:
    """DICE, ``logsumexp_c ((M ⊙ W) h + b)_c`` with ``M = dice_mask(mean_features, W, p)``.

    Sun & Li, "DICE: Leveraging Sparsification for Out-of-Distribution Detection", ECCV 2022,
    Sec. 3 (Eq. 2-3); OpenOOD ``openood/postprocessors/dice_postprocessor.py``
    (``calculate_mask``: ``contrib > np.percentile(contrib, p)``, the mean over the training
    features).
    """
    h, w, b = check_last_layer(features, weight, bias)
    return energy_of_layer(h, w * dice_mask(mean_features, w, p), b)


@register_posthoc(
    "DICE",
    reads=("features", "last_layer", "train"),
    grid={"p": (10, 30, 50, 70, 90)},
    source="Sun & Li ECCV 2022 Sec. 3; OpenOOD dice_postprocessor.py",
    colour="#CC6677",
)
def _dice(inputs: PostHocInputs, split: str, *, p: float) -> np.ndarray:
    mean = inputs.fit("train_mean", lambda: inputs.features("train").mean(axis=0))
    weight, bias = inputs.last_layer()
    return dice(inputs.features(split), weight, bias, mean, p)
