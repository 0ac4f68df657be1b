"""The report's tables: metric × study × CSF grids, rankings, and their CSV/LaTeX exports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fdbench.analysis.scoring_methods import ensemble_of
from fdbench.protocol import PER_TYPE_CORRUPTION, POOLED_CORRUPTION, Protocol
from fdbench.report.latex import format_number, to_booktabs

DISPLAY_METRICS = (
    ("accuracy", "Accuracy", 1.0, 4),
    ("aurc", "AURC ×1000", 1000.0, 2),
    ("augrc", "AUGRC ×1000", 1000.0, 2),
    ("auroc_f", "AUROC_f", 1.0, 4),
    ("ece", "ECE (raw confidence)", 1.0, 4),
)


@dataclass(frozen=True)
class ReportTable:
    """One table of the report: ``frame`` (index = row labels) and how to show it.

    ``higher_is_better`` says which end of each column is best: one bool for every column, a
    tuple of one bool per column (e.g. AUGRC lower, AUROC_f higher is better), or None (no heat
    map, no best mark); ``digits`` is the number of decimals in HTML and LaTeX; ``name`` is the
    file stem of the CSV/LaTeX exports; ``intervals`` (optional, the shape of ``frame``) holds
    text shown under each value in HTML, e.g. its bootstrap interval.
    """

    name: str
    title: str
    frame: pd.DataFrame
    digits: int = 4
    higher_is_better: bool | tuple[bool, ...] | None = None
    intervals: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        if isinstance(self.higher_is_better, tuple) and len(self.higher_is_better) != len(
            self.frame.columns
        ):
            raise ValueError(
                f"higher_is_better: expected one direction per column "
                f"({len(self.frame.columns)}); got {len(self.higher_is_better)}"
            )

    def higher(self, j: int) -> bool | None:
        """Whether higher values of column ``j`` are better (None: the table has no direction)."""
        if isinstance(self.higher_is_better, tuple):
            return self.higher_is_better[j]
        return self.higher_is_better

    def shown(self, j: int) -> np.ndarray:
        """Column ``j`` as numbers at the precision it is shown with (NaN where no number):
        values that print alike are alike for the best mark and the heat map."""
        values = pd.to_numeric(self.frame.iloc[:, j], errors="coerce").to_numpy(np.float64)
        return np.array(
            [float(format_number(v, self.digits)) if np.isfinite(v) else np.nan for v in values]
        )

    def varies(self, j: int) -> bool:
        """Whether column ``j`` holds at least two numbers that print differently: only such a
        column gets heat colours and a best mark."""
        values = self.shown(j)
        return np.unique(values[np.isfinite(values)]).size > 1

    def best_cells(self) -> set[tuple[int, int]]:
        """(row position, column position) of the best shown value of every column that
        :meth:`varies` (all ties)."""
        if self.higher_is_better is None:
            return set()
        cells = set()
        for j in range(self.frame.shape[1]):
            values = self.shown(j)
            if self.varies(j):
                best = np.nanmax(values) if self.higher(j) else np.nanmin(values)
                cells |= {(int(i), j) for i in np.flatnonzero(values == best)}
        return cells

    def heat(self) -> np.ndarray:
        """Per-column goodness in [0, 1] (1 = best of the column) of the shown values, rows ×
        columns array; NaN where there is no heat map or no number. A column whose values all
        print alike (it does not :meth:`varies`) gets no colours."""
        out = np.full(self.frame.shape, np.nan)
        if self.higher_is_better is None:
            return out
        for j in range(self.frame.shape[1]):
            if not self.varies(j):
                continue
            values = self.shown(j)
            low, high = np.nanmin(values), np.nanmax(values)
            scaled = (values - low) / (high - low)
            out[:, j] = scaled if self.higher(j) else 1 - scaled
        return out

    def export(self, directory: str | Path) -> tuple[Path, Path]:
        """Write ``<name>.csv`` (full precision) and ``<name>.tex`` (booktabs) to ``directory``."""
        from fdbench.core.io import write_text

        directory = Path(directory)
        csv = write_text(directory / f"{self.name}.csv", self.frame.to_csv())
        tex = write_text(
            directory / f"{self.name}.tex",
            to_booktabs(self.frame, digits=self.digits, bold=self.best_cells()),
        )
        return csv, tex


def _run_groups(table: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    keys = [c for c in ("dataset", "method") if c in table.columns]
    if not keys:
        return [("", table)]
    groups = []
    for key, part in table.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        groups.append(("/".join(str(k) for k in key if str(k)), part))
    return groups


def _stem(*parts: str) -> str:
    text = "_".join(p for p in parts if p)
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text).strip("-_")


CLASSIFIERS = {
    "logits": "network (arg-max of the logits)",
    "mcd": "MC dropout (arg-max of the mean MC softmax)",
    "ensemble": "deep ensemble (arg-max of the members' mean softmax)",
}
"""Row labels of the accuracy table: the classifier whose predictions define the failures."""

NEW_CLASS_ACCURACY = "share of retained inliers"
"""What "accuracy" is on a new-class study under the failure-detection protocol."""


def _is_failure_detection_new_class(rows: pd.DataFrame, study: str) -> bool:
    """Whether ``study`` is a new-class study (named ``new_class…``) scored under the
    failure-detection protocol (the default when ``rows`` has no ``protocol`` column)."""
    if not study.startswith("new_class"):
        return False
    if "protocol" not in rows.columns:
        return True
    protocols = set(rows.loc[rows["study"] == study, "protocol"])
    return protocols == {Protocol.FAILURE_DETECTION.value}


def classifier_accuracy(rows: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """Classifier × study table of the seed-mean accuracy of the ``accuracy`` rows ``rows`` of
    one dataset × method.

    Accuracy belongs to the classifier, not to the CSF: every CSF judged with the same
    predictions has the same accuracy. The CSFs are grouped by their classifier
    (``fdbench.evaluation.runs.csf_prediction_source``: the MC-dropout classifier for MCD-* and
    *-MCD, the network for every other CSF, the ensemble for an ``ensemble(…)`` method), and each
    classifier gets one row, labelled from ``CLASSIFIERS``. CSFs of one classifier whose
    accuracies print differently at ``digits`` decimals in some study (e.g. CSFs selected from
    different training configurations) get one row per distinct accuracy, labelled with their
    CSFs. On a new-class study scored under the failure-detection protocol (misclassified
    inliers removed, every new-class sample a failure) the column is labelled
    ``"<study> (share of retained inliers)"``: the value is the share of the evaluated samples
    that are (correctly classified) inliers, n_correct / (n_correct + n_new).
    """
    from fdbench.analysis._validation import require_columns
    from fdbench.evaluation.runs import csf_prediction_source

    require_columns(rows, ("csf", "study", "value"), "rows")
    if "metric" in rows.columns and set(rows["metric"]) - {"accuracy"}:
        raise ValueError(
            f"rows must hold accuracy rows only; got metrics {sorted(set(rows['metric']))}"
        )
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits: expected a non-negative integer, got {digits!r}")
    frame = rows.pivot_table(
        index="csf", columns="study", values="value", aggfunc="mean", sort=False
    )
    ensemble = (
        "method" in rows.columns and rows["method"].astype(str).map(ensemble_of).notna().all()
    )
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for csf, values in frame.iterrows():
        source = "ensemble" if ensemble else csf_prediction_source(str(csf))
        shown = tuple(format_number(v, digits) for v in values)
        groups.setdefault((source, shown), []).append(str(csf))
    per_source = Counter(source for source, _ in groups)
    labels = [
        CLASSIFIERS[source] + (f": {', '.join(csfs)}" if per_source[source] > 1 else "")
        for (source, _), csfs in groups.items()
    ]
    table = frame.loc[[csfs[0] for csfs in groups.values()]]
    table.index = pd.Index(labels, name="classifier")
    table.columns = [
        f"{study} ({NEW_CLASS_ACCURACY})"
        if _is_failure_detection_new_class(rows, str(study))
        else study
        for study in table.columns
    ]
    return table


def _interval_text(
    rows: pd.DataFrame, frame: pd.DataFrame, scale: float, digits: int
) -> pd.DataFrame | None:
    """``"[lower, upper]"`` per cell of ``frame`` from the ``ci_lower``/``ci_upper`` columns of
    ``rows`` (``fdbench evaluate --bootstrap``), scaled like the values; None when the rows
    carry no intervals or hold several runs per cell (an interval of one run does not describe
    a mean over seeds)."""
    columns = ("ci_lower", "ci_upper")
    if not set(columns) <= set(rows.columns) or rows[list(columns)].isna().all().all():
        return None
    if rows.groupby(["csf", "study"], sort=False).size().max() > 1:
        return None
    bounds = [
        rows.pivot_table(index="csf", columns="study", values=c, aggfunc="first", sort=False)
        .reindex(index=frame.index, columns=frame.columns)
        .to_numpy(np.float64)
        * scale
        for c in columns
    ]
    text = np.full(frame.shape, "", dtype=object)
    for (i, j), low in np.ndenumerate(bounds[0]):
        high = bounds[1][i, j]
        if np.isfinite(low) and np.isfinite(high):
            text[i, j] = f"[{format_number(low, digits)}, {format_number(high, digits)}]"
    return pd.DataFrame(text, index=frame.index, columns=frame.columns)


def metric_tables(
    results: pd.DataFrame, metrics: Sequence[tuple[str, str, float, int]] = DISPLAY_METRICS
) -> list[ReportTable]:
    """The tables of seed-mean values of every dataset/method, one per display metric.

    ``metrics`` holds (metric, title, display scale, decimals); AURC-type metrics are shown ×1000
    as in the papers. Metrics absent from ``results`` are skipped. Every metric but accuracy
    gets a CSF × study table; accuracy, shared by the CSFs of one classifier, gets a
    classifier × study table without colours (:func:`classifier_accuracy`). Results of one run
    with bootstrap intervals (``ci_lower``, ``ci_upper``: ``fdbench evaluate --bootstrap``) show
    each value's interval under it.
    """
    from fdbench.analysis import higher_is_better

    tables = []
    for label, part in _run_groups(results):
        for metric, title, scale, digits in metrics:
            rows = part[part["metric"] == metric]
            if rows.empty:
                continue
            if metric == "accuracy":
                frame = classifier_accuracy(rows.assign(value=rows["value"] * scale), digits)
                title = f"{title} per classifier" + (f" — {label}" if label else "")
                tables.append(plain_table(frame, _stem(metric, label), title, digits))
                continue
            frame = rows.pivot_table(
                index="csf", columns="study", values="value", aggfunc="mean", sort=False
            )
            frame = frame * scale
            frame.index.name = "CSF"
            frame.columns.name = None
            intervals = _interval_text(rows, frame, scale, digits)
            tables.append(
                ReportTable(
                    name=_stem(metric, label),
                    title=f"{title}"
                    + (f" — {label}" if label else "")
                    + (" [95 % bootstrap interval]" if intervals is not None else ""),
                    frame=frame,
                    digits=digits,
                    higher_is_better=higher_is_better(metric),
                    intervals=intervals,
                )
            )
    return tables


def ranking_table(ranking: pd.DataFrame, metric: str, label: str = "") -> ReportTable:
    """CSF × study table of bootstrap mean ranks (output of ``rank_then_aggregate``)."""
    frame = ranking.pivot_table(index="csf", columns="study", values="mean_rank", sort=False)
    frame.index.name = "CSF"
    frame.columns.name = None
    return ReportTable(
        name=_stem("rank", metric, label),
        title=f"Mean bootstrap rank by {metric.upper()}" + (f" — {label}" if label else ""),
        frame=frame,
        digits=2,
        higher_is_better=False,
    )


def plain_table(frame: pd.DataFrame, name: str, title: str, digits: int = 4) -> ReportTable:
    """A table shown as it is, without heat map (e.g. the float-precision table)."""
    return ReportTable(name=_stem(name), title=title, frame=frame, digits=digits)


#: The corruption summary of the report: FD-Shifts' "cor", the mean over the pooled levels.
CORRUPTION_SUMMARY = "cor"


def report_table(results: pd.DataFrame) -> pd.DataFrame:
    """The failure-detection rows as the report shows them, corruption shift as FD-Shifts does.

    The per-type studies ``corruption/<type>/<severity>`` (the finer view, kept in the results
    table) are left out; the pooled studies ``corruption/<severity>`` stay, and
    :data:`CORRUPTION_SUMMARY` (``"cor"``) is added: per dataset, method, seed, CSF and metric
    the mean over the pooled severity levels, as FD-Shifts' ``cor`` column
    (``fd_shifts/reporting/tables.py``, ``_aggregate_noise_studies``: the mean of the
    ``noise_study_<level>`` columns). Its ``n_samples`` is the sum over the levels; it keeps the
    ``candidate``/``params`` of its rows (one per CSF after
    :func:`fdbench.jobs.benchmark.select_candidates`). Every
    other study is kept as it is.
    """
    table = results[results["protocol"] == Protocol.FAILURE_DETECTION.value]
    table = table[~table["study"].str.match(PER_TYPE_CORRUPTION.pattern)]
    pooled = table[table["study"].str.match(POOLED_CORRUPTION.pattern)]
    keys = ["dataset", "method", "seed", "csf", "metric", "protocol", "study"]
    keys += [c for c in ("candidate", "params") if c in table.columns]
    summary = (
        pooled.assign(study=CORRUPTION_SUMMARY)
        .groupby(keys, sort=False, as_index=False)
        .agg(value=("value", "mean"), n_samples=("n_samples", "sum"))
    )
    return pd.concat([table, summary], ignore_index=True)
