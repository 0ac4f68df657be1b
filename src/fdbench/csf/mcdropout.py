"""MC-dropout CSFs from N × S × K logits (S stochastic forward passes per sample)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from fdbench.core.validation import REAL_KINDS

from ._validation import as_float_array

__all__ = ["MCDSummary", "mcd_ee", "mcd_mi", "mcd_mls", "mcd_msr", "mcd_pe", "mcd_summary"]

_CHUNK_ELEMENTS = 2**20


@dataclass(frozen=True)
class MCDSummary:
    """Per-sample statistics of S stochastic predictions, from one pass over N × S × K logits.

    ``mean_probs``: p̄ = mean_s softmax(z_s) (N × K); ``mean_entropy``: mean_s H(p_s) (N);
    ``max_mean_logit``: max_c mean_s z_sc (N).
    """

    mean_probs: np.ndarray
    mean_entropy: np.ndarray
    max_mean_logit: np.ndarray

    @property
    def predictive_entropy(self) -> np.ndarray:
        """H(p̄) = -Σ_c p̄_c log p̄_c (nats)."""
        from scipy.special import entr

        return entr(self.mean_probs).sum(axis=1)


def _as_3d(mcd_logits: Any) -> Any:
    """Keep sliceable arrays (NumPy, lazily read zarr) as they are; convert anything else."""
    z = mcd_logits if hasattr(mcd_logits, "shape") and hasattr(mcd_logits, "ndim") else None
    if z is None:
        z = np.asarray(mcd_logits)
    if getattr(z, "dtype", np.dtype(float)).kind not in REAL_KINDS:
        raise TypeError(f"mcd_logits must hold real numbers, got dtype {z.dtype}")
    if z.ndim != 3 or 0 in z.shape:
        raise ValueError(f"mcd_logits must have shape (N, S, K) with N, S, K > 0, got {z.shape}")
    return z


def mcd_summary(mcd_logits: ArrayLike) -> MCDSummary:
    """Compute :class:`MCDSummary` in blocks of samples (bounded extra memory).

    Softmax per MC sample with the max shifted out in float64 (one ``exp`` per element);
    ``log p_s = (z - max) - log Σ exp(z - max)`` for the entropies. ``mcd_logits`` may be any
    sliceable array, e.g. a lazily read ``zarr.Array``; only one block is in memory at a time.
    """
    z = _as_3d(mcd_logits)
    n, s, k = z.shape
    mean_probs = np.empty((n, k))
    mean_entropy = np.empty(n)
    max_mean_logit = np.empty(n)
    step = max(1, _CHUNK_ELEMENTS // (s * k))
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        block = as_float_array(z[rows], "mcd_logits", 3)
        max_mean_logit[rows] = block.mean(axis=1).max(axis=1)
        shifted = block - block.max(axis=2, keepdims=True)
        probs = np.exp(shifted)
        total = probs.sum(axis=2, keepdims=True)
        probs /= total
        shifted -= np.log(total)
        mean_entropy[rows] = -np.einsum("nsk,nsk->n", probs, shifted) / s
        mean_probs[rows] = probs.mean(axis=1)
    return MCDSummary(mean_probs, mean_entropy, max_mean_logit)


def mcd_msr(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-MSR: ``max_c p̄_c`` of the mean softmax over MC samples.

    Gal & Ghahramani, "Dropout as a Bayesian approximation", ICML 2016.
    """
    return mcd_summary(mcd_logits).mean_probs.max(axis=1)


def mcd_pe(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-PE: negated entropy of the mean softmax, ``-H(p̄)``."""
    return -mcd_summary(mcd_logits).predictive_entropy


def mcd_ee(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-EE: negated expected entropy, ``-mean_s H(p_s)`` (aleatoric part).

    Depeweg et al., "Decomposition of uncertainty in Bayesian deep learning", ICML 2018.
    """
    return -mcd_summary(mcd_logits).mean_entropy


def mcd_mi(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-MI: negated mutual information, ``-(H(p̄) - mean_s H(p_s))`` (epistemic part).

    Smith & Gal, "Understanding measures of uncertainty for adversarial example detection",
    UAI 2018. Equal to MCD-PE - MCD-EE.
    """
    summary = mcd_summary(mcd_logits)
    return summary.mean_entropy - summary.predictive_entropy


def mcd_mls(mcd_logits: ArrayLike) -> np.ndarray:
    """MCD-MLS: maximum over classes of the mean logit over MC samples, ``max_c mean_s z_sc``.

    As in FD-Shifts (``mcd_mls``: ``np.max`` of ``mcd_logits_mean``).
    """
    z = _as_3d(mcd_logits)
    n, s, k = z.shape
    out = np.empty(n)
    step = max(1, _CHUNK_ELEMENTS // (s * k))
    for start in range(0, n, step):
        block = as_float_array(z[start : start + step], "mcd_logits", 3)
        out[start : start + step] = block.mean(axis=1).max(axis=1)
    return out
