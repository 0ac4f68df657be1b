"""The report form of the medical testbed (Bernhardt et al., TMLR 2022): seed box plots, Table 2.

Figures 4-6 of the paper show, per data set, each confidence score's failure ROC-AUC and
FPR@80TPR as box plots over the five training seeds (ensembles: over their member
combinations); Table 2 lists the classification performance, ROC-AUC for the binary tasks and
accuracy for the multi-class ones, as mean (std) over the seeds. AURC and AUGRC are added to
the box plots here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fdbench.analysis._validation import require_columns
from fdbench.report.builder import ReportContext, _Builder
from fdbench.report.tables import (
    plain_table,
)

__all__ = ["BOX_METRICS", "classification_performance", "score_rows", "seed_boxplot_figure"]

#: The metrics of the box plots: the paper's two, then AURC and AUGRC.
BOX_METRICS: tuple[str, ...] = ("auroc_f", "fpr@80tpr", "aurc", "augrc")
_LABELS = {
    "auroc_f": "failure ROC-AUC ↑",
    "fpr@80tpr": "FPR@80TPR ↓",
    "aurc": "AURC ↓",
    "augrc": "AUGRC ↓",
}
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
        title = f"{dataset}: scores over seeds"
        body.append(b.figure(seed_boxplot_figure, (rows, title), f"seed_boxplots_{dataset}", title))
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
