"""KL matching: the negated smallest KL divergence from a sample's softmax to the mean softmax
of the validation samples predicted as each class (Hendrycks et al., ICML 2022)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ..softmax import log_softmax
from ._base import PostHocInputs, register_posthoc

__all__ = ["fit_klm", "klm"]


def fit_klm(logits: ArrayLike) -> np.ndarray:
    """The K templates (K, K): row ``c`` is the mean softmax of the samples of ``logits``
    predicted as class ``c``, the one-hot vector of ``c`` where none is (OpenOOD's rule)."""
    z = as_float_array(logits, "logits", 2)
    p = np.exp(log_softmax(z))
    pred = np.argmax(z, axis=1)
    k = z.shape[1]
    templates = np.eye(k)
    for c in range(k):
        if np.any(pred == c):
            templates[c] = p[pred == c].mean(axis=0)
    return templates


def klm(logits: ArrayLike, templates: ArrayLike) -> np.ndarray:
    """KLM, ``−min_c KL(p ‖ d_c)``, ``p = softmax(z)`` and ``d_c`` the templates
    (:func:`fit_klm`).

    Hendrycks et al., "Scaling Out-of-Distribution Detection for Real-World Settings", ICML
    2022, Sec. 4; OpenOOD ``openood/postprocessors/kl_matching_postprocessor.py``
    (``pairwise_distances_argmin_min(softmax, mean_softmax_val, metric=scipy.stats.entropy)``,
    templates from the ID *validation* split).
    """
    from scipy.special import rel_entr

    z = as_float_array(logits, "logits", 2)
    d = as_float_array(templates, "templates", 2)
    if d.shape[1] != z.shape[1]:
        raise ValueError(f"templates must have {z.shape[1]} columns, got {d.shape}")
    p = np.exp(log_softmax(z))
    d = d / d.sum(axis=1, keepdims=True)
    kl = rel_entr(p[:, None, :], d[None, :, :]).sum(axis=2)
    return -kl.min(axis=1)


@register_posthoc(
    "KLM",
    reads=("logits", "val"),
    source="Hendrycks et al. ICML 2022 Sec. 4; OpenOOD kl_matching_postprocessor.py",
    colour="#882255",
)
def _klm(inputs: PostHocInputs, split: str) -> np.ndarray:
    templates = inputs.fit("klm", lambda: fit_klm(inputs.logits("val")))
    return klm(inputs.logits(split), templates)
