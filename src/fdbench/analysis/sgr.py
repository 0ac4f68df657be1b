"""Selection with guaranteed risk (SGR): FD-Shifts' risk-excess analysis of SGR thresholds.

The thresholds themselves (:func:`sgr_threshold`, :func:`risk_upper_bound`) live in
:mod:`fdbench.metrics.operating_points`; they are re-exported here for the analysis API.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fdbench.metrics.operating_points import (
    SGRThreshold,
    risk_upper_bound,
    selective_outcome,
    sgr_threshold,
)

__all__ = ["SGRThreshold", "risk_excess", "risk_upper_bound", "selective_outcome", "sgr_threshold"]


def risk_excess(
    validation: tuple[ArrayLike, ArrayLike],
    studies: Mapping[str, tuple[ArrayLike, ArrayLike]],
    target_risks: ArrayLike,
    delta: float,
) -> pd.DataFrame:
    """FD-Shifts' risk-excess analysis of SGR thresholds under distribution shift.

    For every target risk r*, :func:`sgr_threshold` is fitted on ``validation`` = (residuals,
    confidence) and applied to every test study ``studies[name]`` = (residuals, confidence); the
    realised selective risk, coverage and the excess ``risk − r*`` are reported (Jaeger et al.,
    ICLR 2023: guarantees from i.i.d. validation data break under shift).

    Returns columns ``study, target_risk, delta, threshold, bound, val_risk, val_coverage,
    feasible, risk, coverage, excess``.
    """
    rows = []
    for target in np.atleast_1d(np.asarray(target_risks, dtype=np.float64)):
        fit = sgr_threshold(*validation, float(target), delta)
        for name, (res, conf) in studies.items():
            risk, coverage = selective_outcome(res, conf, fit.threshold)
            rows.append(
                {
                    "study": name,
                    "target_risk": float(target),
                    "delta": delta,
                    "threshold": fit.threshold,
                    "bound": fit.bound,
                    "val_risk": fit.risk,
                    "val_coverage": fit.coverage,
                    "feasible": fit.feasible,
                    "risk": risk,
                    "coverage": coverage,
                    "excess": risk - float(target),
                }
            )
    return pd.DataFrame(rows)
