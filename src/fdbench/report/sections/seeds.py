"""The report form of the medical testbed (Bernhardt et al., TMLR 2022): seed box plots, Table 2.

Figures 4-6 of the paper show, per data set, each confidence score's failure ROC-AUC and
FPR@80TPR as box plots over the five training seeds (ensembles: over their member
combinations); Table 2 lists the classification performance, ROC-AUC for the binary tasks and
accuracy for the multi-class ones, as mean (std) over the seeds. AURC and AUGRC are added to
the box plots here.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd

from fdbench.analysis._validation import require_columns
from fdbench.report.builder import ReportContext, _Builder
from fdbench.report.selection import top_and_references
from fdbench.report.tables import (
    plain_table,
)

__all__ = [
    "BOX_METRICS",
    "BOX_TOP",
    "box_selection",
    "classification_performance",
    "score_rows",
    "score_table",
    "seed_boxplot_figure",
]

#: The metrics of the box plots: the paper's two, then AURC and AUGRC.
BOX_METRICS: tuple[str, ...] = ("auroc_f", "fpr@80tpr", "aurc", "augrc")
_LABELS = {
    "auroc_f": "failure ROC-AUC ↑",
    "fpr@80tpr": "FPR@80TPR ↓",
    "aurc": "AURC ↓",
    "augrc": "AUGRC ↓",
}
#: The most boxes a panel draws besides the baseline: more scores than this are a selection
#: (the best by seed-mean AUGRC and the baseline), every score in :func:`score_table`.
BOX_TOP = 10
#: The metric that ranks the scores of a selection (the first of these the rows hold).
_RANKING = ("augrc", "aurc", "auroc_f", "fpr@80tpr")
#: The CSF whose rows measure the classifier of each prediction group.
_CLASSIFIER_CSF = {"network": "MSR", "MC dropout": "MCD-MSR", "ensemble": "ENS-MSR"}


def _failure_rows(results: pd.DataFrame, study: str) -> pd.DataFrame:
    require_columns(
        results, ("dataset", "method", "seed", "csf", "study", "metric", "value"), "results"
    )
    rows = results[results["study"] == study]
    if "protocol" in rows.columns:
        rows = rows[rows["protocol"] == "failure_detection"]
    return rows


def score_rows(results: pd.DataFrame, *, study: str = "iid") -> pd.DataFrame:
    """The rows of :data:`BOX_METRICS` on ``study`` with a ``score`` column naming each
    confidence score: the CSF, with the method in brackets where two methods share a CSF name
    (e.g. ``MSR (ce)`` and ``MSR (confidnet)``)."""
    rows = _failure_rows(results, study)
    rows = rows[rows["metric"].isin(BOX_METRICS)].copy()
    methods_per_csf = rows.groupby("csf")["method"].nunique()
    shared = set(methods_per_csf[methods_per_csf > 1].index)
    rows["score"] = [
        f"{csf} ({method})" if csf in shared else str(csf)
        for csf, method in zip(rows["csf"], rows["method"], strict=True)
    ]
    return rows


def _ranking(rows: pd.DataFrame) -> tuple[str, list[str]]:
    """The metric that ranks the scores of ``rows`` (:data:`_RANKING`) and the scores, best
    seed mean first (ties in first-seen order)."""
    from fdbench.metrics import metric_spec

    metric = next((m for m in _RANKING if (rows["metric"] == m).any()), None)
    if metric is None:
        raise ValueError("rows: no box-plot metric to rank the scores by")
    part = rows[rows["metric"] == metric]
    means = part.groupby("score", sort=False)["value"].mean()
    if metric_spec(metric).higher_is_better:
        means = -means
    return metric, [str(s) for s in means.sort_values(kind="stable").index]


def box_selection(
    rows: pd.DataFrame, *, baseline: str = "MSR", top: int = BOX_TOP
) -> tuple[list[str], str]:
    """The scores a box-plot panel draws: all of them when there are at most ``top`` besides
    the baseline; otherwise the ``top`` best by seed mean of the ranking metric (AUGRC where
    the rows hold it) and every ``baseline`` score (``baseline`` or ``baseline (<method>)``),
    in ranking order. Returns the scores and the caption saying which were chosen."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top: expected a positive integer, got {top!r}")
    require_columns(rows, ("score", "metric", "value"), "rows")
    metric, ranked = _ranking(rows)
    references = [s for s in ranked if s == baseline or s.startswith(f"{baseline} (")]
    if len([s for s in ranked if s not in references]) <= top:
        return ranked, f"all {len(ranked)} scores"
    chosen = top_and_references(ranked, references, top)
    caption = (
        f"the {top} best of {len(ranked)} scores by seed-mean {_LABELS[metric].split(' ')[0]} "
        f"and the baseline {baseline}; every score in the table below"
    )
    return chosen, caption


def score_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Every score of one data set across methods: mean ± std over seeds of each metric of
    :data:`BOX_METRICS` (scaled as the metric's spec says: AURC and AUGRC ×1000), best first by
    the ranking metric (:func:`box_selection`), with the number of seeds."""
    from fdbench.metrics import metric_spec

    require_columns(rows, ("score", "metric", "value"), "rows")
    metric, ranked = _ranking(rows)
    frame = pd.DataFrame(index=pd.Index(ranked, name="score"))
    for shown in [m for m in BOX_METRICS if (rows["metric"] == m).any()]:
        scale = metric_spec(shown).scale
        digits = 2 if scale > 1 else 3
        stats = rows[rows["metric"] == shown].groupby("score")["value"].agg(["mean", "std"])
        stats = stats.reindex(ranked)
        frame[_LABELS[shown]] = [
            _mean_std(float(m) * scale, float(d) * scale, digits)
            for m, d in zip(stats["mean"], stats["std"], strict=True)
        ]
    seeds = rows[rows["metric"] == metric].groupby("score")["value"].size()
    frame["seeds"] = seeds.reindex(ranked).to_numpy()
    return frame.reset_index()


def _mean_std(mean: float, std: float, digits: int) -> str:
    if not np.isfinite(mean):
        return "–"
    if not np.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def seed_boxplot_figure(
    rows: pd.DataFrame, title: str, *, baseline: str = "MSR", order: Sequence[str] | None = None
) -> bytes:
    """PNG of one panel per metric of :data:`BOX_METRICS`: a box per score over its seeds
    (whiskers at the minimum and maximum, as the paper), the ``baseline`` score's box filled
    and its median drawn across the panel as a dashed line (the first score named
    ``baseline`` or ``baseline (<method>)``). ``rows``: :func:`score_rows` of one
    data set."""
    from fdbench.report.palette import csf_colour
    from fdbench.report.plots import _grid, figure_png

    require_columns(rows, ("score", "metric", "value"), "rows")
    scores = list(order) if order is not None else list(dict.fromkeys(rows["score"]))
    metrics = [m for m in BOX_METRICS if m in set(rows["metric"])]
    if not metrics or not scores:
        raise ValueError("rows: no box-plot metric or score to draw")
    columns = 1 if len(scores) > 12 else 2
    fig, axes = _grid(len(metrics), columns, max(4.0, 0.4 * len(scores) + 1.5), 2.8)
    base = [s for s in scores if s == baseline or s.startswith(f"{baseline} (")][:1]
    colour = csf_colour(baseline)
    for ax, metric in zip(axes, metrics, strict=True):
        part = rows[rows["metric"] == metric]
        data = [part.loc[part["score"] == s, "value"].to_numpy(dtype=float) for s in scores]
        data = [d[np.isfinite(d)] for d in data]
        boxes = ax.boxplot(data, whis=(0, 100), patch_artist=True, widths=0.6)
        for score, patch in zip(scores, boxes["boxes"], strict=True):
            patch.set_facecolor(colour if score in base else "white")
        for score, values in zip(scores, data, strict=True):
            if score in base and values.size:
                ax.axhline(float(np.median(values)), color=colour, ls="--", lw=1)
        ax.set_xticks(range(1, len(scores) + 1), scores, rotation=60, ha="right", fontsize=8)
        ax.set_title(_LABELS[metric], fontsize=9)
    fig.suptitle(f"{title} (baseline {baseline} filled, its median dashed)", fontsize=10)
    return figure_png(fig)


def classification_performance(results: pd.DataFrame, *, study: str = "iid") -> pd.DataFrame:
    """Table 2: per data set, method and classifier, ROC-AUC when the data set has ``roc_auc``
    rows (the binary protocol) and accuracy otherwise, as ``mean (std)`` over the seeds (std
    with ddof = 1, blank for one seed), with the ``metric`` shown. Classifiers: the network
    (rows of MSR), MC dropout (MCD-MSR) and the ensemble (ENS-MSR)."""
    rows = _failure_rows(results, study)
    out = []
    for dataset, part in rows.groupby("dataset", sort=False):
        metric = "roc_auc" if (part["metric"] == "roc_auc").any() else "accuracy"
        chosen = part[part["metric"] == metric]
        for classifier, csf in _CLASSIFIER_CSF.items():
            for method, values in chosen[chosen["csf"] == csf].groupby("method", sort=False):
                v = values["value"].to_numpy(dtype=float)
                std = f" ({np.std(v, ddof=1):.3f})" if v.size > 1 else ""
                out.append(
                    {
                        "dataset": dataset,
                        "method": method,
                        "classifier": classifier,
                        "metric": metric,
                        "value": f"{np.mean(v):.3f}{std}",
                        "n_seeds": int(v.size),
                    }
                )
    return pd.DataFrame(
        out, columns=["dataset", "method", "classifier", "metric", "value", "n_seeds"]
    )


def _seed_boxplot_section(b: _Builder, results: pd.DataFrame) -> str:
    note = (
        '<p class="note">The medical testbed\'s form (Bernhardt et al., TMLR 2022): per data '
        "set, each confidence score's failure ROC-AUC, FPR@80TPR, AURC and AUGRC on the iid "
        "study as box plots over the seeds (whiskers at minimum and maximum), the softmax "
        "baseline filled with its median dashed; then the classification performance of each "
        "classifier, ROC-AUC for binary tasks (binary protocol) and accuracy otherwise, mean "
        "(std) over the seeds (Table 2).</p>"
    )
    body = [note]
    for dataset, rows in score_rows(results).groupby("dataset", sort=False):
        chosen, caption = box_selection(rows)
        title = f"{dataset}: scores over seeds"
        if len(chosen) < rows["score"].nunique():
            title += f" (top {BOX_TOP} + baseline)"
        body.append(f'<p class="note">{html.escape(dataset)}: the box plots draw {caption}.</p>')
        place = {score: i for i, score in enumerate(chosen)}
        shown = rows[rows["score"].isin(chosen)]
        shown = shown.sort_values("score", key=lambda s: s.map(place), kind="stable")
        body.append(
            b.figure(seed_boxplot_figure, (shown, title), f"seed_boxplots_{dataset}", title)
        )
        body.append(
            b.table(
                plain_table(
                    score_table(rows),
                    f"scores_{dataset}",
                    f"{dataset}: every score across methods, best first",
                )
            )
        )
    table = classification_performance(results)
    if not table.empty:
        body.append(
            b.table(plain_table(table, "classification_performance", "Classification performance"))
        )
    return "".join(body)


def _seed_boxplots(b: _Builder, context: ReportContext) -> str:
    results = context.inputs.results
    if not context.seed_boxplots or results is None or results.empty:
        return ""
    return _seed_boxplot_section(b, results)
