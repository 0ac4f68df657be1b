"""Aggregation of the tidy results table over training runs (seeds)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from fdbench.analysis._validation import require_columns

RUN_COLUMNS = ("dataset", "method", "csf", "study", "metric")


def aggregate_seeds(results: pd.DataFrame, *, by: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean, standard deviation (ddof = 1) and count of ``value`` over seeds.

    ``results`` is the tidy results table (``dataset, method, seed, csf, study, metric, value``).
    Rows are grouped by ``by`` (default: every column of ``RUN_COLUMNS`` the table has, plus any
    extra non-numeric key column such as a hyper-parameter), so each group holds the runs of one
    configuration. The standard deviation of a single run is NaN.

    Returns a DataFrame with the group columns and ``mean``, ``std``, ``n``.
    """
    require_columns(results, ("metric", "value"), "results")
    if by is None:
        skip = {"seed", "value", "resample", "n_samples", "std", "ci_lower", "ci_upper"}
        by = [c for c in results.columns if c not in skip]
    else:
        require_columns(results, by, "results")
    grouped = results.groupby(list(by), sort=False, dropna=False)["value"]
    out = grouped.agg(mean="mean", std="std", n="count").reset_index()
    out["n"] = out["n"].astype("int64")
    return out
