"""The report's first section: the leaderboard of scoring methods, paired Δ forest plot, maps."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fdbench.analysis.leaderboard import ALL_STUDIES, STUDY_COLUMNS, WEIGHTING
from fdbench.analysis.scoring_methods import BASELINE
from fdbench.core.io import verify_if_recorded, write_text
from fdbench.metrics import metric_spec
from fdbench.protocol import UNKNOWN_STUDY
from fdbench.report.builder import TABLES_DIR, ReportContext, _Builder
from fdbench.report.headline import (
    REFERENCES,
    TIED,
    TIED_TEXT,
    TOP,
    headline,
    overall_ranking,
    tied_with_best,
)
from fdbench.report.ranking_filter import mark_ranking_table, scoring_method_pairs
from fdbench.report.selection import top_and_references
from fdbench.report.tables import ReportTable, _stem

#: The leaderboard's files in a run folder (written by the benchmark's analysis stage).
LEADERBOARD_FILES = {
    "summary": "leaderboard.csv",
    "ranks": "leaderboard_ranks.csv",
    "significance": "leaderboard_significance.csv",
    "deltas": "paired_deltas.csv",
}
#: Metric, heading and display scale of the leaderboard tables, AUGRC first: each metric's
#: spec (:class:`fdbench.metrics.MetricSpec`) shown as scoring-method tables show it (AURC-type
#: ×1000, fractions in per cent).
LEADERBOARD_METRICS = tuple(
    (m, metric_spec(m).heading(per_cent=True), metric_spec(m).factor(per_cent=True))
    for m in ("augrc", "aurc", "auroc_f")
)
OVERALL_RANK = "mean rank, all studies"


def read_leaderboard(run_dir: str | Path) -> dict[str, pd.DataFrame] | None:
    """The leaderboard files of ``run_dir`` (:data:`LEADERBOARD_FILES`), each verified against
    its recorded checksum where there is one; ``None`` if the summary or the ranks are absent."""

    run_dir = Path(run_dir)
    tables = {}
    for key, name in LEADERBOARD_FILES.items():
        path = run_dir / name
        if path.exists():
            tables[key] = pd.read_csv(verify_if_recorded(path, required=False))
    if "summary" not in tables or "ranks" not in tables:
        return None
    return tables


def _columns(frame: pd.DataFrame) -> list[str]:
    present = set(frame["study"])
    return [c for c in STUDY_COLUMNS if c in present] + sorted(
        c for c in present if c not in STUDY_COLUMNS and c != ALL_STUDIES
    )


def leaderboard_frame(
    summary: pd.DataFrame, ranks: pd.DataFrame, dataset: str, metric: str = "augrc"
) -> pd.DataFrame:
    """One data set's leaderboard as shown: scoring methods (rows, best overall first) × study
    columns, each cell the mean ± std over seeds of ``metric`` (AURC/AUGRC ×1000, AUROC_f
    ×100), then the mean bootstrap rank over all studies and its 95 % interval.

    ``summary`` is :func:`fdbench.analysis.leaderboard.seed_summary` (by column), ``ranks``
    the ranks file (:func:`fdbench.analysis.leaderboard.leaderboard_ranks` with ``metric``).
    """
    scale = {m: s for m, _, s in LEADERBOARD_METRICS}.get(metric, 1.0)
    rows = summary[(summary["dataset"] == dataset) & (summary["metric"] == metric)]
    mine = ranks[(ranks["dataset"] == dataset) & (ranks["metric"] == metric)]
    overall = mine[mine["study"] == ALL_STUDIES].set_index("scoring_method")
    overall = overall.sort_values(["mean_rank"], kind="stable")
    frame = pd.DataFrame(index=pd.Index(overall.index, name="scoring method"))
    for column in _columns(rows):
        part = rows[rows["study"] == column].set_index("scoring_method")
        text = [
            _mean_std(part["mean"].get(name), part["std"].get(name), scale) for name in frame.index
        ]
        frame[column] = text
    frame[OVERALL_RANK] = overall["mean_rank"].to_numpy(np.float64)
    frame["95 % rank interval"] = [
        f"[{lo:.1f}, {hi:.1f}]" if np.isfinite(lo) else "–"
        for lo, hi in zip(overall["rank_lower"], overall["rank_upper"], strict=True)
    ]
    return frame


def leaderboard_numbers(
    summary: pd.DataFrame, ranks: pd.DataFrame, dataset: str, metric: str = "augrc"
) -> pd.DataFrame:
    """:func:`leaderboard_frame` as full-precision numbers (the exported CSV): per study column
    the seed mean and standard deviation of ``metric`` as computed (not scaled), then the mean
    bootstrap rank over all studies and its 95 % interval; rows in the leaderboard's order."""
    rows = summary[(summary["dataset"] == dataset) & (summary["metric"] == metric)]
    overall = overall_ranking(ranks, dataset, metric)
    frame = pd.DataFrame(index=pd.Index(overall.index, name="scoring method"))
    for column in _columns(rows):
        part = rows[rows["study"] == column].set_index("scoring_method")
        frame[f"{column} mean"] = part["mean"].reindex(frame.index).to_numpy(np.float64)
        frame[f"{column} std"] = part["std"].reindex(frame.index).to_numpy(np.float64)
    frame[OVERALL_RANK] = overall["mean_rank"].to_numpy(np.float64)
    frame["rank lower"] = overall["rank_lower"].to_numpy(np.float64)
    frame["rank upper"] = overall["rank_upper"].to_numpy(np.float64)
    return frame


def _mean_std(mean: Any, std: Any, scale: float) -> str:
    if mean is None or not np.isfinite(mean):
        return "–"
    if std is None or not np.isfinite(std):
        return f"{mean * scale:.2f}"
    return f"{mean * scale:.2f} ± {std * scale:.2f}"


def column_rank_frame(ranks: pd.DataFrame, dataset: str, metric: str) -> pd.DataFrame:
    """Scoring methods × study columns (and all studies) of mean bootstrap ranks."""
    mine = ranks[(ranks["dataset"] == dataset) & (ranks["metric"] == metric)]
    frame = mine.pivot_table(
        index="scoring_method", columns="study", values="mean_rank", sort=False
    )
    order = mine[mine["study"] == ALL_STUDIES].sort_values("mean_rank", kind="stable")
    frame = frame.loc[list(order["scoring_method"]), [*_columns(mine), ALL_STUDIES]]
    frame.index.name = "scoring method"
    frame.columns.name = None
    return frame


def forest_figure(deltas: pd.DataFrame, order: list[str], title: str) -> bytes:
    """Forest plot of paired Δ against the baseline: one panel per metric (titled with it), one
    row per scoring method (``order``, top first); the black point and bar are Δ on all studies
    and its 95 % percentile interval, the small grey points Δ of each study column."""
    from fdbench.report.plots import _grid, figure_png

    metrics = [m for m, _, _ in LEADERBOARD_METRICS if m in set(deltas["metric"])]
    fig, axes = _grid(len(metrics), columns=3, width=3.6, height=0.9 + 0.28 * len(order))
    heads = {m: (h, s) for m, h, s in LEADERBOARD_METRICS}
    y = {name: i for i, name in enumerate(order)}
    for ax, metric in zip(axes, metrics, strict=True):
        head, scale = heads[metric]
        part = deltas[(deltas["metric"] == metric) & deltas["scoring_method"].isin(order)]
        each = part[part["study"] != ALL_STUDIES]
        ax.scatter(
            scale * each["delta"], each["scoring_method"].map(y), s=9, color="#9e9e9e", zorder=2
        )
        total = part[part["study"] == ALL_STUDIES]
        pos = total["scoring_method"].map(y).to_numpy()
        ax.errorbar(
            scale * total["delta"],
            pos,
            xerr=[
                scale * (total["delta"] - total["lower"]).clip(lower=0),
                scale * (total["upper"] - total["delta"]).clip(lower=0),
            ],
            fmt="o",
            color="black",
            markersize=4,
            capsize=2,
            zorder=3,
        )
        ax.axvline(0, color="#c92a2a", lw=1)
        ax.set_yticks(range(len(order)), order, fontsize=7)
        ax.set_ylim(len(order) - 0.5, -0.5)
        ax.set_title(head, fontsize=9)
        ax.set_xlabel(f"Δ {head}", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    fig.suptitle(title, fontsize=10)
    return figure_png(fig)


def _note(datasets: list[str], columns: list[str]) -> str:
    corruption = (
        "the corruption column is the mean over the 5 pooled intensities. "
        if "corruption" in columns
        else ""
    )
    if UNKNOWN_STUDY in columns:
        corruption += (
            f"the {UNKNOWN_STUDY} column is Kim et al.'s pooled unknown-detection study "
            "(in-distribution test ∪ every near-OoD ∪ every far-OoD set, every OoD sample an "
            "error); it is shown but not ranked and enters neither the ranks nor all studies: "
            "the ranks resample the per-sample scores each study stores, and the evaluation "
            "stores none for this pooled study (only its seed values), so it has no exact "
            "bootstrap ranks. "
        )
    return (
        '<p class="note">A scoring method is a (training method, CSF) pair, named as in '
        "FD-Shifts and the AUGRC paper (DG-* of DeepGamblers, DG-Res its reservation score, "
        "ConfidNet, DeVries, ENS-* of a deep ensemble; the baseline's CSFs keep their names), "
        "each judged on its own classifier with its own configuration chosen on validation. "
        "Cells: mean ± standard deviation over seeds on the full test sets; "
        f"{corruption}Ranks: on every bootstrap resample "
        "of the test sets, drawn once per study over its unfiltered set and shared by every "
        "scoring method (each classifier then drops its own misclassified inliers on new-class "
        "studies), the seed-mean values are ranked (1 = best); the ranks are averaged over "
        f"resamples. All studies: {WEIGHTING}; the column ranks are averaged with equal weights "
        "and re-ranked on every resample. Paired Δ: the difference to the baseline "
        f"({BASELINE} of the cross-entropy classifier) on the same resamples, with its 95 % "
        "percentile interval. Significance maps: Holm-corrected one-sided Wilcoxon tests over "
        f"the paired resamples, every pair of scoring methods. Data sets: "
        f"{html.escape(', '.join(datasets))}.</p>"
    )


def selection(
    ranks: pd.DataFrame, dataset: str, metric: str = "augrc", top: int = TOP
) -> list[str]:
    """The scoring methods a figure of ``dataset`` draws when it cannot label them all: the
    ``top`` best by mean rank over all studies and the papers' references
    (:data:`fdbench.report.headline.REFERENCES`), in ranking order
    (:func:`fdbench.report.selection.top_and_references`)."""
    return top_and_references(overall_ranking(ranks, dataset, metric).index, REFERENCES, top)


def _headline_part(builder: Any, summary: pd.DataFrame, ranks: pd.DataFrame, dataset: str) -> str:
    head = headline(summary, ranks, dataset)
    shown = min(TOP, head.n_methods)
    title = (
        f"Headline by AUGRC ×1000 — {dataset}: the {shown} best of {head.n_methods} scoring "
        "methods and the papers' references (mean over seeds, lower is better)"
    )
    table = builder.table(ReportTable(_stem("headline", dataset), title, head.frame, 2, None))
    tied = ", ".join(html.escape(n) for n in head.tied)
    return (
        f'{table}<p class="note"><b>Not distinguishable from the best '
        f"({html.escape(head.best)})</b>, their 95 % bootstrap rank intervals overlapping its "
        f"own ({len(head.tied)} of {head.n_methods}): {tied}. The full ranking of every "
        "scoring method is in the collapsed block below.</p>"
    )


def leaderboard_section(
    builder: Any, run_dir: str | Path, pairs: dict[str, tuple[str, str]] | None = None
) -> str:
    """The body of the leaderboard section of the report of ``run_dir`` ("" if it has no
    leaderboard files): per data set first the headline (:func:`fdbench.report.headline.headline`),
    then, collapsed, the leaderboard tables by AUGRC, AURC and AUROC_f (every scoring method; no
    heat colours, a column marking the methods whose rank interval overlaps the best's), the
    column ranks, the forest plot of paired Δ against the baseline and the significance maps by
    AUGRC of the :func:`selection` (rows and columns in the leaderboard's order in every panel).
    ``builder`` is the report's builder (its ``table``, ``figure``, ``group`` methods). The
    leaderboard tables are sortable and filterable (:mod:`fdbench.report.ranking_filter`;
    ``pairs``: each scoring method's training method and CSF)."""
    from fdbench.report.plots import significance_figure

    tables = read_leaderboard(run_dir)
    if tables is None:
        return ""
    summary, ranks = tables["summary"], tables["ranks"]
    datasets = list(dict.fromkeys(ranks["dataset"]))
    parts = [_headline_part(builder, summary, ranks, d) for d in datasets]
    parts.append(_note(datasets, _columns(summary)))
    for dataset in datasets:
        body = []
        tied = set(tied_with_best(overall_ranking(ranks, dataset)))
        for metric, head, _ in LEADERBOARD_METRICS:
            if not ((ranks["dataset"] == dataset) & (ranks["metric"] == metric)).any():
                continue
            frame = leaderboard_frame(summary, ranks, dataset, metric)
            if metric == "augrc":
                frame[TIED] = [TIED_TEXT if n in tied else "" for n in frame.index]
            name = _stem("leaderboard", metric, dataset)
            title = f"Leaderboard by {head} — {dataset}"
            of = summary[(summary["dataset"] == dataset) & (summary["metric"] == metric)]
            studies = len(_columns(of))
            shown = builder.table(ReportTable(name, title, frame, 2, None))
            body.append(mark_ranking_table(shown, studies, pairs or {}))
            # the CSV beside the page holds the numbers, not the cells' text
            numbers = leaderboard_numbers(summary, ranks, dataset, metric)
            write_text(builder.run_dir / TABLES_DIR / f"{name}.csv", numbers.to_csv())
            if metric == "augrc":
                ranked = column_rank_frame(ranks, dataset, metric)
                title = f"Mean bootstrap rank by AUGRC per study column — {dataset}"
                body.append(
                    builder.table(
                        ReportTable(_stem("leaderboard_ranks", dataset), title, ranked, 2, False)
                    )
                )
        order = selection(ranks, dataset)
        n_methods = len(overall_ranking(ranks, dataset))
        chosen = (
            f"the {min(TOP, n_methods)} best of {n_methods} and the references"
            if len(order) < n_methods
            else "all scoring methods"
        )
        deltas = tables.get("deltas")
        if deltas is not None:
            mine = deltas[(deltas["dataset"] == dataset) & (deltas["reference"] == BASELINE)]
            if not mine.empty:
                body.append(
                    builder.figure(
                        forest_figure,
                        (mine, order, f"Paired Δ against {BASELINE} (CE), {chosen} — {dataset}"),
                        f"paired_delta_forest_{dataset}",
                        f"forest plot of paired differences against {BASELINE}",
                    )
                )
        significance = tables.get("significance")
        if significance is not None:
            mine = significance[
                (significance["dataset"] == dataset)
                & (significance["metric"] == "augrc")
                & significance["scoring_method_a"].isin(order)
                & significance["scoring_method_b"].isin(order)
            ].rename(columns={"scoring_method_a": "csf_a", "scoring_method_b": "csf_b"})
            by_rank = ranks[(ranks["dataset"] == dataset) & (ranks["metric"] == "augrc")]
            if not mine.empty:
                body.append(
                    builder.figure(
                        significance_figure,
                        (
                            mine,
                            order,
                            _columns(by_rank),
                            f"AUGRC significance maps, {chosen} — {dataset}",
                        ),
                        f"leaderboard_significance_{dataset}",
                        f"significance maps by AUGRC, {chosen}",
                    )
                )
        label = f"Full leaderboard, ranks, paired Δ and significance — {dataset}"
        parts.append(builder.group(label, "".join(body)))
    return "".join(parts)


def _leaderboard(b: _Builder, context: ReportContext) -> str:
    return leaderboard_section(
        b, b.run_dir, scoring_method_pairs(context.inputs.results, b.run_dir)
    )
