"""MC-dropout CSFs from N × S × K logits (S stochastic forward passes per sample)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from ._validation import as_float_array
from .softmax import entropy_from_log_probs, log_softmax

__all__ = [
    "mcd_ee",
    "mcd_mi",
    "mcd_mls",
    "mcd_msr",
    "mcd_pe",
    "mcd_summary",
    "mean_log_probs",
    "sample_entropies",
]

_CHUNK_ELEMENTS = 2**22


def _step(row_elements: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(row_elements, 1))


def mcd_summary(mcd_logits: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(log p̄, mean_s H(p_s))``: log of the mean softmax (N × K) and the mean entropy (N).

    Computed in blocks of samples (bounded extra memory); ``mcd_logits`` may be any array-like
    supporting slicing, e.g. a lazily read ``zarr.Array``.
    """
    z = np.asarray(mcd_logits)
    if z.ndim != 3 or 0 in z.shape:
        raise ValueError(f"mcd_logits must have shape (N, S, K) with N, S, K > 0, got {z.shape}")
    n, s, k = z.shape
    log_mean = np.empty((n, k))
    mean_entropy = np.empty(n)
    step = _step(s * k)
    for start in range(0, n, step):
        block = as_float_array(z[start : start + step], "mcd_logits", 3)
        lp = log_softmax(block, axis=2)
        log_mean[start : start + step] = logsumexp(lp, axis=1) - np.log(s)
        mean_entropy[start : start + step] = entropy_from_log_probs(lp, axis=2).mean(axis=1)
    return log_mean, mean_entropy


def mean_log_probs(mcd_logits: ArrayLike) -> np.ndarray:
    """``log p̄`` with ``p̄ = mean_s softmax(z_s)``, the MC-dropout predictive distribution."""
    return mcd_summary(mcd_logits)[0]


def sample_entropies(mcd_logits: ArrayLike) -> np.ndarray:
    """Mean over MC samples of the entropy of each sample's softmax, ``mean_s H(p_s)``."""
    return mcd_summary(mcd_logits)[1]


def mcd_msr(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-MSR: ``max_c p̄_c`` of the mean softmax over MC samples.

    Gal & Ghahramani, "Dropout as a Bayesian approximation", ICML 2016.
    """
    return np.exp(np.max(mean_log_probs(mcd_logits), axis=1))


def mcd_pe(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-PE: negated entropy of the mean softmax, ``-H(p̄)``."""
    return -entropy_from_log_probs(mean_log_probs(mcd_logits), axis=1)


def mcd_ee(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-EE: negated expected entropy, ``-mean_s H(p_s)`` (aleatoric part).

    Depeweg et al., "Decomposition of uncertainty in Bayesian deep learning", ICML 2018.
    """
    return -sample_entropies(mcd_logits)


def mcd_mi(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-MI: negated mutual information, ``-(H(p̄) - mean_s H(p_s))`` (epistemic part).

    Smith & Gal, "Understanding measures of uncertainty for adversarial example detection",
    UAI 2018. Equal to MCD-PE - MCD-EE.
    """
    log_mean, mean_entropy = mcd_summary(mcd_logits)
    return -(entropy_from_log_probs(log_mean, axis=1) - mean_entropy)


def mcd_mls(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-MLS: maximum over classes of the mean logit over MC samples, ``max_c mean_s z_sc``.

    As in FD-Shifts (``mcd_mls``: ``np.max`` of ``mcd_logits_mean``).
    """
    z = np.asarray(mcd_logits)
    if z.ndim != 3 or 0 in z.shape:
        raise ValueError(f"mcd_logits must have shape (N, S, K) with N, S, K > 0, got {z.shape}")
    n, s, k = z.shape
    out = np.empty(n)
    step = _step(s * k)
    for start in range(0, n, step):
        block = as_float_array(z[start : start + step], "mcd_logits", 3)
        out[start : start + step] = block.mean(axis=1).max(axis=1)
    return out
