"""Severity curves: a metric against corruption intensity or C-OOD level, per scoring method."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from fdbench.analysis._scoring import scoring_method_labels
from fdbench.analysis._validation import metric_rows, require_columns
from fdbench.protocol import POOLED_CORRUPTION

#: A C-OOD level study of Galil et al. (ICLR 2023, App. L), ``cood/<percentile>``
#: (:func:`fdbench.data.shifts.cood.cood_studies`).
COOD_LEVEL = re.compile(r"^cood/(?P<level>\d+(?:\.\d+)?)$")
#: The families of level studies: the pooled corruption intensities and the C-OOD levels.
SEVERITY_FAMILIES = {"corruption": POOLED_CORRUPTION, "cood": COOD_LEVEL}
SEVERITY_COLUMNS = (
    "dataset",
    "family",
    "level",
    "study",
    "method",
    "scoring_method",
    "value",
    "lower",
    "upper",
    "n_seeds",
    "n_resamples",
)


def severity_level(study: str) -> tuple[str, float] | None:
    """``(family, level)`` of a level study, None for any other study.

    ``corruption/<s>`` (all corruption types pooled at intensity s, FD-Shifts' noise_study_<s>,
    :func:`fdbench.protocol.pooled_corruption_study`) is family ``"corruption"`` at level s;
    ``cood/<p>`` (a C-OOD level at severity percentile p) is family ``"cood"`` at level p.
    """
    if not isinstance(study, str):
        raise TypeError(f"study must be a str; got {type(study).__name__}")
    match = POOLED_CORRUPTION.match(study)
    if match:
        return "corruption", float(match["severity"])
    match = COOD_LEVEL.match(study)
    if match:
        return "cood", float(match["level"])
    return None


def _levels(table: pd.DataFrame) -> pd.DataFrame:
    found = {s: severity_level(s) for s in dict.fromkeys(table["study"].astype(str))}
    found = {s: v for s, v in found.items() if v is not None}
    keep = table[table["study"].isin(list(found))]
    family = keep["study"].map(lambda s: found[s][0])
    level = keep["study"].map(lambda s: found[s][1]).astype(np.float64)
    method = keep["method"].astype(str) if "method" in keep.columns else ""
    return keep.assign(
        family=family, level=level, method=method, scoring_method=scoring_method_labels(keep)
    )


def severity_curves(
    results: pd.DataFrame,
    bootstrap: pd.DataFrame | None,
    metric: str,
    *,
    confidence_level: float = 0.95,
) -> pd.DataFrame:
    """``metric`` against severity level per scoring method, with bootstrap percentile bands.

    The levels are the studies :func:`severity_level` recognises: the pooled corruption study
    of every intensity (all corruption types at that intensity, as FD-Shifts evaluates
    corruption shift: ``fd_shifts/analysis/studies.py``, one study per ``noise_study`` level)
    and the C-OOD levels. A scoring method is a (training method, CSF) pair under its paper name
    (:func:`fdbench.analysis.scoring_methods.add_scoring_method`); ``method`` is its training
    method ("" without a ``method`` column).
    ``value`` is the mean of ``metric`` over the seeds in ``results``. The band is the central
    ``confidence_level`` percentile interval (2.5 %, 97.5 % by default) over the resamples of
    ``bootstrap`` of the seed-mean value per resample, the statistic the rank-then-aggregate
    ranking uses (resamples are paired across seeds: :func:`fdbench.analysis.bootstrap_study`);
    ``lower``/``upper`` are NaN where ``bootstrap`` has no rows of that level (or is None).

    Returns one row per data set, family, level and scoring method (columns
    ``SEVERITY_COLUMNS``), sorted by data set, family, scoring method (first seen) and level.
    """
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level!r}")
    rows = metric_rows(results, metric, "results")
    require_columns(rows, ("csf", "study"), "results")
    rows = _levels(rows)
    if "dataset" not in rows.columns:
        rows = rows.assign(dataset="")
    keys = ["dataset", "family", "level", "study", "method", "scoring_method"]
    grouped = rows.groupby(keys, sort=False)
    out = grouped["value"].mean().rename("value").to_frame()
    out["n_seeds"] = grouped["seed"].nunique() if "seed" in rows.columns else 1
    out = out.reset_index()
    out["lower"] = np.nan
    out["upper"] = np.nan
    out["n_resamples"] = 0
    if bootstrap is not None and (bootstrap["metric"] == metric).any():
        band = _bands(bootstrap, metric, keys, confidence_level)
        out = out.drop(columns=["lower", "upper", "n_resamples"]).merge(
            band, on=["dataset", "study", "method", "scoring_method"], how="left"
        )
        out["n_resamples"] = out["n_resamples"].fillna(0).astype(np.int64)
    order = {m: i for i, m in enumerate(dict.fromkeys(out["scoring_method"]))}
    out = out.sort_values(
        ["dataset", "family", "scoring_method", "level"],
        key=lambda s: s.map(order) if s.name == "scoring_method" else s,
        kind="stable",
    )
    return out[list(SEVERITY_COLUMNS)].reset_index(drop=True)


def _bands(
    bootstrap: pd.DataFrame, metric: str, keys: list[str], confidence_level: float
) -> pd.DataFrame:
    rows = metric_rows(bootstrap, metric, "bootstrap")
    require_columns(rows, ("csf", "study", "resample"), "bootstrap")
    rows = _levels(rows)
    if "dataset" not in rows.columns:
        rows = rows.assign(dataset="")
    per_resample = rows.groupby([*keys, "resample"], sort=False)["value"].mean()
    tail = (1 - confidence_level) / 2
    grouped = per_resample.groupby(["dataset", "study", "method", "scoring_method"], sort=False)
    return pd.DataFrame(
        {
            "lower": grouped.quantile(tail),
            "upper": grouped.quantile(1 - tail),
            "n_resamples": grouped.size(),
        }
    ).reset_index()
