"""GEN: the generalized entropy of the M largest softmax probabilities (Liu et al., CVPR 2023)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_array
from ..softmax import log_softmax
from ._base import PostHocInputs, register_posthoc

__all__ = ["gen"]


def gen(logits: ArrayLike, gamma: float = 0.1, m: int = 100) -> np.ndarray:
    """GEN, ``−Σ_{j ≤ M} p_(j)^γ (1 − p_(j))^γ`` over the ``M`` largest softmax probabilities
    ``p_(1) ≥ p_(2) ≥ …`` (all K where M ≥ K).

    Liu, Lochman & Zach, "GEN: Pushing the Limits of Softmax-Based Out-of-Distribution
    Detection", CVPR 2023, Eq. (6); OpenOOD ``openood/postprocessors/gen_postprocessor.py``
    (``generalized_entropy``: ``sort(probs)[:, -M:]``), whose sweep ``configs/postprocessors/
    gen.yml`` is the default grid.
    """
    z = as_float_array(logits, "logits", 2)
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0, got {gamma!r}")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be a positive int, got {m!r}")
    p = np.sort(np.exp(log_softmax(z)), axis=1)[:, -int(m) :]
    return -np.sum(p**gamma * (1.0 - p) ** gamma, axis=1)


@register_posthoc(
    "GEN",
    reads=("logits",),
    grid={"gamma": (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0), "m": (10, 50, 100, 200, 500, 1000)},
    source="Liu et al. CVPR 2023 Eq. 6; OpenOOD gen_postprocessor.py",
    colour="#117733",
)
def _gen(inputs: PostHocInputs, split: str, *, gamma: float, m: int) -> np.ndarray:
    return gen(inputs.logits(split), gamma, m)
