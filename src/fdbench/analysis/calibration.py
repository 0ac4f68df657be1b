"""Calibration of CSFs per study: ECE and reliability-diagram tables of scaled confidences."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fdbench.core.validation import as_real_array

if TYPE_CHECKING:
    from fdbench.csf import PlattScaling

#: ECE bins of FD-Shifts' calibration analysis (``Analysis.calibration_bins`` in
#: fd_shifts/analysis/__init__.py), used for its Table 10.
FD_SHIFTS_CALIBRATION_BINS = 20

#: Share of the validation confidences whose Platt-mapped spread decides a collapse (the
#: central 95 %).
_CENTRAL = (0.025, 0.975)


def calibration_treatment(csf: str) -> str:
    """How CSF ``csf`` is made a probability before its ECE is measured (FD-Shifts' Table 10).

    ``"platt"``: Platt scaling fitted on the validation split (range beyond [0, 1]);
    ``"temperature"``: TEMP-MLS, already the temperature-scaled softmax, used as it is;
    ``"none"``: a probability already (MSR, MCD-MSR, ENS-MSR, the learned heads), used as it is.
    The treatment is the ``calibration`` field of the CSF's spec (:class:`fdbench.csf.CSFSpec`,
    plug-ins included); see :mod:`fdbench.csf.registry` and docs/csf.md for the rule and its
    source. ``ValueError`` for a name that is no registered CSF.
    """
    from fdbench.csf import csf_spec

    return csf_spec(csf).calibration


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


def platt_collapsed(platt: PlattScaling, val_confidence: ArrayLike, *, n_bins: int) -> bool:
    """Whether a fitted Platt map has collapsed: slope ≈ 0 relative to the confidence spread.

    True when the map sends the central 95 % of the validation confidences (2.5 % to 97.5 %
    quantiles) into an interval narrower than one ECE bin (1 / ``n_bins``): the fit then gives
    nearly every sample the same probability, and its ECE only measures how close that one value
    is to the accuracy. ``platt`` is a ``fdbench.csf.PlattScaling``.
    """
    c = as_real_array(val_confidence, "val_confidence")
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"val_confidence must be a non-empty 1-D array, got shape {c.shape}")
    low, high = platt(np.quantile(c, _CENTRAL))
    return bool(abs(high - low) < 1.0 / n_bins)


def csf_calibration(
    val_residuals: ArrayLike,
    val_confidences: Mapping[str, ArrayLike],
    residuals: Mapping[str, ArrayLike],
    confidences: Mapping[str, Mapping[str, ArrayLike]],
    *,
    n_bins: int = FD_SHIFTS_CALIBRATION_BINS,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ECE and reliability diagrams of every CSF of one run per study, as FD-Shifts' Table 10.

    Each CSF is treated by :func:`calibration_treatment`: ``"platt"`` CSFs are mapped by
    ``fdbench.csf.fit_platt`` (c ↦ σ(a·c + b)) fitted to the correctness of the validation
    split (``val_residuals`` = 0/1 failures, ``val_confidences[csf]``); the others (MSR-like
    probabilities, TEMP-MLS) are measured as they are, which needs values in [0, 1]. The ECE is
    ``fdbench.metrics.ece`` with ``n_bins`` bins (FD-Shifts: 20) on every study
    (``residuals[study]``, ``confidences[study][csf]``). CSFs to be Platt-scaled without
    validation confidences are skipped. Source: Jaeger et al., ICLR 2023, Table 10;
    fd_shifts/analysis/__init__.py (``PlattScaling``, ``TemperatureScaling``).

    Returns ``(ece, reliability)`` as :func:`calibration_analysis` with two more columns:
    ``treatment`` and ``platt_collapsed`` (a Platt fit that collapsed, :func:`platt_collapsed`,
    or a Platt-scaled study whose samples all fall into one bin; never True for other CSFs).
    """
    from fdbench.csf import fit_platt

    correct = 1.0 - as_real_array(val_residuals, "val_residuals")
    treatment = {
        csf: calibration_treatment(csf) for per_csf in confidences.values() for csf in per_csf
    }
    maps, collapsed = {}, {}
    for csf, kind in treatment.items():
        if kind == "platt" and csf in val_confidences:
            maps[csf] = fit_platt(val_confidences[csf], correct)
            collapsed[csf] = platt_collapsed(maps[csf], val_confidences[csf], n_bins=n_bins)
    scaled = {
        study: {
            csf: maps[csf](conf) if treatment[csf] == "platt" else conf
            for csf, conf in per_csf.items()
            if treatment[csf] != "platt" or csf in maps
        }
        for study, per_csf in confidences.items()
    }
    ece, reliability = calibration_analysis(residuals, scaled, n_bins=n_bins)
    filled = reliability[reliability["count"] > 0].groupby(["study", "csf"], sort=False).size()

    def flags(table: pd.DataFrame) -> pd.DataFrame:
        kinds = table["csf"].map(treatment)
        one_bin = pd.Series(
            [filled.get((s, c), 0) <= 1 for s, c in zip(table["study"], table["csf"], strict=True)],
            index=table.index,
        )
        fit = table["csf"].map(lambda c: collapsed.get(c, False)).astype(bool)
        return table.assign(treatment=kinds, platt_collapsed=(kinds == "platt") & (fit | one_bin))

    return flags(ece), flags(reliability)


def mean_calibration(ece: pd.DataFrame) -> pd.DataFrame:
    """Mean ECE over runs, as FD-Shifts reports it (Table 10: "averaged over 5 runs").

    ``ece`` holds the :func:`csf_calibration` ECE rows of several runs (columns ``csf, study,
    value, platt_collapsed``, and ``treatment``, ``dataset``, ``method`` where present; one row per
    run). Returns one row per (dataset, method,) csf and study, in first-seen order: ``value``
    (mean over runs), ``n_runs``, ``treatment`` and ``platt_collapsed`` (True where the fit of
    any run collapsed). FD-Shifts' reporting averages the per-run values
    (fd_shifts/reporting/tables.py, ``aggregate_over_runs``).
    """
    from fdbench.analysis._validation import require_columns

    require_columns(ece, ("csf", "study", "value", "platt_collapsed"), "ece")
    keys = [c for c in ("dataset", "method") if c in ece.columns] + ["csf", "study"]
    grouped = ece.groupby(keys, sort=False)
    out = grouped.agg(
        value=("value", "mean"),
        n_runs=("value", "size"),
        platt_collapsed=("platt_collapsed", "any"),
    )
    if "treatment" in ece.columns:
        out.insert(0, "treatment", grouped["treatment"].first())
    return out.reset_index()
