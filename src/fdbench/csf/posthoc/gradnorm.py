"""GradNorm, in closed form for the last layer: the L1 norm of the gradient of the KL
divergence to the uniform distribution with respect to the last layer's weights (Huang et al.,
NeurIPS 2021)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ..softmax import log_softmax
from ._base import PostHocInputs, register_posthoc

__all__ = ["gradnorm"]


def gradnorm(features: ArrayLike, logits: ArrayLike) -> np.ndarray:
    """GradNorm, ``‖h‖_1 · Σ_c |K p_c − 1|``: the entrywise L1 norm of ``∂L/∂W = (K p − 1) hᵀ``
    for ``L = −Σ_c log softmax(W h + b)_c``, ``p = softmax(z)``.

    Huang, Geng & Li, "On the Importance of Gradients for Detecting Distributional Shifts in
    the Wild", NeurIPS 2021, Eq. (4)-(5), with the last layer's weights as the paper's
    experiments. OpenOOD ``openood/postprocessors/gradnorm_postprocessor.py`` back-propagates
    ``mean(sum(-targets * log_softmax(fc(h))))`` with ``targets = ones`` through ``fc`` and
    takes ``sum(abs(fc.weight.grad))``; this is its closed form (the paper's uniform targets
    ``1/K`` give the same value divided by K, the same ranking).
    """
    h = as_float_array(features, "features", 2)
    z = as_float_array(logits, "logits", 2)
    if h.shape[0] != z.shape[0]:
        raise ValueError(f"features and logits must have as many rows, got {h.shape}, {z.shape}")
    k = z.shape[1]
    p = np.exp(log_softmax(z))
    return np.abs(h).sum(axis=1) * np.abs(k * p - 1.0).sum(axis=1)


@register_posthoc(
    "GradNorm",
    reads=("features", "logits"),
    source="Huang et al. NeurIPS 2021 Sec. 3; OpenOOD gradnorm_postprocessor.py (closed form)",
    colour="#661100",
)
def _gradnorm(inputs: PostHocInputs, split: str) -> np.ndarray:
    return gradnorm(inputs.features(split), inputs.logits(split))
