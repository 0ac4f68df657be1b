"""Accuracy and calibration of the samples a scoring method accepts at a chosen coverage."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fdbench.metrics._validation import check_inputs, check_unit_interval

#: The coverage a deployer is assumed to run at unless told otherwise.
DEFAULT_COVERAGE = 0.8
#: ECE bins of the accepted samples (the project's default ECE, ``fdbench.metrics.ece``).
ACCEPTED_ECE_BINS = 15


def acceptance_threshold(confidence: ArrayLike, coverage: float) -> float:
    """The confidence threshold τ a deployer sets for target ``coverage`` (in (0, 1]).

    τ is the largest distinct confidence value whose coverage, the share of samples with
    confidence >= τ, is at least ``coverage``; every sample with confidence >= τ is accepted.
    Samples tied at τ are all accepted together (no order among equal confidences is used), so
    the realised coverage can exceed the target by the size of the tie. This is the operating
    point of :func:`fdbench.metrics.selective_risk_at_coverage` (METRICS.md: "the selective risk
    of the largest threshold whose coverage is >= x").
    """
    c = check_inputs(np.zeros(np.shape(confidence)), confidence, None)[1]
    x = check_unit_interval(coverage, "coverage")
    values, counts = np.unique(c, return_counts=True)
    # coverage of each distinct value as a threshold, from the largest value down; compared
    # as accepted / all in float64, as the metrics compare coverages
    reached = np.cumsum(counts[::-1]) / c.size >= x
    return float(values[::-1][np.argmax(reached)])


def accepted_calibration(
    residuals: ArrayLike,
    confidence: ArrayLike,
    coverage: float = DEFAULT_COVERAGE,
    *,
    probability: ArrayLike | None = None,
    n_bins: int = ACCEPTED_ECE_BINS,
) -> dict[str, float]:
    """What a deployer sees after thresholding a CSF at ``coverage``: accuracy and ECE of the
    accepted samples.

    Samples are accepted where ``confidence`` >= :func:`acceptance_threshold` (ties at the
    threshold all accepted, as :func:`fdbench.metrics.selective_risk_at_coverage` does, so
    ``accuracy`` = 1 − that selective risk). ``residuals`` are the 0/1 failures (1 = wrong).
    ``probability`` is the confidence reported to the deployer for each sample, whose
    calibration is measured (default: ``confidence`` itself, which must then lie in [0, 1]);
    e.g. a Platt-scaled CSF. The ECE is :func:`fdbench.metrics.ece` with ``n_bins`` equal-width
    bins over the accepted samples only.

    Returns ``threshold`` (τ), ``coverage`` (realised: accepted / all), ``n_accepted``,
    ``accuracy`` and ``ece`` of the accepted samples.
    """
    from fdbench import metrics as M

    r, c, _, _ = check_inputs(residuals, confidence, None, binary=True)
    p = c if probability is None else check_inputs(r, probability, None, binary=True)[1]
    values, accepted = _accepted(r, c, coverage)
    return {**values, "ece": M.ece(r[accepted], p[accepted], n_bins=n_bins)}


def _accepted(r: np.ndarray, c: np.ndarray, coverage: float) -> tuple[dict, np.ndarray]:
    """Threshold, realised coverage, count and accuracy of the accepted samples, and their
    mask (validated ``r``, ``c``)."""
    threshold = acceptance_threshold(c, coverage)
    accepted = c >= threshold
    values = {
        "threshold": threshold,
        "coverage": float(accepted.mean()),
        "n_accepted": int(accepted.sum()),
        "accuracy": float(1.0 - r[accepted].mean()),
    }
    return values, accepted


def accepted_calibration_table(
    val_residuals: ArrayLike | None,
    val_confidences: Mapping[str, ArrayLike],
    residuals: Mapping[str, ArrayLike],
    confidences: Mapping[str, Mapping[str, ArrayLike]],
    *,
    coverage: float = DEFAULT_COVERAGE,
    n_bins: int = ACCEPTED_ECE_BINS,
) -> pd.DataFrame:
    """:func:`accepted_calibration` of every CSF of one run on every study.

    The threshold is set on each study's own confidences (the deployer's coverage on the data
    it meets). The reported probability follows the project's calibration treatment
    (:func:`fdbench.analysis.calibration_treatment`, FD-Shifts' Table 10): a CSF that is not a
    probability is Platt-scaled (``fdbench.csf.fit_platt``) on the validation split
    (``val_residuals``, ``val_confidences[csf]``); probabilities and TEMP-MLS are used as they
    are. A CSF to be Platt-scaled without validation confidences gets ECE NaN.

    Returns one row per study and CSF: ``study, csf, treatment, target_coverage, threshold,
    coverage, n_accepted, accuracy, ece``.
    """
    from fdbench.analysis.calibration import calibration_treatment
    from fdbench.csf import fit_platt

    x = check_unit_interval(coverage, "coverage")
    maps = {}
    rows = []
    for study, per_csf in confidences.items():
        if study not in residuals:
            raise ValueError(f"confidences has study {study!r} without residuals")
        for csf, conf in per_csf.items():
            kind = calibration_treatment(csf)
            probability = None
            if kind == "platt":
                if csf not in maps and val_residuals is not None and csf in val_confidences:
                    correct = 1.0 - np.asarray(val_residuals, dtype=np.float64)
                    maps[csf] = fit_platt(val_confidences[csf], correct)
                probability = maps[csf](conf) if csf in maps else None
            if kind == "platt" and probability is None:
                r, c, _, _ = check_inputs(residuals[study], conf, None, binary=True)
                values = {**_accepted(r, c, x)[0], "ece": float("nan")}
            else:
                values = accepted_calibration(
                    residuals[study], conf, x, probability=probability, n_bins=n_bins
                )
            rows.append(
                {"study": study, "csf": csf, "treatment": kind, "target_coverage": x, **values}
            )
    return pd.DataFrame(
        rows,
        columns=[
            "study",
            "csf",
            "treatment",
            "target_coverage",
            "threshold",
            "coverage",
            "n_accepted",
            "accuracy",
            "ece",
        ],
    )
