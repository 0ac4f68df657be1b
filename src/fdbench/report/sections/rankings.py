"""Section: rankings (rank-then-aggregate over bootstrap resamples, or by value) and
significance."""

from __future__ import annotations

import html

import pandas as pd

from fdbench.report.builder import RANKING_METRICS, ReportContext, _Builder, _select, _suffix
from fdbench.report.selection import csf_references, select
from fdbench.report.tables import (
    ReportTable,
    _run_groups,
    _stem,
    plain_table,
    ranking_table,
)


def _ranking_section(b: _Builder, bootstrap: pd.DataFrame, results: pd.DataFrame | None) -> str:
    from fdbench.analysis import (
        bootstrap_ranks,
        overall_bootstrap_ranks,
        rank_then_aggregate,
        significance_matrix,
    )
    from fdbench.analysis.ranking import GROUP_COLUMNS
    from fdbench.report.plots import rank_distribution_figure, significance_figure

    parts = [
        '<p class="note">Rank-then-aggregate over bootstrap resamples of the test sets (Traub '
        "et al., NeurIPS 2024): on every resample the CSFs are ranked by the seed-mean metric "
        "(rank 1 = best; ties share the average rank) and the ranks are averaged over "
        "resamples. <i>all studies</i>: on every resample the mean rank over the studies is "
        "ranked again, then averaged; the rank-distribution plot shows how often each CSF takes "
        "each of these overall ranks. Significance maps: cell (a, b) is dark where CSF a is "
        "better than CSF b by a one-sided Wilcoxon signed-rank test over the paired resamples, "
        "Holm-corrected over all ordered pairs of a study (α = 0.05).</p>"
    ]
    analyses = {}
    for metric in RANKING_METRICS:
        if not (bootstrap["metric"] == metric).any():
            continue
        ranks = bootstrap_ranks(bootstrap, metric)
        per_study = rank_then_aggregate(bootstrap, metric)
        significance = significance_matrix(bootstrap, metric)
        b.csv(per_study, f"rank_then_aggregate_{metric}")
        b.csv(significance, f"significance_{metric}")
        analyses[metric] = ranks, overall_bootstrap_ranks(ranks), per_study, significance
    labels = dict.fromkeys(
        label for ranks, *_ in analyses.values() for label, _ in _run_groups(ranks)
    )
    all_studies = list(bootstrap["study"].unique())
    for label in labels:
        group = []
        for metric, (ranks, overall, per_study, significance) in analyses.items():
            part = dict(_run_groups(ranks)).get(label)
            if part is None:
                continue
            summary = _select(per_study, part)
            table = ranking_table(summary, metric, label)
            studies = [s for s in all_studies if s in table.frame.columns]
            mine = _select(overall, part)
            mean_rank = mine.groupby("csf", sort=False)["rank"].mean().sort_values(kind="stable")
            order = list(mean_rank.index)
            frame = table.frame[studies].assign(**{"all studies": mean_rank})
            table = ReportTable(table.name, table.title, frame.loc[order], 2, False)
            group.append(b.table(table))
            chosen = select(
                order, csf_references(order), f"mean bootstrap rank ({metric.upper()}, all studies)"
            )
            shown = chosen.shown
            short = f", top {chosen.top} of {chosen.total} + references" if chosen.partial else ""
            if chosen.partial:
                group.append(
                    f'<p class="note">The two figures below draw {html.escape(chosen.caption())}'
                    "; every CSF is in the table above.</p>"
                )
            group.append(
                b.figure(
                    rank_distribution_figure,
                    (
                        mine[mine["csf"].isin(shown)],
                        shown,
                        f"{metric.upper()}: overall rank across {len(studies)} studies"
                        + _suffix(label)
                        + short,
                        chosen.total,
                    ),
                    f"rank_distribution_{metric}_{label}",
                    f"rank distribution by {metric}, {chosen.caption()}",
                )
            )
            keys = [c for c in GROUP_COLUMNS if c != "study"]
            maps = _select(significance, part, keys)
            maps = maps[maps["csf_a"].isin(shown) & maps["csf_b"].isin(shown)]
            group.append(
                b.figure(
                    significance_figure,
                    (
                        maps,
                        shown,
                        studies,
                        f"{metric.upper()} significance maps" + _suffix(label) + short,
                    ),
                    f"significance_{metric}_{label}",
                    f"significance maps by {metric}, {chosen.caption()}",
                )
            )
        parts.append(b.group(label, "".join(group)))
    if results is not None and {"aurc", "augrc"} <= set(results["metric"]):
        parts.append(_kendall_table(b, results))
    return "".join(parts)


def _kendall_table(b: _Builder, results: pd.DataFrame) -> str:
    from fdbench.analysis import ranking_agreement

    tau = ranking_agreement(results, "aurc", "augrc")
    b.csv(tau, "kendall_tau_aurc_augrc_long")
    keys = [c for c in ("dataset", "method") if c in tau.columns]
    runs = tau[keys].astype(str).agg("/".join, axis=1) if keys else pd.Series("τ", tau.index)
    if "study" in tau.columns:
        frame = tau.assign(run=runs).pivot_table(
            index="run", columns="study", values="tau", sort=False
        )
        frame.columns.name = None
    else:
        frame = tau.assign(run=runs).set_index("run")[["tau", "p_value", "n_csfs"]]
    frame.index.name = "run"
    table = plain_table(
        frame,
        "kendall_tau_aurc_augrc",
        "Kendall τ_b between the CSF rankings by AURC and by AUGRC (seed means; 1 = same order)",
        3,
    )
    return b.table(table)


def _rankings(b: _Builder, context: ReportContext) -> str:
    bootstrap, results = context.inputs.bootstrap, context.inputs.results
    if bootstrap is not None and not bootstrap.empty:
        return _ranking_section(b, bootstrap, results)
    if results is not None and not results.empty:
        return _value_ranking_section(b, results)
    return ""


def _value_ranking_section(b: _Builder, results: pd.DataFrame) -> str:
    """Without bootstrap resamples (e.g. the results of ``fdbench evaluate``): the CSFs ranked
    by their (seed-mean) values per study, and their mean rank over the studies."""
    from fdbench.analysis import rank_csfs

    ranked = {}
    for metric in RANKING_METRICS:
        rows = results[results["metric"] == metric]
        if not rows.empty and rows["csf"].nunique() >= 2:
            ranked[metric] = dict(_run_groups(rank_csfs(rows, metric)))
    parts = []
    for label in dict.fromkeys(label for groups in ranked.values() for label in groups):
        tables = []
        for metric, groups in ranked.items():
            if label not in groups:
                continue
            part = groups[label]
            frame = part.pivot_table(index="csf", columns="study", values="rank", sort=False)
            frame = frame.assign(**{"mean rank": frame.mean(axis=1)})
            frame = frame.sort_values("mean rank", kind="stable")
            frame.index.name = "CSF"
            frame.columns.name = None
            title = f"Rank by {metric.upper()} (1 = best)" + _suffix(label)
            table = ReportTable(_stem("rank", metric, label), title, frame, 2, False)
            tables.append(b.table(table))
        parts.append(b.group(label, "".join(tables)))
    if not parts:
        return ""
    note = (
        '<p class="note">The CSFs ranked by their values per study (rank 1 = best; ties share '
        "the average rank) and their mean rank over the studies. This folder has no bootstrap "
        "resamples (bootstrap.parquet), so there is no rank-then-aggregate and no significance "
        "test.</p>"
    )
    return note + "".join(parts)
