"""SHE: the inner product of a feature with the mean training feature of its predicted class,
over correctly classified training samples (Zhang et al., ICLR 2023)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array, as_label_array
from ._base import PostHocInputs, register_posthoc

__all__ = ["fit_she", "she"]


def fit_she(features: ArrayLike, labels: ArrayLike, logits: ArrayLike) -> np.ndarray:
    """The stored patterns (K, D): per class, the mean feature of the training samples of that
    class that the network classifies correctly; a zero pattern for a class without one
    (OpenOOD's mean of an empty set is NaN)."""
    x = as_float_array(features, "features", 2)
    z = as_float_array(logits, "logits", 2)
    y = as_label_array(labels, "labels", x.shape[0])
    pred = np.argmax(z, axis=1)
    patterns = np.zeros((z.shape[1], x.shape[1]))
    for c in range(z.shape[1]):
        correct = (y == c) & (pred == c)
        if correct.any():
            patterns[c] = x[correct].mean(axis=0)
    return patterns


def she(features: ArrayLike, logits: ArrayLike, patterns: ArrayLike) -> np.ndarray:
    """SHE, ``⟨h, m_ŷ⟩`` with ``ŷ = argmax z`` and ``m`` the patterns of :func:`fit_she`.

    Zhang et al., "Out-of-Distribution Detection based on In-Distribution Data Patterns
    Memorization with Modern Hopfield Energy", ICLR 2023, Sec. 3; OpenOOD
    ``openood/postprocessors/she_postprocessor.py`` (``distance(..., 'inner_product')``).
    """
    h = as_float_array(features, "features", 2)
    z = as_float_array(logits, "logits", 2)
    m = as_float_array(patterns, "patterns", 2)
    return np.sum(h * m[np.argmax(z, axis=1)], axis=1)


@register_posthoc(
    "SHE",
    reads=("logits", "features", "train"),
    source="Zhang et al. ICLR 2023 Sec. 3; OpenOOD she_postprocessor.py",
    colour="#009988",
)
def _she(inputs: PostHocInputs, split: str) -> np.ndarray:
    def make() -> np.ndarray:
        labels = inputs.labels("train")
        known = labels >= 0
        return fit_she(
            inputs.features("train")[known], labels[known], inputs.logits("train")[known]
        )

    return she(inputs.features(split), inputs.logits(split), inputs.fit("she", make))
