"""CSFs of class probabilities used as given (no logits): MSR, PE and DOCTOR.

The CSFs defined on the softmax output are computed from the probabilities a user provides,
converted exactly to float64 and never re-normalised, so that ties (e.g. at 1.0 in a saturated
float32 softmax) stay ties. The CSFs that need logits (:data:`LOGIT_ONLY_CSFS`) cannot be
computed from probabilities and are skipped.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from fdbench.metrics.probabilities import check_probs

__all__ = ["LOGIT_ONLY_CSFS", "PROBABILITY_CSFS", "probability_csfs", "skipped_note"]

#: The CSFs computed from probabilities, in order.
PROBABILITY_CSFS: tuple[str, ...] = ("MSR", "PE", "DOCTOR")
#: Logit CSFs of ``compute_csfs`` that probabilities cannot give (a softmax drops the logits'
#: offset and scale): maximum logit, energy and the temperature-scaled maximum logit.
LOGIT_ONLY_CSFS: tuple[str, ...] = ("MLS", "energy", "TEMP-MLS")


def probability_csfs(probs: ArrayLike) -> dict[str, np.ndarray]:
    """:data:`PROBABILITY_CSFS` of ``probs`` (N × K, validated by
    :func:`fdbench.metrics.check_probs`), computed from the values as given.

    - ``MSR`` = max_c p_c (Hendrycks & Gimpel, ICLR 2017);
    - ``PE`` = Σ_c p_c log p_c, 0 log 0 = 0 (negated predictive entropy);
    - ``DOCTOR`` = 1 - 1 / Σ_c p_c² (Granese et al., NeurIPS 2021, D_alpha as a confidence).

    The same formulas as :func:`fdbench.csf.softmax.msr`, ``pe`` and ``doctor`` apply to the
    softmax of logits; here no softmax is taken.
    """
    from scipy.special import xlogy

    p = check_probs(probs)
    return {
        "MSR": p.max(axis=1),
        "PE": xlogy(p, p).sum(axis=1),
        "DOCTOR": 1.0 - 1.0 / np.einsum("ij,ij->i", p, p),
    }


def skipped_note() -> str:
    """The one-line note on the logit CSFs that probabilities cannot give."""
    return (
        f"probabilities given: {', '.join(LOGIT_ONLY_CSFS)} need logits and are skipped; "
        f"{', '.join(PROBABILITY_CSFS)} use the probabilities as given"
    )
