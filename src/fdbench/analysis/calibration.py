"""Calibration of CSFs per study: ECE and reliability-diagram tables of scaled confidences."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from numpy.typing import ArrayLike


def reliability_table(
    residuals: ArrayLike, confidence: ArrayLike, *, n_bins: int = 15
) -> pd.DataFrame:
    """Reliability-diagram data as a table, from ``fdbench.metrics.reliability_bins``.

    M = ``n_bins`` equal-width bins (j−1)/M < c <= j/M, the first closed at 0 (Guo et al., ICML
    2017). Returns columns ``bin, lower, upper, count, confidence, accuracy`` (mean confidence
    and accuracy of the bin; NaN for empty bins).
    """
    from fdbench import metrics as M

    bins = M.reliability_bins(residuals, confidence, n_bins=n_bins)
    return pd.DataFrame(
        {
            "bin": range(len(bins.weights)),
            "lower": bins.edges[:-1],
            "upper": bins.edges[1:],
            "count": bins.weights,
            "confidence": bins.confidence,
            "accuracy": bins.accuracy,
        }
    )


def calibration_analysis(
    residuals: Mapping[str, ArrayLike],
    scaled_confidences: Mapping[str, Mapping[str, ArrayLike]],
    *,
    n_bins: int = 15,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ECE and reliability diagrams of every CSF on every study, after scaling on validation.

    ``residuals[study]`` holds the study's 0/1 failure labels and
    ``scaled_confidences[study][csf]`` the CSF's confidences already mapped to [0, 1] by a
    calibrator fitted on the validation split (Platt scaling, as FD-Shifts does for CSFs that
    are not probabilities: ``fdbench.csf.scaling``). Scaling is the caller's step, so this
    function works with any calibrator. ECE is ``fdbench.metrics.ece`` with ``n_bins`` bins.

    Returns ``(ece, reliability)``: ``ece`` has columns ``study, csf, metric ('ece'), value``;
    ``reliability`` the :func:`reliability_table` columns plus ``study, csf``.
    """
    from fdbench import metrics as M

    missing = [s for s in scaled_confidences if s not in residuals]
    if missing:
        raise ValueError(f"scaled_confidences has studies without residuals: {missing}")
    ece_rows, frames = [], []
    for study, per_csf in scaled_confidences.items():
        for csf, conf in per_csf.items():
            value = M.ece(residuals[study], conf, n_bins=n_bins)
            ece_rows.append({"study": study, "csf": csf, "metric": "ece", "value": value})
            bins = reliability_table(residuals[study], conf, n_bins=n_bins)
            frames.append(bins.assign(study=study, csf=csf))
    if not frames:
        raise ValueError("scaled_confidences holds no CSF")
    reliability = pd.concat(frames, ignore_index=True)
    front = ["study", "csf"]
    return pd.DataFrame(ece_rows), reliability[front + [c for c in reliability if c not in front]]


def platt_calibration(
    val_residuals: ArrayLike,
    val_confidences: Mapping[str, ArrayLike],
    residuals: Mapping[str, ArrayLike],
    confidences: Mapping[str, Mapping[str, ArrayLike]],
    *,
    n_bins: int = 15,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ECE and reliability diagrams of every CSF per study after Platt scaling on validation.

    For each CSF, ``fdbench.csf.fit_platt`` fits c ↦ σ(a·c + b) to the correctness of the
    validation split (``val_residuals`` = 0/1 failures, ``val_confidences[csf]``); the fitted
    map is applied to the CSF's confidences on every study (``confidences[study][csf]``), as in
    FD-Shifts' CSF calibration analysis, and :func:`calibration_analysis` measures the result.
    CSFs without validation confidences are skipped.
    """
    import numpy as np

    from fdbench.csf import fit_platt

    correct = 1.0 - np.asarray(val_residuals, dtype=np.float64)
    maps = {csf: fit_platt(conf, correct) for csf, conf in val_confidences.items()}
    scaled = {
        study: {csf: maps[csf](conf) for csf, conf in per_csf.items() if csf in maps}
        for study, per_csf in confidences.items()
    }
    return calibration_analysis(residuals, scaled, n_bins=n_bins)
