"""The leaderboard of scoring methods: study columns, ranks, significance, paired differences."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from fdbench.analysis._validation import require_columns
from fdbench.analysis.paired import PAIRED_METRICS
from fdbench.analysis.ranking import bootstrap_ranks, overall_ranks, rank_then_aggregate
from fdbench.analysis.scoring_methods import BASELINE, add_scoring_method
from fdbench.analysis.significance import significance_matrix

__all__ = [
    "ALL_STUDIES",
    "STUDY_COLUMNS",
    "WEIGHTING",
    "column_bootstrap",
    "kim_pooled_rows",
    "leaderboard_ranks",
    "leaderboard_significance",
    "paired_delta",
    "paired_deltas",
    "seed_summary",
    "study_column",
]

#: The study columns of FD-Shifts' Table 1 and the AUGRC paper's Tables 3-4, in order.
STUDY_COLUMNS = ("iid", "corruption", "sub-class", "new-class semantic", "new-class non-semantic")
#: The name of the summary over every column.
ALL_STUDIES = "all studies"
#: How the summary weighs the studies (shown with every leaderboard).
WEIGHTING = (
    "each study column weighs the same: within a column its studies are averaged first "
    "(corruption: the 5 pooled intensities; new-class non-semantic: its data sets), so that "
    "several studies of one kind do not outweigh the others"
)
_KEYS = ("dataset", "study", "scoring_method")


def study_column(study: str) -> str | None:
    """The paper column of a study name of fdbench's studies
    (``fdbench.data.suites.fashion_mnist``).

    ``iid`` → iid; the pooled corruption studies ``corruption/<severity>`` → corruption (FD-Shifts'
    "cor", the mean over the intensities, ``fd_shifts/reporting/tables.py``,
    ``_aggregate_noise_studies``); ``subclass`` → sub-class; ``new_class/semantic`` →
    new-class semantic; any other ``new_class/<source>`` → new-class non-semantic. The
    validation split and the per-type corruption studies ``corruption/<type>/<severity>`` have
    no column (``None``); any other study is a column of its own name.
    """
    from fdbench.protocol import PER_TYPE_CORRUPTION, POOLED_CORRUPTION

    if study == "val" or PER_TYPE_CORRUPTION.fullmatch(study):
        return None
    if POOLED_CORRUPTION.fullmatch(study):
        return "corruption"
    named = {"iid": "iid", "subclass": "sub-class", "new_class/semantic": "new-class semantic"}
    if study in named:
        return named[study]
    if study.startswith("new_class/"):
        return "new-class non-semantic"
    return study


def kim_pooled_rows(results: pd.DataFrame) -> pd.Series:
    """The rows of Kim et al.'s pooled unknown-detection study that the leaderboard shows as a
    column of its own (named :data:`fdbench.protocol.UNKNOWN_STUDY`).

    Only where the results follow Kim et al.'s protocol (2023, Section 3): they hold
    unknown-detection rows of the near- or far-OoD views
    (:data:`~fdbench.protocol.NEAR_OOD_STUDY`, :data:`~fdbench.protocol.FAR_OOD_STUDY`), made
    only from splits that declare those roles (:func:`fdbench.protocol.unknown_detection_pools`).
    An FD-Shifts experiment, whose pooled study gathers its new-class studies, gets no such
    column: its leaderboard is the paper's. A boolean mask aligned with ``results``; all false
    without a ``protocol`` column.
    """
    from fdbench.protocol import FAR_OOD_STUDY, NEAR_OOD_STUDY, UNKNOWN_STUDY, Protocol

    if "protocol" not in results.columns:
        return pd.Series(False, index=results.index)
    unknown = results["protocol"] == Protocol.UNKNOWN_DETECTION.value
    if not results.loc[unknown, "study"].isin([NEAR_OOD_STUDY, FAR_OOD_STUDY]).any():
        return pd.Series(False, index=results.index)
    return unknown & (results["study"] == UNKNOWN_STUDY)


def _columns(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with ``study`` replaced by its column (rows without one dropped)."""
    columns = table["study"].map({s: study_column(s) for s in table["study"].unique()})
    return table.assign(study=columns)[columns.notna()]


def _order(columns: Sequence[str]) -> list[str]:
    known = [c for c in STUDY_COLUMNS if c in columns]
    return known + sorted(c for c in set(columns) if c not in STUDY_COLUMNS)


def seed_summary(
    results: pd.DataFrame, kinds: Mapping[str, str] | None = None, *, by_column: bool = True
) -> pd.DataFrame:
    """Mean ± standard deviation over seeds of every metric of every scoring method.

    ``results`` is the tidy results table (failure-detection rows are used where it has a
    ``protocol`` column, and under Kim et al.'s protocol the rows of the pooled study
    ``unknown``, a column of its own: :func:`kim_pooled_rows`). With ``by_column`` each seed's
    value of a paper column (:func:`study_column`) is first the mean over the column's
    studies; otherwise every study with a column keeps its own row (the validation split and
    the per-type corruption studies are left out). Returns ``dataset, study, scoring_method,
    metric, mean, std, n_seeds`` (``std`` with ddof = 1, NaN for one seed).
    """
    needed = ("dataset", "method", "seed", "csf", "study", "metric", "value")
    require_columns(results, needed, "results")
    rows = results
    if "protocol" in rows.columns:
        rows = rows[(rows["protocol"] == "failure_detection") | kim_pooled_rows(rows)]
    rows = add_scoring_method(rows, kinds)
    if by_column:
        rows = _columns(rows)
    else:
        has_column = rows["study"].map({s: study_column(s) for s in rows["study"].unique()})
        rows = rows[has_column.notna()]
    keys = ["dataset", "study", "scoring_method", "metric"]
    per_seed = rows.groupby([*keys, "seed"], sort=False)["value"].mean()
    out = per_seed.groupby(level=keys, sort=False).agg(["mean", "std", "count"]).reset_index()
    return out.rename(columns={"count": "n_seeds"})


def column_bootstrap(paired: pd.DataFrame) -> pd.DataFrame:
    """The paired bootstrap table (:func:`fdbench.analysis.paired.paired_bootstrap`) per paper
    column: on every resample, the mean of a scoring method's values over the column's studies.
    Returns the same columns, ``study`` holding the column name."""
    require_columns(paired, (*_KEYS, "metric", "resample", "value"), "paired")
    rows = _columns(paired)
    keys = [*_KEYS, "metric", "resample"]
    return rows.groupby(keys, sort=False)["value"].mean().reset_index()


def _as_csf(table: pd.DataFrame) -> pd.DataFrame:
    return table.rename(columns={"scoring_method": "csf"})


def leaderboard_ranks(columns: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rank-then-aggregate of every scoring method per data set and column, and over columns.

    On every resample the scoring methods are ranked by ``metric`` within each column of
    :func:`column_bootstrap` (:func:`fdbench.analysis.ranking.rank_then_aggregate`); the
    :data:`ALL_STUDIES` rows rank, on every resample, the mean rank over the columns (each
    column the same weight, :data:`WEIGHTING`) and summarise as
    :func:`fdbench.analysis.ranking.overall_ranks`. Returns ``dataset, study, scoring_method,
    mean_rank, std_rank, rank_lower, rank_upper, mean_value, n_resamples`` (``mean_value`` of
    the summary is the mean rank over columns).
    """
    table = _as_csf(columns)
    by = ("dataset", "study")
    per_column = rank_then_aggregate(table, metric, by=by)
    overall = overall_ranks(bootstrap_ranks(table, metric, by=by), over=("study",))
    overall.insert(1, "study", ALL_STUDIES)
    out = pd.concat([per_column, overall], ignore_index=True)
    return out.rename(columns={"csf": "scoring_method"})


def leaderboard_significance(
    columns: pd.DataFrame, metric: str, *, alpha: float = 0.05
) -> pd.DataFrame:
    """Holm-corrected one-sided Wilcoxon maps over all scoring methods of each column
    (:func:`fdbench.analysis.significance.significance_matrix` with ``by = (dataset, study)``).
    Returns ``dataset, study, scoring_method_a, scoring_method_b, p_value, p_holm,
    significant``."""
    table = significance_matrix(_as_csf(columns), metric, by=("dataset", "study"), alpha=alpha)
    return table.rename(columns={"csf_a": "scoring_method_a", "csf_b": "scoring_method_b"})


def paired_delta(
    values_a: np.ndarray, values_b: np.ndarray, confidence_level: float = 0.95
) -> tuple[np.ndarray, float, float]:
    """Paired bootstrap differences Δ = a − b and their percentile interval.

    ``values_a`` and ``values_b`` hold the metric of two scoring methods on the same resamples
    (resample i of both is one draw of the test set). Returns the per-resample Δ and the
    (1 − level)/2 and (1 + level)/2 percentiles (Efron & Tibshirani 1993, the percentile
    interval); resamples where either value is NaN are skipped; with fewer than two left the
    interval is NaN.
    """
    a = np.asarray(values_a, dtype=np.float64)
    b = np.asarray(values_b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"values_a and values_b: expected two 1-d arrays of one length, got {a.shape} and "
            f"{b.shape}"
        )
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level: expected a value in (0, 1), got {confidence_level}")
    delta = a - b
    finite = delta[~np.isnan(delta)]
    if finite.size < 2:
        return delta, float("nan"), float("nan")
    lo, hi = np.percentile(finite, [50 * (1 - confidence_level), 50 * (1 + confidence_level)])
    return delta, float(lo), float(hi)


def _row_percentiles(values: np.ndarray, q: Sequence[float]) -> np.ndarray:
    """``np.nanpercentile(values, q, axis=1)``, the rows without NaN in one vectorised call
    (NumPy takes every row on its own, in Python, once any row holds a NaN); the same
    numbers."""
    out = np.empty((len(q), values.shape[0]))
    clean = ~np.isnan(values).any(axis=1)
    if clean.any():
        out[:, clean] = np.percentile(values[clean], q, axis=1)
    if not clean.all():
        out[:, ~clean] = np.nanpercentile(values[~clean], q, axis=1)
    return out


def paired_deltas(
    columns: pd.DataFrame,
    metrics: Sequence[str] = PAIRED_METRICS,
    *,
    reference: str | None = BASELINE,
    estimates: pd.DataFrame | None = None,
    confidence_level: float = 0.95,
) -> pd.DataFrame:
    """Paired differences of every scoring method against ``reference``, per column and over
    all columns.

    ``columns`` is :func:`column_bootstrap`'s table. For each data set, column and metric, Δ =
    metric(scoring method) − metric(``reference``) on every resample (:func:`paired_delta`);
    the :data:`ALL_STUDIES` rows take, per resample, the mean of the column values (each column
    the same weight, :data:`WEIGHTING`) before differencing. ``reference=None`` compares every
    ordered pair. ``estimates`` (:func:`seed_summary` by column) gives ``delta``, the difference
    of the seed means on the full test sets (the all-studies one: the mean over columns);
    without it ``delta`` is NaN. Returns ``dataset, study, scoring_method, reference, metric,
    delta, mean_delta, lower, upper, n_resamples``.
    """
    require_columns(columns, (*_KEYS, "metric", "resample", "value"), "columns")
    rows = columns[columns["metric"].isin(metrics)]
    overall = rows.groupby(["dataset", "scoring_method", "metric", "resample"], sort=False)[
        "value"
    ].mean()
    rows = pd.concat([rows, overall.reset_index().assign(study=ALL_STUDIES)], ignore_index=True)
    point = None
    if estimates is not None:
        require_columns(estimates, (*_KEYS, "metric", "mean"), "estimates")
        est = estimates[estimates["study"].isin(rows["study"].unique())]
        total = est.groupby(["dataset", "scoring_method", "metric"], sort=False)["mean"].mean()
        est = pd.concat([est, total.reset_index().assign(study=ALL_STUDIES)], ignore_index=True)
        point = est.set_index([*_KEYS, "metric"])["mean"]
    wide = rows.pivot_table(
        index=["dataset", "study", "metric", "scoring_method"],
        columns="resample",
        values="value",
        aggfunc="first",
        dropna=False,
    )
    lo_q, hi_q = 50 * (1 - confidence_level), 50 * (1 + confidence_level)
    frames = []
    for (dataset, study, metric), part in wide.groupby(level=[0, 1, 2], sort=False):
        names = np.asarray(part.index.get_level_values("scoring_method"), dtype=object)
        values = part.to_numpy()
        if reference is None:
            a, b = np.nonzero(~np.eye(len(names), dtype=bool))
        elif reference in names:
            b = np.full(len(names), int(np.flatnonzero(names == reference)[0]))
            a = np.arange(len(names))
        else:
            continue
        delta = values[a] - values[b]
        n = np.sum(~np.isnan(delta), axis=1)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lower, upper = _row_percentiles(delta, [lo_q, hi_q])
            mean = np.nanmean(delta, axis=1)
        lower[n < 2] = upper[n < 2] = np.nan
        frame = pd.DataFrame(
            {
                "dataset": dataset,
                "study": study,
                "scoring_method": names[a],
                "reference": names[b],
                "metric": metric,
                "delta": np.nan,
                "mean_delta": mean,
                "lower": lower,
                "upper": upper,
                "n_resamples": n,
            }
        )
        if point is not None:
            own = [point.get((dataset, study, x, metric), np.nan) for x in names]
            own = np.asarray(own, dtype=np.float64)
            frame["delta"] = own[a] - own[b]
        frames.append(frame)
    if not frames:
        raise ValueError(f"columns: no scoring method named {reference!r} (reference)")
    result = pd.concat(frames, ignore_index=True)
    studies = [s for s in result["study"].unique() if s != ALL_STUDIES]
    order = {c: i for i, c in enumerate([*_order(studies), ALL_STUDIES])}
    return result.sort_values(
        ["dataset", "metric", "study"],
        key=lambda s: s.map(order) if s.name == "study" else s,
        kind="stable",
    ).reset_index(drop=True)
