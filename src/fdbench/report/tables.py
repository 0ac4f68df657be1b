"""The report's tables: metric × study × CSF grids, rankings, and their CSV/LaTeX exports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fdbench.report.latex import format_number, to_booktabs

DISPLAY_METRICS = (
    ("aurc", "AURC ×1000", 1000.0, 2),
    ("augrc", "AUGRC ×1000", 1000.0, 2),
    ("accuracy", "Accuracy", 1.0, 4),
    ("auroc_f", "AUROC_f", 1.0, 4),
    ("ece", "ECE (raw confidence)", 1.0, 4),
)


@dataclass(frozen=True)
class ReportTable:
    """One table of the report: ``frame`` (index = row labels) and how to show it.

    ``higher_is_better`` says which end of each column is best (None: no heat map, no best
    mark); ``digits`` is the number of decimals in HTML and LaTeX; ``name`` is the file stem of
    the CSV/LaTeX exports.
    """

    name: str
    title: str
    frame: pd.DataFrame
    digits: int = 4
    higher_is_better: bool | None = None

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
                best = np.nanmax(values) if self.higher_is_better else np.nanmin(values)
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
            out[:, j] = scaled if self.higher_is_better else 1 - scaled
        return out

    def export(self, directory: str | Path) -> tuple[Path, Path]:
        """Write ``<name>.csv`` (full precision) and ``<name>.tex`` (booktabs) to ``directory``."""
        from fdbench.io import write_text

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


def metric_tables(
    results: pd.DataFrame, metrics: Sequence[tuple[str, str, float, int]] = DISPLAY_METRICS
) -> list[ReportTable]:
    """CSF × study tables of seed-mean values, one per display metric and dataset/method.

    ``metrics`` holds (metric, title, display scale, decimals); AURC-type metrics are shown ×1000
    as in the papers. Metrics absent from ``results`` are skipped.
    """
    from fdbench.analysis import higher_is_better

    tables = []
    for label, part in _run_groups(results):
        for metric, title, scale, digits in metrics:
            rows = part[part["metric"] == metric]
            if rows.empty:
                continue
            frame = rows.pivot_table(
                index="csf", columns="study", values="value", aggfunc="mean", sort=False
            )
            frame = frame * scale
            frame.index.name = "CSF"
            frame.columns.name = None
            tables.append(
                ReportTable(
                    name=_stem(metric, label),
                    title=f"{title}" + (f" — {label}" if label else ""),
                    frame=frame,
                    digits=digits,
                    higher_is_better=higher_is_better(metric),
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
