"""Report section: severity curves (metric vs corruption intensity or C-OOD level) with bands."""

from __future__ import annotations

import html
import math

import pandas as pd

from fdbench.metrics import metric_spec
from fdbench.report.builder import ReportContext, _Builder
from fdbench.report.palette import PALETTE, csf_colours, line_styles, sequence_colours
from fdbench.report.plots import _grid, _legend_handles, figure_png
from fdbench.report.selection import BASELINE_CSFS, TOP, top_and_references
from fdbench.report.tables import (
    ReportTable,
    _stem,
)

#: The metrics drawn against severity, with their display name and scale.
SEVERITY_METRICS = tuple(
    (m, metric_spec(m).heading(), metric_spec(m).scale) for m in ("augrc", "aurc")
)
_FAMILY_AXIS = {"corruption": "corruption intensity", "cood": "C-OOD severity percentile"}


def severity_figure(curves: pd.DataFrame, label: str, scale: float, title: str) -> bytes:
    """One panel per training method: ``label`` of each of its CSFs against the level, the
    seed mean as a line and the bootstrap percentile band shaded (where there is one).

    ``curves`` is one data set × family of :func:`fdbench.analysis.severity_curves`.
    """
    methods = list(dict.fromkeys(curves["method"]))
    most = int(curves.groupby("method")["scoring_method"].nunique().max())
    # each panel's legend stands below it, two names a row
    fig, axes = _grid(len(methods), columns=3, width=3.6, height=2.9 + 0.2 * math.ceil(most / 2))
    family = str(curves["family"].iloc[0])
    for ax, method in zip(axes, methods, strict=True):
        part = curves[curves["method"] == method]
        names = list(dict.fromkeys(part["scoring_method"]))
        # colours of their own within the panel while its names fit the palette
        colours = (
            sequence_colours(len(names))
            if len(names) <= len(PALETTE)
            else list(csf_colours(names).values())
        )
        styles = line_styles(names) if len(names) > len(PALETTE) else dict.fromkeys(names, "-")
        for name, colour in zip(names, colours, strict=True):
            line = part[part["scoring_method"] == name].sort_values("level")
            ax.plot(
                line["level"],
                scale * line["value"],
                lw=1.2,
                color=colour,
                ls=styles[name],
                marker=".",
            )
            if line["lower"].notna().any():
                ax.fill_between(
                    line["level"],
                    scale * line["lower"],
                    scale * line["upper"],
                    color=colour,
                    alpha=0.18,
                    lw=0,
                )
        ax.set_xticks(sorted(part["level"].unique()))
        ax.set_title(method, fontsize=9)
        ax.set_xlabel(_FAMILY_AXIS.get(family, "level"), fontsize=8)
        ax.set_ylabel(label, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(
            handles=_legend_handles(names, colours),
            fontsize=7,
            ncol=2,
            frameon=False,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.22),
        )
    fig.suptitle(title, fontsize=11)
    return figure_png(fig)


def drawn_per_method(curves: pd.DataFrame, metric: str, top: int = TOP) -> pd.DataFrame:
    """The rows of ``curves`` (one data set × family of
    :func:`fdbench.analysis.severity_curves`) that :func:`severity_figure` draws: per training
    method the ``top`` best scoring methods by their mean ``metric`` over the levels and the
    references (:data:`fdbench.report.headline.REFERENCES`, the baselines
    :data:`fdbench.report.selection.BASELINE_CSFS`), by
    :func:`fdbench.report.selection.top_and_references`."""
    from fdbench.report.headline import REFERENCES

    sign = -1.0 if metric_spec(metric).higher_is_better else 1.0
    keep = []
    for _, rows in curves.groupby("method", sort=False):
        means = sign * rows.groupby("scoring_method", sort=False)["value"].mean()
        ranked = list(means.sort_values(kind="stable").index)
        keep += top_and_references(ranked, (*BASELINE_CSFS, *REFERENCES), top)
    return curves[curves["scoring_method"].isin(set(keep))]


def _cell(value: float, lower: float, upper: float, scale: float) -> str:
    if pd.isna(lower):
        return f"{scale * value:.2f}"
    return f"{scale * value:.2f} [{scale * lower:.2f}, {scale * upper:.2f}]"


def severity_section(b, results: pd.DataFrame, bootstrap: pd.DataFrame | None) -> str:
    """The section's HTML: per data set, level family (pooled corruption intensities, C-OOD
    levels) and metric a table (scoring method × level: seed mean [2.5 %, 97.5 %] bootstrap
    percentiles) and a figure. ``b`` is the report's builder; ``bootstrap`` holds the
    bootstrap rows of the level studies (``severity_bootstrap.parquet``). Returns "" when
    ``results`` holds no level study.
    """
    from fdbench.analysis.severity import severity_curves
    from fdbench.protocol import Protocol

    if "protocol" in results.columns:
        results = results[results["protocol"] == Protocol.FAILURE_DETECTION.value]
    parts = []
    for metric, label, scale in SEVERITY_METRICS:
        if not (results["metric"] == metric).any():
            continue
        curves = severity_curves(results, bootstrap, metric)
        if curves.empty:
            continue
        b.csv(curves, f"severity_{metric}")
        for (dataset, family), part in curves.groupby(["dataset", "family"], sort=False):
            head = " — ".join(str(v) for v in (dataset, family) if str(v))
            frame = part.assign(
                cell=[
                    _cell(v, lo, hi, scale)
                    for v, lo, hi in zip(part["value"], part["lower"], part["upper"], strict=True)
                ],
                column=[f"{family} {level:g}" for level in part["level"]],
            ).pivot(index="scoring_method", columns="column", values="cell")
            frame = frame.loc[list(dict.fromkeys(part["scoring_method"]))]
            frame = frame[list(dict.fromkeys(f"{family} {level:g}" for level in part["level"]))]
            frame.index.name = "scoring method"
            frame.columns.name = None
            name = _stem("severity", metric, str(dataset), family)
            title = f"{label} by severity — {head}"
            parts.append(b.table(ReportTable(name, title, frame)))
            drawn = drawn_per_method(part, metric)
            if len(drawn) < len(part):
                parts.append(
                    f'<p class="note">Each panel below draws the top {TOP} of its training '
                    f"method's scoring methods by the mean {html.escape(label)} over the levels, "
                    "plus the references (the MSR baseline and the papers' DG-Res, ConfidNet, "
                    "DeVries where run); every scoring method is in the table above.</p>"
                )
            parts.append(b.figure(severity_figure, (drawn, label, scale, title), name, title))
    if not parts:
        return ""
    note = (
        '<p class="note">Each level is one study: the pooled corruption study of an intensity '
        "(all corruption types at that intensity, FD-Shifts' noise_study_&lt;level&gt;) or a "
        "C-OOD level. Cells and lines: the seed mean of each scoring method (a training "
        "method's CSF under its paper name; one panel per training method); brackets and "
        "bands: the 2.5 % and 97.5 % percentiles over the bootstrap "
        "resamples of the seed-mean value (the resamples of the rankings: same seed, paired "
        "across seeds and CSFs). Long form with the bands in tables/severity_&lt;metric&gt;"
        ".csv.</p>"
    )
    return note + "".join(parts)


def _severity(b: _Builder, context: ReportContext) -> str:
    results = context.inputs.results
    if results is None or results.empty:
        return ""

    return severity_section(b, results, context.inputs.severity_bootstrap)
