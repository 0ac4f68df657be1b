"""Risk-coverage curves of several CSFs as one table, for the report's curve plots."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

CURVE_COLUMNS = ("study", "csf", "coverage", "selective_risk", "generalized_risk")


def curve_table(
    residuals: ArrayLike,
    confidences: Mapping[str, ArrayLike],
    *,
    study: str,
    max_points: int = 2000,
    sample_weight: ArrayLike | None = None,
) -> pd.DataFrame:
    """Risk-coverage and generalized-risk curves of every CSF on one study.

    Each curve is ``fdbench.metrics.risk_coverage_curve`` (selective and generalized risk over
    coverage, end point at coverage 0 included). Curves with more than ``max_points`` points
    are thinned to evenly spaced points keeping both ends, for plotting only. ``sample_weight``
    weighs the samples as in the curve.

    Returns columns ``CURVE_COLUMNS``; stored in a run folder as ``curves.parquet``.
    """
    from fdbench import metrics as M

    if not isinstance(max_points, int) or max_points < 2:
        raise ValueError(f"max_points must be an int >= 2; got {max_points!r}")
    frames = []
    for csf, conf in confidences.items():
        curve = M.risk_coverage_curve(residuals, conf, sample_weight=sample_weight)
        size = curve.coverages.size
        keep = np.unique(np.linspace(0, size - 1, min(size, max_points)).round().astype(int))
        frames.append(
            pd.DataFrame(
                {
                    "study": study,
                    "csf": csf,
                    "coverage": curve.coverages[keep],
                    "selective_risk": curve.selective_risks[keep],
                    "generalized_risk": curve.generalized_risks[keep],
                }
            )
        )
    if not frames:
        raise ValueError("confidences holds no CSF")
    return pd.concat(frames, ignore_index=True)
