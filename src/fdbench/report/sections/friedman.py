"""Report section: Friedman test and Nemenyi critical-difference diagrams across studies."""

from __future__ import annotations

import html
import math

import pandas as pd

from fdbench.metrics import metric_spec
from fdbench.report.builder import ReportContext, _Builder
from fdbench.report.plots import _pyplot, figure_png
from fdbench.report.tables import (
    ReportTable,
)

#: The metrics the section tests, each with its display name.
FRIEDMAN_METRICS = tuple((m, metric_spec(m).label) for m in ("augrc", "aurc"))
#: Significance level of the Nemenyi post-hoc test and its diagram.
NEMENYI_ALPHA = 0.05


def friedman_blocks(results: pd.DataFrame) -> pd.DataFrame:
    """The failure-detection rows of ``results`` whose studies are the blocks of the test.

    Corruption counts once: where the corruption summary ``cor`` (the mean over the pooled
    intensities, FD-Shifts' column) is present, the pooled studies ``corruption/<s>`` are left
    out; the per-type studies ``corruption/<type>/<s>`` always are. Every other study (i.i.d.,
    sub-class, every new-class study) is a block of its own.
    """
    from fdbench.protocol import PER_TYPE_CORRUPTION, POOLED_CORRUPTION, Protocol

    rows = results
    if "protocol" in rows.columns:
        rows = rows[rows["protocol"] == Protocol.FAILURE_DETECTION.value]
    study = rows["study"].astype(str)
    drop = study.str.match(PER_TYPE_CORRUPTION.pattern)
    if (study == "cor").any():
        drop |= study.str.match(POOLED_CORRUPTION.pattern)
    return rows[~drop]


def _label(key) -> str:
    return " / ".join(str(v) for v in key) if isinstance(key, tuple) else str(key)


def distinct_colours(names: list[str]) -> dict[str, str]:
    """A colour of its own for each of ``names`` (no two alike, however many): evenly spaced
    on the ``turbo`` colormap, neighbours in ``names`` taken far apart on it."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    k = len(names)
    stride = next(s for s in range(max(1, k // 3), k + 1) if math.gcd(s, k) == 1) if k > 1 else 1
    cmap = colormaps["turbo"]
    return {
        name: to_hex(cmap(0.05 + 0.9 * ((i * stride) % k) / max(k - 1, 1)))
        for i, name in enumerate(names)
    }


def critical_difference_figure(
    ranks: pd.Series, p_values: pd.DataFrame, critical_difference: float, alpha: float, title: str
) -> bytes:
    """Demšar's critical-difference diagram (JMLR 2006, Fig. 1) of average ranks.

    Drawn by ``scikit_posthocs.critical_difference_diagram``: the average ranks on an axis
    (rank 1 = best), the Nemenyi CD as a bar above it, and a crossbar joining scoring methods
    whose pairwise Nemenyi p-value is >= ``alpha`` (not significantly different).
    """
    import scikit_posthocs

    plt = _pyplot()
    k = len(ranks)
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.16 * (k + 1) / 2), layout="constrained")
    artists = scikit_posthocs.critical_difference_diagram(
        ranks,
        p_values,
        cd=critical_difference,
        alpha=alpha,
        ax=ax,
        label_fmt_left="{label} ({rank:.1f})",
        label_fmt_right="({rank:.1f}) {label}",
        label_props={"fontsize": 7},
        color_palette=distinct_colours(list(ranks.index)),
    )
    # the library draws each crossbar through the ranks of a set of methods, in the set's
    # iteration order (which follows string hashing): sorted, the PNG is the same in any process
    for line in (line for bar in artists["crossbars"] for line in bar):
        line.set_xdata(sorted(line.get_xdata()))
    ax.set_title(title, fontsize=10)
    return figure_png(fig)


def friedman_section(b, results: pd.DataFrame) -> str:
    """The section's HTML: per metric the Friedman and Iman–Davenport statistics, the average
    ranks of every scoring method over the blocks, and the critical-difference diagram.

    ``b`` is the report's builder (``fdbench.report.builder._Builder``). Returns "" when the
    results give fewer than 3 scoring methods or 2 blocks.
    """
    from fdbench.analysis.friedman import friedman_nemenyi

    blocks = friedman_blocks(results)
    keys = [c for c in ("dataset", "study") if c in blocks.columns]
    parts, listing = [], ""
    for metric, name in FRIEDMAN_METRICS:
        if not (blocks["metric"] == metric).any():
            continue
        try:
            out = friedman_nemenyi(blocks, metric, blocks=keys, alpha=NEMENYI_ALPHA)
        except ValueError:
            continue
        f = out.friedman
        labels = [_label(key) for key in out.values.index]
        listing = ", ".join(labels)
        parts.append(
            f"<p>{name}: χ²_F = {f.statistic:.2f} (p = {f.p_value:.3g}), Iman–Davenport "
            f"F_F = {f.f_statistic:.2f} (p = {f.f_p_value:.3g}); k = {f.n_methods} scoring "
            f"methods, N = {f.n_blocks} blocks; Nemenyi CD = {out.critical_difference:.2f} "
            f"(α = {out.alpha:g})."
            + (
                f" Left out (no value in every block): {html.escape(', '.join(out.dropped))}."
                if out.dropped
                else ""
            )
            + "</p>"
        )
        frame = out.average_ranks.to_frame("average rank")
        frame.index.name = "scoring method"
        parts.append(
            b.table(
                ReportTable(
                    f"friedman_ranks_{metric}",
                    f"{name}: average rank over {f.n_blocks} blocks (1 = best)",
                    frame,
                    2,
                    False,
                )
            )
        )
        values = out.values.copy()
        values.index = labels
        b.csv(values.T.rename_axis("scoring method").reset_index(), f"friedman_values_{metric}")
        b.csv(out.p_values.rename_axis("scoring method").reset_index(), f"nemenyi_p_{metric}")
        parts.append(
            b.figure(
                critical_difference_figure,
                (
                    out.average_ranks,
                    out.p_values,
                    out.critical_difference,
                    out.alpha,
                    f"{name}: critical-difference diagram (Nemenyi, α = {out.alpha:g})",
                ),
                f"critical_difference_{metric}",
                f"critical-difference diagram by {metric}",
            )
        )
    if not parts:
        return ""
    note = (
        '<p class="note">Do the scoring methods (training method / CSF, each judged with its own '
        "classifier) differ across studies? Friedman test (Demšar, JMLR 2006; scipy's "
        "tie-corrected χ²) over blocks, one block per data set × study, each block weighted "
        "equally: corruption is one block (<i>cor</i>, the mean over the pooled intensities), "
        "while every new-class study is a block of its own. Values are seed means; within a "
        "block the scoring methods are ranked (1 = best, ties averaged). Nemenyi post-hoc "
        "(scikit-posthocs): two scoring methods differ at α where their average ranks differ by "
        "more than the critical difference CD = q_α √(k(k+1)/(6N)); in the diagram a bar joins "
        "the methods that do not. Blocks: "
        f"{html.escape(listing)}. The values and pairwise p-values are in "
        "tables/friedman_values_&lt;metric&gt;.csv and tables/nemenyi_p_&lt;metric&gt;.csv.</p>"
    )
    return note + "".join(parts)


def _friedman(b: _Builder, context: ReportContext) -> str:
    results = context.inputs.results
    if results is None or results.empty:
        return ""

    return friedman_section(b, results)
