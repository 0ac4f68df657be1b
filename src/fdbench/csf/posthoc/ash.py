"""ASH on stored penultimate features: ASH-P, ASH-B and ASH-S (Djurisic et al., ICLR 2023)
applied to the pooled feature vector, as OpenOOD does, then the energy of the last layer."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._base import PostHocInputs, register_posthoc
from ._layer import check_last_layer, energy_of_layer, top_k_count

__all__ = ["ash_b", "ash_p", "ash_s", "ash_score", "keep_top_k"]

_SOURCE = (
    "Djurisic et al. ICLR 2023 Sec. 2 (Alg. 1); OpenOOD openood/networks/ash_net.py on the "
    "pooled penultimate features, ash_postprocessor.py"
)
_GRID = {"percentile": (65, 70, 75, 80, 85, 90, 95)}


def keep_top_k(features: np.ndarray, k: int) -> np.ndarray:
    """``features`` with all but the ``k`` largest entries of each row set to 0 (ties: the
    earlier column first)."""
    order = np.argsort(-features, axis=1, kind="stable")[:, :k]
    kept = np.zeros_like(features)
    np.put_along_axis(kept, order, np.take_along_axis(features, order, axis=1), axis=1)
    return kept


def ash_p(features: ArrayLike, percentile: float) -> np.ndarray:
    """ASH-P: keep the top ``k = D − round(D·percentile/100)`` activations, zero the rest."""
    h = np.asarray(features, dtype=np.float64)
    return keep_top_k(h, top_k_count(h.shape[1], percentile))


def ash_b(features: ArrayLike, percentile: float) -> np.ndarray:
    """ASH-B: the kept top-k positions set to ``s1 / k`` (``s1`` the row's sum before pruning),
    the rest 0."""
    h = np.asarray(features, dtype=np.float64)
    k = top_k_count(h.shape[1], percentile)
    mask = np.zeros_like(h)
    order = np.argsort(-h, axis=1, kind="stable")[:, :k]
    np.put_along_axis(mask, order, 1.0, axis=1)
    return mask * (h.sum(axis=1, keepdims=True) / k)


def ash_s(features: ArrayLike, percentile: float) -> np.ndarray:
    """ASH-S: the pruned features (ASH-P) times ``exp(s1 / s2)``, ``s1``/``s2`` the row's sum
    before/after pruning."""
    h = np.asarray(features, dtype=np.float64)
    pruned = ash_p(h, percentile)
    return pruned * np.exp(h.sum(axis=1, keepdims=True) / pruned.sum(axis=1, keepdims=True))


_SHAPES = {"ASH-P-penult": ash_p, "ASH-B-penult": ash_b, "ASH-S-penult": ash_s}


def ash_score(
    features: ArrayLike, weight: ArrayLike, bias: ArrayLike, percentile: float, variant: str
) -> np.ndarray:
    """Energy ``logsumexp_c (W a(h) + b)_c`` of the last layer on the features shaped by ASH
    variant ``variant`` (``"ASH-P-penult"``, ``"ASH-B-penult"``, ``"ASH-S-penult"``).

    Djurisic et al., "Extremely Simple Activation Shaping for Out-of-Distribution Detection",
    ICLR 2023, Sec. 2. The paper shapes the activation map of a late layer; OpenOOD
    (``openood/networks/ash_net.py``, ``forward_threshold``) shapes the pooled penultimate
    features viewed as a (D, 1, 1) map, which is what stored features allow. fdbench follows
    the code, hence the names ``…-penult``.
    """
    if variant not in _SHAPES:
        raise ValueError(f"variant must be one of {sorted(_SHAPES)}, got {variant!r}")
    h, w, b = check_last_layer(features, weight, bias)
    return energy_of_layer(_SHAPES[variant](h, percentile), w, b)


def _register(name: str, colour: str) -> None:
    @register_posthoc(
        name,
        reads=("features", "last_layer"),
        grid=_GRID,
        source=_SOURCE,
        colour=colour,
    )
    def compute(inputs: PostHocInputs, split: str, *, percentile: float) -> np.ndarray:
        weight, bias = inputs.last_layer()
        return ash_score(inputs.features(split), weight, bias, percentile, name)


_register("ASH-P-penult", "#88CCEE")
_register("ASH-B-penult", "#44AA99")
_register("ASH-S-penult", "#DDCC77")
