"""Deep-ensemble CSFs from the logits of several independently trained members."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array
from .mcdropout import mcd_summary

__all__ = ["ens_ee", "ens_mi", "ens_msr", "ens_pe", "stack_members"]


def stack_members(member_logits: Sequence[ArrayLike]) -> np.ndarray:
    """Stack M members' N × K logits into an N × M × K array (members on the sample axis)."""
    if len(member_logits) < 1:
        raise ValueError("member_logits must hold at least one member's logits")
    arrays = [as_float_array(z, f"member_logits[{i}]", 2) for i, z in enumerate(member_logits)]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"all members' logits must have the same shape, got {sorted(shapes)}")
    return np.stack(arrays, axis=1)


def ens_msr(member_logits: Sequence[ArrayLike]) -> np.ndarray:
    """ENS-MSR: ``max_c p̄_c`` with ``p̄`` the mean of the members' softmax outputs.

    Lakshminarayanan et al., "Simple and scalable predictive uncertainty estimation using deep
    ensembles", NeurIPS 2017.
    """
    return mcd_summary(stack_members(member_logits)).mean_probs.max(axis=1)


def ens_pe(member_logits: Sequence[ArrayLike]) -> np.ndarray:
    """ENS-PE: negated entropy of the members' mean softmax, ``-H(p̄)``."""
    return -mcd_summary(stack_members(member_logits)).predictive_entropy


def ens_ee(member_logits: Sequence[ArrayLike]) -> np.ndarray:
    """ENS-EE: negated mean of the members' softmax entropies, ``-mean_m H(p_m)``."""
    return -mcd_summary(stack_members(member_logits)).mean_entropy


def ens_mi(member_logits: Sequence[ArrayLike]) -> np.ndarray:
    """ENS-MI: negated mutual information across members, ``-(H(p̄) - mean_m H(p_m))``.

    Depeweg et al., ICML 2018; Malinin & Gales, NeurIPS 2018.
    """
    summary = mcd_summary(stack_members(member_logits))
    return summary.mean_entropy - summary.predictive_entropy
