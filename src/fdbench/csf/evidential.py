"""Confidence scores of Dirichlet outputs (evidential deep learning): expected MSR, K / S."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array

__all__ = ["edl_msr", "edl_uncertainty"]


def _alpha(alpha: ArrayLike) -> np.ndarray:
    array = as_float_array(alpha, "alpha", 2)
    if np.any(array <= 0):
        raise ValueError("alpha must hold positive Dirichlet parameters")
    return array


def edl_msr(alpha: ArrayLike) -> np.ndarray:
    """EDL-MSR: the largest expected class probability ``max_j α_j / S``, ``S = Σ_j α_j``.

    The mean of Dir(α) is ``p̂_j = α_j / S`` (Sensoy et al., "Evidential deep learning to
    quantify classification uncertainty", NeurIPS 2018, Section 3); its maximum is the
    maximum softmax response of the expected probabilities. ``alpha``: N × K Dirichlet
    parameters (stored head ``"edl_alpha"``).
    """
    a = _alpha(alpha)
    return a.max(axis=1) / a.sum(axis=1)


def edl_uncertainty(alpha: ArrayLike) -> np.ndarray:
    """EDL-Unc: the negated uncertainty mass ``−u = −K / S`` (Sensoy et al., NeurIPS 2018,
    Eq. 1: ``u = K / S`` with ``S = Σ_j α_j``), so that higher is more confident; Kim et al.
    (2023) score EDL's unknown detection with it. ``alpha``: N × K Dirichlet parameters
    (stored head ``"edl_alpha"``).
    """
    a = _alpha(alpha)
    return -a.shape[1] / a.sum(axis=1)
