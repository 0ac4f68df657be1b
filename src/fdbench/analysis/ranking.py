"""Rankings of CSFs per study and metric, and bootstrap rank-then-aggregate (Traub et al. 2024)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fdbench.analysis._validation import metric_rows, present, require_columns
from fdbench.analysis.directions import higher_is_better

GROUP_COLUMNS = ("dataset", "method", "study")


def _rank_within(values: pd.DataFrame, keys: list[str], metric: str) -> pd.Series:
    ascending = not higher_is_better(metric)
    if keys:
        return values.groupby(keys, sort=False)["value"].rank(method="average", ascending=ascending)
    return values["value"].rank(method="average", ascending=ascending)


def rank_csfs(
    results: pd.DataFrame, metric: str, *, by: Sequence[str] = GROUP_COLUMNS
) -> pd.DataFrame:
    """Rank the CSFs of each group (default: dataset × method × study) by ``metric``.

    Values are first averaged over seeds (and every other column not in ``by``), then ranked:
    rank 1 is the best CSF (the lowest value of a lower-is-better metric, the highest of a
    higher-is-better one); ties get the average of the ranks they span.

    Returns a DataFrame with the ``by`` columns present in ``results``, ``csf``, ``value`` (the
    mean) and ``rank``.
    """
    rows = metric_rows(results, metric, "results")
    require_columns(rows, ("csf",), "results")
    keys = present(by, rows)
    means = rows.groupby([*keys, "csf"], sort=False)["value"].mean().reset_index()
    means["rank"] = _rank_within(means, keys, metric)
    return means


def bootstrap_ranks(
    bootstrap: pd.DataFrame, metric: str, *, by: Sequence[str] = GROUP_COLUMNS
) -> pd.DataFrame:
    """Rank the CSFs within every bootstrap resample of every group ("rank", first step).

    ``bootstrap`` is a bootstrap table (the tidy columns plus ``resample``). For each group and
    resample, the values of a CSF are averaged over the training runs (seeds), then the CSFs are
    ranked as in :func:`rank_csfs` (average ranks for ties). This is the first half of the
    rank-then-aggregate scheme of Traub et al., "Overcoming common flaws in the evaluation of
    selective classification systems", NeurIPS 2024.

    Returns a DataFrame with the ``by`` columns present, ``resample``, ``csf``, ``value`` and
    ``rank``.
    """
    rows = metric_rows(bootstrap, metric, "bootstrap")
    require_columns(rows, ("csf", "resample"), "bootstrap")
    keys = present(by, rows)
    means = rows.groupby([*keys, "resample", "csf"], sort=True)["value"].mean().reset_index()
    means["rank"] = _rank_within(means, [*keys, "resample"], metric)
    return means


def rank_then_aggregate(
    bootstrap: pd.DataFrame, metric: str, *, by: Sequence[str] = GROUP_COLUMNS
) -> pd.DataFrame:
    """Bootstrap rank-then-aggregate: per resample rank the CSFs, then summarise the ranks.

    Implements the ranking of Traub et al. (NeurIPS 2024): the CSFs are ranked on every bootstrap
    resample (:func:`bootstrap_ranks`) and the ranks are aggregated over resamples into the mean
    rank, its standard deviation and the 2.5/97.5 % percentiles. Groups are ordered by mean rank.

    Returns a DataFrame with the ``by`` columns present, ``csf``, ``mean_rank``, ``std_rank``,
    ``rank_lower``, ``rank_upper``, ``mean_value`` and ``n_resamples``.
    """
    ranks = bootstrap_ranks(bootstrap, metric, by=by)
    keys = present(by, ranks)
    return _summarise(ranks, keys)


def overall_bootstrap_ranks(
    ranks: pd.DataFrame, *, over: Sequence[str] = ("study",)
) -> pd.DataFrame:
    """The overall ranking of every resample: mean rank across groups (e.g. studies), re-ranked.

    For each resample, a CSF's ranks in the groups named by ``over`` are averaged (``value``)
    and the averages are ranked again (rank 1 = lowest mean rank; ties get average ranks), so
    every resample yields one overall ranking. ``ranks`` is the output of
    :func:`bootstrap_ranks`. Returns the remaining key columns, ``resample``, ``csf``, ``value``
    and ``rank``.
    """
    require_columns(ranks, ("resample", "csf", "rank", *over), "ranks")
    keys = [c for c in ranks.columns if c not in {*over, "resample", "csf", "value", "rank"}]
    mean = ranks.groupby([*keys, "resample", "csf"], sort=True)["rank"].mean().reset_index()
    mean = mean.rename(columns={"rank": "value"})
    mean["rank"] = mean.groupby([*keys, "resample"], sort=False)["value"].rank(method="average")
    return mean


def overall_ranks(ranks: pd.DataFrame, *, over: Sequence[str] = ("study",)) -> pd.DataFrame:
    """Aggregate per-resample ranks across groups (e.g. studies), then over resamples.

    Every resample's overall ranking (:func:`overall_bootstrap_ranks`) is summarised as in
    :func:`rank_then_aggregate`. ``ranks`` is the output of :func:`bootstrap_ranks`.
    """
    overall = overall_bootstrap_ranks(ranks, over=over)
    keys = [c for c in overall.columns if c not in {"resample", "csf", "value", "rank"}]
    return _summarise(overall, keys)


def rank_distribution(ranks: pd.DataFrame, *, by: Sequence[str] = GROUP_COLUMNS) -> pd.DataFrame:
    """Fraction of resamples in which each CSF takes each rank.

    Ranks of tied CSFs are fractional (e.g. 1.5); they are counted as they are. ``ranks`` is the
    output of :func:`bootstrap_ranks` or :func:`overall_bootstrap_ranks`. Returns the ``by``
    columns present, ``csf``, ``rank`` and ``frequency`` (summing to 1 per group and CSF).
    """
    require_columns(ranks, ("resample", "csf", "rank"), "ranks")
    keys = present(by, ranks)
    counts = ranks.groupby([*keys, "csf", "rank"], sort=True).size().rename("count").reset_index()
    totals = counts.groupby([*keys, "csf"], sort=False)["count"].transform("sum")
    counts["frequency"] = counts["count"] / totals
    return counts.drop(columns="count")


def _summarise(ranks: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    grouped = ranks.groupby([*keys, "csf"], sort=False)
    out = grouped.agg(
        mean_rank=("rank", "mean"),
        std_rank=("rank", "std"),
        rank_lower=("rank", lambda r: float(np.percentile(r, 2.5))),
        rank_upper=("rank", lambda r: float(np.percentile(r, 97.5))),
        mean_value=("value", "mean"),
        n_resamples=("rank", "size"),
    ).reset_index()
    # one resample gives no interval (its percentiles would be a zero-width one)
    single = out["n_resamples"] < 2
    out.loc[single, ["rank_lower", "rank_upper"]] = np.nan
    return out.sort_values([*keys, "mean_rank", "csf"], kind="stable").reset_index(drop=True)
