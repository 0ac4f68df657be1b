"""Report section "Studies": one block per study, its scoring methods best first."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fdbench.core.io import verify_if_recorded
from fdbench.report.builder import ReportContext, _Builder, group_anchor
from fdbench.report.sections.curves import _curve_groups
from fdbench.report.sections.leaderboard import LEADERBOARD_METRICS
from fdbench.report.tables import ReportTable, _stem

#: The per-study seed summary of a run folder (written by the benchmark's analysis stage).
STUDIES_FILE = "leaderboard_studies.csv"
#: Decimals of the study tables (as the leaderboard's: AURC/AUGRC ×1000, AUROC_f ×100).
DIGITS = 2


def read_study_summary(
    run_dir: str | Path, results: pd.DataFrame | None = None
) -> pd.DataFrame | None:
    """Mean ± std over seeds of every scoring method on every study of ``run_dir``.

    ``leaderboard_studies.csv`` (:data:`STUDIES_FILE`, verified against its recorded checksum
    where there is one) if the folder has it; else, from ``results``,
    :func:`fdbench.analysis.leaderboard.seed_summary` with ``by_column=False`` (the same
    function that writes the file; scoring methods named from the method names, since the
    configured kinds are not known), a missing or empty ``dataset``/``method`` read as "" and a
    missing ``seed`` as one seed (e.g. the results of ``fdbench evaluate``). None if neither
    gives a row. Columns: ``dataset, study, scoring_method, metric, mean, std, n_seeds``.
    """
    from fdbench.analysis.leaderboard import seed_summary

    path = Path(run_dir) / STUDIES_FILE
    if path.exists():
        summary = pd.read_csv(verify_if_recorded(path, required=False))
    elif results is not None and not results.empty:
        filled = results.assign(
            **{
                c: results[c].astype(object).fillna("").astype(str) if c in results.columns else ""
                for c in ("dataset", "method")
            }
        )
        if "seed" not in filled.columns:
            filled = filled.assign(seed=0)
        summary = seed_summary(filled, by_column=False)
    else:
        return None
    summary = summary.assign(dataset=summary["dataset"].astype(object).fillna("").astype(str))
    return summary if not summary.empty else None


def study_order(summary: pd.DataFrame) -> list[tuple[str, str]]:
    """The (dataset, study) pairs of ``summary`` in the leaderboard's order: data sets as they
    come, then the studies by their paper column
    (:data:`fdbench.analysis.leaderboard.STUDY_COLUMNS`: iid, corruption,
    sub-class, new-class semantic, new-class non-semantic; within a column as they come), then
    the studies of any other column by name."""
    from fdbench.analysis.leaderboard import STUDY_COLUMNS, study_column

    names = zip(summary["dataset"].astype(str), summary["study"].astype(str), strict=True)
    pairs = list(dict.fromkeys(names))
    datasets = list(dict.fromkeys(d for d, _ in pairs))

    def key(pair: tuple[str, str]) -> tuple[int, int, str]:
        column = study_column(pair[1]) or pair[1]
        if column in STUDY_COLUMNS:
            return datasets.index(pair[0]), STUDY_COLUMNS.index(column), ""
        return datasets.index(pair[0]), len(STUDY_COLUMNS), column

    return sorted(pairs, key=key)


def study_table(summary: pd.DataFrame, dataset: str, study: str) -> ReportTable | None:
    """The scoring methods of one study of one data set, best first.

    Columns: the seed means of AUGRC ×1000, AURC ×1000 and AUROC_f ×100
    (:data:`fdbench.report.sections.leaderboard.LEADERBOARD_METRICS`, those present), each with
    "± std" over seeds under it; rows sorted by the first of them (AUGRC: lower is better),
    stable, missing values last; the best shown value of each column outlined
    (:meth:`ReportTable.best_cells`, each column in its own direction). None if the study has
    none of these metrics.
    """
    from fdbench.analysis import higher_is_better
    from fdbench.report.latex import format_number

    rows = summary[
        (summary["dataset"].astype(str) == dataset) & (summary["study"].astype(str) == study)
    ]
    metrics = [m for m in LEADERBOARD_METRICS if (rows["metric"] == m[0]).any()]
    if not metrics:
        return None
    names = list(
        dict.fromkeys(rows.loc[rows["metric"].isin([m for m, _, _ in metrics]), "scoring_method"])
    )
    index = pd.Index(names, name="scoring method")
    means = pd.DataFrame(index=index)
    spread = pd.DataFrame(index=index)
    for metric, head, scale in metrics:
        part = rows[rows["metric"] == metric].set_index("scoring_method")
        means[head] = part["mean"].reindex(names).to_numpy(np.float64) * scale
        std = part["std"].reindex(names).to_numpy(np.float64) * scale
        spread[head] = [f"± {format_number(s, DIGITS)}" if np.isfinite(s) else "" for s in std]
    first = metrics[0]
    order = means.sort_values(
        first[1], ascending=not higher_is_better(first[0]), kind="stable", na_position="last"
    ).index
    where = f"{study} — {dataset}" if dataset else study
    title = f"Scoring methods on {where}, best first by {first[1]}: mean ± std over "
    return ReportTable(
        _stem("study", dataset, study),
        title + _seeds(rows),
        means.loc[order],
        DIGITS,
        tuple(higher_is_better(m) for m, _, _ in metrics),
        spread.loc[order],
    )


def _seeds(rows: pd.DataFrame) -> str:
    """How many seeds the means of ``rows`` average: "3 seeds", or "1-2 seeds per scoring
    method (no ± where one)" where the scoring methods have different numbers; rows of no
    seed (no value) are not counted."""
    if "n_seeds" not in rows.columns:
        return "seeds"
    counted = rows["n_seeds"][rows["n_seeds"] > 0]
    if counted.empty:
        return "seeds"
    low, high = int(counted.min()), int(counted.max())
    if low == high:
        return f"{high} seed" + ("s" if high != 1 else "")
    return f"{low}–{high} seeds per scoring method (no ± where one)"


def _best(table: ReportTable) -> str:
    """The scoring methods outlined best in the first column of ``table`` ("" if none)."""
    rows = sorted(i for i, j in table.best_cells() if j == 0)
    return ", ".join(str(table.frame.index[i]) for i in rows)


def _note(from_file: bool) -> str:
    source = (
        f"<code>{STUDIES_FILE}</code>"
        if from_file
        else "the results (this folder has no leaderboard files: the scoring methods are named "
        "from the method names)"
    )
    return (
        '<p class="note">Which scoring method is best where: one block per test study (every '
        "study but the validation split and the per-type corruption studies), in the "
        "leaderboard's order (iid, corruption, sub-class, new-class semantic, new-class "
        "non-semantic, then any other). The summary line of a block names the best scoring "
        "method by AUGRC; the block lists every scoring method best first by AUGRC: mean ± "
        "standard deviation over seeds of AUGRC ×1000 and AURC ×1000 (lower is better) and "
        "AUROC_f ×100 (higher is better), the best of each column outlined; from "
        f"{source}. The risk-coverage and generalized-risk curves of a study are in the curve "
        "figure of each training method (its lowest seed, every study side by side), linked "
        "from the block: one figure per study would make the page too heavy.</p>"
    )


def studies_section(
    builder: Any,
    summary: pd.DataFrame,
    from_file: bool,
    curve_links: Mapping[tuple[str, str], Sequence[tuple[str, str]]] | None = None,
) -> str:
    """The body of the report's "Studies" section ("" if ``summary`` has no study with a
    leaderboard metric): per (dataset, study) of :func:`study_order` a collapsed block of
    :func:`study_table`, with links to ``curve_links[(dataset, study)]`` (anchor, label: the
    curve figures that draw the study). ``builder`` is the report's builder (its ``group`` and
    ``table`` methods); ``from_file`` says whether ``summary`` is :data:`STUDIES_FILE`."""
    curve_links = curve_links or {}
    pairs = study_order(summary)
    several = len({d for d, _ in pairs}) > 1
    parts = []
    for dataset, study in pairs:
        table = study_table(summary, dataset, study)
        if table is None:
            continue
        label = f"{dataset}: {study}" if several and dataset else study
        best = _best(table)
        head = table.frame.columns[0]
        summary_line = f"{label} — best by {head}: {best}" if best else label
        body = builder.table(table)
        links = curve_links.get((dataset, study), [])
        if links:
            anchors = ", ".join(
                f'<a href="#{html.escape(a)}">{html.escape(text)}</a>' for a, text in links
            )
            body += f'<p class="note">Risk-coverage curves of this study: {anchors}.</p>'
        parts.append(builder.group(label, body, summary_line))
    return _note(from_file) + "".join(parts) if parts else ""


def _studies(b: _Builder, context: ReportContext) -> str:
    summary = read_study_summary(b.run_dir, context.inputs.results)
    if summary is None:
        return ""
    from_file = (b.run_dir / STUDIES_FILE).exists()
    return studies_section(b, summary, from_file, _curve_links(context))


def _curve_links(context: ReportContext) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """For every (dataset, study) the blocks of the curves section whose figure draws it:
    (anchor, label); the section itself where it has no blocks (no dataset or method)."""
    curves = context.inputs.curves
    if curves is None or curves.empty:
        return {}
    links: dict[tuple[str, str], list[tuple[str, str]]] = {}
    groups = _curve_groups(curves, context.curve_csfs, context.inputs.results)
    for label, part, *_ in groups:
        dataset = ""
        if "dataset" in part.columns:
            dataset = str(part["dataset"].astype(object).fillna("").iloc[0])
        anchor = group_anchor("curves", label) if label else "curves"
        for study in dict.fromkeys(part["study"].astype(str)):
            links.setdefault((dataset, study), []).append((anchor, label or "all studies"))
    return links
