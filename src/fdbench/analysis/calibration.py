"""Calibration of CSFs: reliability-diagram bins and ECE of (Platt-)scaled confidences per study."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike


def reliability_bins(
    residuals: ArrayLike, confidence: ArrayLike, *, n_bins: int = 15
) -> pd.DataFrame:
    """Reliability-diagram data of confidences in [0, 1] against 0/1 failure labels.

    M = ``n_bins`` equal-width bins, bin j holding (j−1)/M < c <= j/M with the first bin closed at
    0 (the binning of ``fdbench.metrics.ece``, Guo et al., ICML 2017). For every bin: its edges,
    the number of samples, their mean confidence and their accuracy (share of residual 0); empty
    bins have NaN means. ECE = Σ_j count_j/N·|accuracy_j − confidence_j|.

    Returns columns ``bin, lower, upper, count, confidence, accuracy``.
    """
    r = np.asarray(residuals, dtype=np.float64)
    c = np.asarray(confidence, dtype=np.float64)
    if r.ndim != 1 or c.shape != r.shape or r.size == 0:
        raise ValueError("residuals and confidence must be non-empty 1-D arrays of one length")
    if not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive int; got {n_bins!r}")
    if not np.isfinite(c).all() or (c < 0).any() or (c > 1).any():
        raise ValueError("confidence must lie in [0, 1]; Platt-scale a CSF first")
    if not np.isin(r, (0.0, 1.0)).all():
        raise ValueError("residuals must be 0/1 failure labels")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    index = np.clip(np.searchsorted(edges, c, side="left") - 1, 0, n_bins - 1)
    count = np.bincount(index, minlength=n_bins).astype(np.float64)
    conf_sum = np.bincount(index, weights=c, minlength=n_bins)
    correct_sum = np.bincount(index, weights=1.0 - r, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(count > 0, conf_sum / count, np.nan)
        accuracy = np.where(count > 0, correct_sum / count, np.nan)
    return pd.DataFrame(
        {
            "bin": np.arange(n_bins),
            "lower": edges[:-1],
            "upper": edges[1:],
            "count": count.astype(np.int64),
            "confidence": mean_conf,
            "accuracy": accuracy,
        }
    )


def expected_calibration_error(bins: pd.DataFrame) -> float:
    """ECE from :func:`reliability_bins` output: Σ_j |B_j|/N·|acc(B_j) − conf(B_j)|."""
    filled = bins[bins["count"] > 0]
    weights = filled["count"] / filled["count"].sum()
    return float((weights * (filled["accuracy"] - filled["confidence"]).abs()).sum())


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
    are not probabilities; ``fdbench.csf.scaling``). Scaling is the caller's step, so any
    calibrator can be compared.

    Returns ``(ece, reliability)``: ``ece`` has columns ``study, csf, metric ('ece'), value``,
    ``reliability`` the :func:`reliability_bins` columns plus ``study, csf``.
    """
    missing = [s for s in scaled_confidences if s not in residuals]
    if missing:
        raise ValueError(f"scaled_confidences has studies without residuals: {missing}")
    ece_rows, frames = [], []
    for study, per_csf in scaled_confidences.items():
        for csf, conf in per_csf.items():
            bins = reliability_bins(residuals[study], conf, n_bins=n_bins)
            ece_rows.append(
                {
                    "study": study,
                    "csf": csf,
                    "metric": "ece",
                    "value": expected_calibration_error(bins),
                }
            )
            bins.insert(0, "csf", csf)
            bins.insert(0, "study", study)
            frames.append(bins)
    if not frames:
        raise ValueError("scaled_confidences holds no CSF")
    return pd.DataFrame(ece_rows), pd.concat(frames, ignore_index=True)
