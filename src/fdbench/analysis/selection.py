"""Metric-specific model selection on the validation split (Traub et al. 2024, FD-Shifts)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from fdbench.analysis._validation import metric_rows, present, require_columns
from fdbench.analysis.directions import higher_is_better

SELECTION_GROUPS = ("dataset", "method", "csf")


def best_configs(
    results: pd.DataFrame,
    metric: str,
    *,
    config_columns: Sequence[str],
    split_column: str = "study",
    val_split: str = "val",
    by: Sequence[str] = SELECTION_GROUPS,
) -> pd.DataFrame:
    """Pick, per group (default: dataset × method × CSF), the configuration best on validation.

    A configuration is one combination of the hyper-parameter columns ``config_columns`` (e.g.
    dropout rate, reward of DeepGamblers). Its validation score is the mean over seeds of
    ``metric`` on the rows whose ``split_column`` equals ``val_split``; the best score by the
    metric's direction wins, ties going to the first configuration in sorted order. Selecting by
    the metric that is reported (e.g. AUGRC rather than accuracy) is the metric-specific model
    selection of Traub et al. (NeurIPS 2024).

    Returns the ``by`` columns present, the ``config_columns`` and ``val_value``.
    """
    if isinstance(config_columns, str) or not config_columns:
        raise ValueError("config_columns must be a non-empty sequence of column names")
    require_columns(results, (*config_columns, split_column), "results")
    rows = metric_rows(results, metric, "results")
    val = rows[rows[split_column] == val_split]
    if val.empty:
        raise ValueError(f"results has no {split_column} == {val_split!r} rows for {metric!r}")
    keys = present(by, val)
    scores = val.groupby([*keys, *config_columns], sort=True)["value"].mean().reset_index()
    order = [True] * len(keys) + [not higher_is_better(metric)] + [True] * len(config_columns)
    scores = scores.sort_values([*keys, "value", *config_columns], ascending=order, kind="stable")
    chosen = scores.groupby(keys, sort=True).head(1) if keys else scores.head(1)
    return chosen.rename(columns={"value": "val_value"}).reset_index(drop=True)


def select_models(
    results: pd.DataFrame,
    metric: str,
    *,
    config_columns: Sequence[str],
    split_column: str = "study",
    val_split: str = "val",
    by: Sequence[str] = SELECTION_GROUPS,
) -> pd.DataFrame:
    """The test rows (every metric, every non-validation split) of the configurations chosen by
    :func:`best_configs`, one configuration per group."""
    chosen = best_configs(
        results,
        metric,
        config_columns=config_columns,
        split_column=split_column,
        val_split=val_split,
        by=by,
    )
    keys = [*present(by, chosen), *config_columns]
    test = results[results[split_column] != val_split]
    return test.merge(chosen[keys], on=keys, how="inner").reset_index(drop=True)
