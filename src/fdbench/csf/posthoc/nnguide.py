"""NNGuide: the energy score guided by the mean similarity to the nearest training features,
each weighted by its own energy (Park et al., ICCV 2023)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ._base import PostHocInputs, register_posthoc

__all__ = ["nnguide", "nnguide_bank", "unit_rows"]


def unit_rows(features: np.ndarray) -> np.ndarray:
    """OpenOOD's ``normalizer``: ``x / ‖x‖ + 1e-10`` (the constant added after the division)."""
    return features / np.linalg.norm(features, axis=-1, keepdims=True) + 1e-10


def nnguide_bank(features: ArrayLike, logits: ArrayLike) -> np.ndarray:
    """The guide bank: every bank feature normalised (:func:`unit_rows`) times its energy
    ``logsumexp(z)``."""
    from scipy.special import logsumexp

    x = as_float_array(features, "features", 2)
    z = as_float_array(logits, "logits", 2)
    return unit_rows(x) * logsumexp(z, axis=1)[:, None]


def nnguide(features: ArrayLike, logits: ArrayLike, bank: ArrayLike, k: int) -> np.ndarray:
    """NNGuide, ``logsumexp(z) · mean of the k largest ⟨ĥ, g_i⟩`` over the guide bank ``g``
    (:func:`nnguide_bank`), ``ĥ`` the normalised feature.

    Park, Jung & Teoh, "Nearest Neighbor Guidance for Out-of-Distribution Detection", ICCV
    2023, Sec. 3 (Eq. 5-6); OpenOOD ``openood/postprocessors/nnguide_postprocessor.py``
    (``knn_score`` with ``faiss.IndexFlatIP``: the k largest inner products, their mean).
    """
    from scipy.special import logsumexp

    h = as_float_array(features, "features", 2)
    z = as_float_array(logits, "logits", 2)
    g = as_float_array(bank, "bank", 2)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= g.shape[0]:
        raise ValueError(f"k must be an int in [1, {g.shape[0]}] (the bank's size), got {k!r}")
    similarity = unit_rows(h) @ g.T
    top = -np.sort(-similarity, axis=1)[:, : int(k)]
    return top.mean(axis=1) * logsumexp(z, axis=1)


@register_posthoc(
    "NNGuide",
    reads=("logits", "features", "train"),
    grid={"k": (10, 100), "alpha": (0.01, 0.1, 1.0)},
    source="Park et al. ICCV 2023 Sec. 3; OpenOOD nnguide_postprocessor.py",
    colour="#EE3377",
)
def _nnguide(inputs: PostHocInputs, split: str, *, k: int, alpha: float) -> np.ndarray:
    # OpenOOD fills the bank with the first batches of the (shuffled) training loader until
    # they exceed a fraction alpha of the training set; fdbench takes the first ceil(alpha N)
    # samples of the stored training split (a random subsample already).
    def make() -> np.ndarray:
        x, z = inputs.features("train"), inputs.logits("train")
        n = max(1, math.ceil(alpha * x.shape[0]))
        return nnguide_bank(x[:n], z[:n])

    bank = inputs.fit(("nnguide", alpha), make)
    return nnguide(inputs.features(split), inputs.logits(split), bank, k)
