"""CSFs computed from one set of logits: MSR, MLS, PE, energy and DOCTOR (all float64)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array, as_real_array

__all__ = [
    "doctor",
    "energy",
    "entropy_from_log_probs",
    "log_softmax",
    "mls",
    "msr",
    "msr_from_log_probs",
    "pe",
]


def log_softmax(logits: ArrayLike, axis: int = -1) -> np.ndarray:
    """Stable float64 log-softmax, ``z - logsumexp(z)`` along ``axis``."""
    from scipy.special import log_softmax as _log_softmax

    return _log_softmax(as_real_array(logits, "logits"), axis=axis)


def entropy_from_log_probs(log_probs: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy ``-Σ_c p_c log p_c`` (nats) from finite log-probabilities."""
    return -np.sum(np.exp(log_probs) * log_probs, axis=axis)


def msr_from_log_probs(log_probs: np.ndarray) -> np.ndarray:
    """``max_c p_c`` of N × K log-probabilities, ``exp(max_c log p_c)``."""
    return np.exp(np.max(log_probs, axis=1))


def msr(logits: ArrayLike) -> np.ndarray:
    """Maximum softmax response, ``max_c softmax(z)_c`` in (0, 1].

    Hendrycks & Gimpel, "A baseline for detecting misclassified and out-of-distribution
    examples", ICLR 2017.
    """
    return msr_from_log_probs(log_softmax(as_float_array(logits, "logits", 2)))


def mls(logits: ArrayLike) -> np.ndarray:
    """Maximum logit score, ``max_c z_c``.

    Hendrycks et al., "Scaling out-of-distribution detection for real-world settings", ICML 2022.
    """
    return np.max(as_float_array(logits, "logits", 2), axis=1)


def pe(logits: ArrayLike) -> np.ndarray:
    """Negated predictive entropy, ``Σ_c p_c log p_c`` with ``p = softmax(z)`` (in [-log K, 0]).

    The entropy of the predictive distribution (e.g. Malinin & Gales, NeurIPS 2018), negated so
    that higher means more confident.
    """
    z = as_float_array(logits, "logits", 2)
    return -entropy_from_log_probs(log_softmax(z), axis=1)


def energy(logits: ArrayLike) -> np.ndarray:
    """Negative energy at temperature 1, ``logsumexp_c z_c``.

    Liu et al., "Energy-based out-of-distribution detection", NeurIPS 2020 (score = -E(x)).
    """
    from scipy.special import logsumexp

    return logsumexp(as_float_array(logits, "logits", 2), axis=1)


def doctor(logits: ArrayLike) -> np.ndarray:
    """DOCTOR D_alpha confidence, ``-(1 - Σ_c p_c²) / Σ_c p_c² = 1 - 1/Σ_c p_c²`` in [1-K, 0].

    Granese et al., "DOCTOR: A simple method for detecting misclassification errors", NeurIPS
    2021: the Gini impurity g(x) = 1 - Σ p_c² rejects when g / (1 - g) > γ; the confidence is the
    negated ratio, a monotone transform of Σ p_c². With u = z - max z, S1 = Σ e^u and
    S2 = Σ e^{2u}, ``log Σ p_c² = log1p(S2 - 1) - 2 log1p(S1 - 1)`` where S - 1 sums the
    non-maximal terms only, and the confidence is ``-expm1(-log Σ p_c²)``: accurate even when
    1 - max p is far below float64 resolution. Temperature 1, no input perturbation (those need
    the network).
    """
    z = as_float_array(logits, "logits", 2)
    u = z - z.max(axis=1, keepdims=True)
    rows = np.arange(z.shape[0])
    top = np.argmax(z, axis=1)
    e1 = np.exp(u)
    e2 = np.exp(2.0 * u)
    e1[rows, top] = 0.0
    e2[rows, top] = 0.0
    log_sum_sq = np.log1p(e2.sum(axis=1)) - 2.0 * np.log1p(e1.sum(axis=1))
    return np.minimum(-np.expm1(-log_sum_sq), 0.0)
