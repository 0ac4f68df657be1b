"""Matplotlib figures of the report, rendered to PNG bytes (Agg backend, no display)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def figure_png(fig, dpi: int = 85) -> bytes:
    """PNG bytes of a matplotlib figure (closed afterwards), as an 8-bit palette image.

    The figures of this module use the constrained layout, which already fits titles, labels
    and outside legends into the figure (a tight bounding box would draw everything twice).
    Plots are flat colours and their anti-aliased edges: 256 colours chosen by median cut
    (no dithering) keep them sharp at about a third of the size of a true-colour PNG, which
    keeps the report page small.

    Every text is drawn at least :data:`MIN_TEXT_PX` pixels high as the page shows the figure
    at 1,400 px (:func:`text_floor`); the smallest font size and the DPI are kept in the PNG's
    text chunks ``fdbench:min-font-pt`` and ``fdbench:dpi`` for checks.
    """
    from PIL import Image, PngImagePlugin

    plt = _pyplot()
    smallest = legible(fig, dpi)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, facecolor="white")
    plt.close(fig)
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    palette = image.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    info = PngImagePlugin.PngInfo()
    info.add_text("fdbench:min-font-pt", f"{smallest:.3f}")
    info.add_text("fdbench:dpi", str(dpi))
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True, pnginfo=info)
    return out.getvalue()


#: The smallest text the page shows in a figure, in CSS pixels at a 1,400 px wide window.
MIN_TEXT_PX = 9.0
#: The width of the page's main column at a 1,400 px wide window (the contents pane, the padding
#: and a scrollbar taken off: 1,053 px measured in Chromium, less a margin): a wider figure is
#: shown scaled down to it.
PAGE_COLUMN_PX = 1040


def text_floor(width_inches: float, dpi: float) -> float:
    """The smallest font size in points that shows :data:`MIN_TEXT_PX` high in a figure of
    ``width_inches`` saved at ``dpi`` and shown at most :data:`PAGE_COLUMN_PX` wide."""
    shown = min(float(dpi), PAGE_COLUMN_PX / width_inches)
    return MIN_TEXT_PX * 72.0 / shown


def legible(fig, dpi: float) -> float:
    """Raise every text of ``fig`` smaller than :func:`text_floor` to it; the smallest font
    size left, in points."""
    from matplotlib.text import Text

    floor = text_floor(float(fig.get_figwidth()), dpi)
    fig.draw_without_rendering()  # makes the tick labels a draw would make
    sizes = []
    for text in fig.findobj(Text):
        if not text.get_text() or not text.get_visible():
            continue
        if text.get_fontsize() < floor:
            text.set_fontsize(floor)
        sizes.append(float(text.get_fontsize()))
    return min(sizes, default=floor)


def image_png(image: np.ndarray) -> bytes:
    """PNG bytes of a uint8 H × W × C (C = 1 or 3) or H × W image."""
    from PIL import Image

    array = np.asarray(image)
    if array.dtype != np.uint8:
        raise TypeError(f"image must be uint8; got {array.dtype}")
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def _grid(n: int, columns: int, width: float, height: float):
    """A figure of ``n`` panels, ``columns`` per row, each ``width`` × ``height`` inches."""
    plt = _pyplot()
    cols = max(1, min(columns, n))
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, height * rows), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _legend_handles(labels: Sequence[str], colours: Sequence[str]) -> list:
    from matplotlib.lines import Line2D

    pairs = zip(labels, colours, strict=True)
    return [Line2D([], [], color=colour, lw=2.5, label=str(label)) for label, colour in pairs]


def optimal_risks(error_rate: float, coverage: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Selective and generalized risk of the optimal CSF (every failure ranked below every
    success) at ``coverage``, for a test set with failure share ``error_rate``.

    Accepting a share c of the samples, the optimal CSF accepts failures only once every
    success is in: generalized risk max(0, c − (1 − e)), selective risk that divided by c
    (Geifman et al., ICLR 2019, "optimal" curve of E-AURC; Traub et al., NeurIPS 2024, the
    optimal AUGRC).
    """
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError(f"error_rate must be in [0, 1]; got {error_rate!r}")
    coverage = np.asarray(coverage, dtype=np.float64)
    generalized = np.maximum(0.0, coverage - (1.0 - error_rate))
    with np.errstate(divide="ignore", invalid="ignore"):
        selective = np.where(coverage > 0, generalized / coverage, 0.0)
    return selective, generalized


def curves_figure(
    curves: pd.DataFrame, csfs: Sequence[str], title: str, reference: str | None = None
) -> bytes:
    """Risk-coverage and generalized-risk-coverage curves of ``csfs`` on every study of one run.

    ``curves`` holds the curves of one run (one dataset, method and seed) with columns study,
    csf, coverage, selective_risk, generalized_risk (the arrays of
    ``fdbench.metrics.risk_coverage_curve``). Each study gets two panels side by side; a CSF
    has its fixed colour (:func:`fdbench.report.palette.csf_colour`) in every panel. Every panel
    also shows the optimal curve (black) and the random reference (grey, dashed: risk e, or
    c · e), from the error rate e of the ``reference`` CSF's classifier (its risk at coverage 1;
    default the first of ``csfs``; a mean loss above 1, of continuous residuals, has no
    optimal curve drawn). The legend stands beside the panels.
    """
    from fdbench.report.palette import OPTIMAL_COLOUR, RANDOM_COLOUR, csf_colours, line_styles

    studies = list(dict.fromkeys(curves["study"]))
    fig, axes = _grid(2 * len(studies), columns=4, width=2.9, height=2.45)
    colours = csf_colours(csfs)
    styles = line_styles(csfs)
    reference = reference if reference in csfs else csfs[0]
    grid = np.linspace(0.0, 1.0, 201)
    for i, study in enumerate(studies):
        pair = axes[2 * i], axes[2 * i + 1]
        part = curves[curves["study"] == study]
        base = part[part["csf"] == reference]
        if not base.empty:
            error_rate = float(base.loc[base["coverage"].idxmax(), "selective_risk"])
            # a mean loss above 1 (e.g. |y - y_hat|) has no 0/1 optimum to draw
            selective, generalized = optimal_risks(min(error_rate, 1.0), grid)
            for ax, optimal, random in (
                (pair[0], selective, np.full_like(grid, error_rate)),
                (pair[1], generalized, grid * error_rate),
            ):
                ax.plot(grid, random, lw=1.0, ls="--", color=RANDOM_COLOUR)
                if error_rate <= 1.0:
                    ax.plot(grid, optimal, lw=1.0, color=OPTIMAL_COLOUR)
        for csf in csfs:
            line = part[part["csf"] == csf]
            if line.empty:
                continue
            style = {"lw": 1.2, "color": colours[csf], "ls": styles[csf]}
            pair[0].plot(line["coverage"], line["selective_risk"], **style)
            pair[1].plot(line["coverage"], line["generalized_risk"], **style)
        for ax, risk in zip(pair, ("selective risk", "generalized risk"), strict=True):
            ax.set_title(_wrapped(study, 34), fontsize=8.5)
            ax.set_xlabel("coverage", fontsize=8)
            ax.set_ylabel(risk, fontsize=8)
            ax.set_xlim(0, 1)
            ax.set_ylim(bottom=0)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    labels = [*csfs, "optimal", "random"]
    handles = _legend_handles(labels, [*colours.values(), OPTIMAL_COLOUR, RANDOM_COLOUR])
    for handle, style in zip(handles, [*styles.values(), "-", "--"], strict=True):
        handle.set_linestyle(style)
    fig.legend(handles=handles, loc="outside right upper", fontsize=8.5, frameon=False)
    fig.suptitle(_wrapped(title, 110), fontsize=10.5)
    return figure_png(fig)


def _wrapped(text: str, width: int) -> str:
    """``text`` broken into lines of at most ``width`` characters (at spaces and slashes), so
    that no title runs past its panel."""
    import textwrap

    lines = textwrap.wrap(text.replace("/", "/ "), width, break_on_hyphens=False)
    return "\n".join(lines).replace("/ ", "/")


def rank_shares(ranks: pd.DataFrame, order: Sequence[str], ranked: int | None = None) -> np.ndarray:
    """How often each CSF of ``order`` (rows) takes each overall rank (columns), as a share of
    the resamples of ``ranks`` (columns csf, resample, rank). A tied rank between two integers
    (x.5) counts half for each. The columns are the ranks 1..k of the k CSFs of ``order``; where
    ``order`` is a selection of ``ranked`` > k CSFs, one more column gathers every rank > k."""
    order = list(order)
    k = len(order)
    columns = k + 1 if ranked is not None and ranked > k else k
    share = np.zeros((k, columns))
    position = {c: i for i, c in enumerate(order)}
    for csf, rank in zip(ranks["csf"], ranks["rank"].to_numpy(np.float64), strict=True):
        if csf not in position:
            continue
        low, high = math.floor(rank), math.ceil(rank)
        low, high = min(max(low, 1), columns), min(max(high, 1), columns)
        weight = 0.5 if low != high else 1.0
        share[position[csf], low - 1] += weight
        if low != high:
            share[position[csf], high - 1] += weight
    return share / max(ranks["resample"].nunique(), 1)


def rank_distribution_figure(
    ranks: pd.DataFrame, order: Sequence[str], title: str, ranked: int | None = None
) -> bytes:
    """Heat map of how often each CSF (rows, in ``order``) takes each overall rank (columns):
    :func:`rank_shares` (``ranked``: how many CSFs were ranked, where ``order`` is a selection;
    its last column, ">k", then gathers the worse ranks).

    ``ranks`` has one rank per CSF and resample (columns csf, resample, rank; e.g.
    ``fdbench.analysis.overall_bootstrap_ranks``). The cells show the share of resamples in
    percent (a rank never taken is white), the row labels the CSF's mean rank.
    """
    plt = _pyplot()
    order = list(order)
    k = len(order)
    share = rank_shares(ranks, order, ranked)
    columns = share.shape[1]
    fig, ax = plt.subplots(figsize=(2.2 + 0.42 * columns, 1.0 + 0.3 * k), layout="constrained")
    from matplotlib import colormaps

    from fdbench.report.palette import HEAT_COLORMAP

    # a rank never taken is white, not the colour scale's bright end
    cmap = colormaps[f"{HEAT_COLORMAP}_r"].with_extremes(bad="white")
    image = ax.imshow(np.ma.masked_equal(share, 0.0), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for i in range(k):
        for j in range(columns):
            if share[i, j] >= 0.05:
                colour = "white" if share[i, j] > 0.55 else "black"
                ax.text(
                    j,
                    i,
                    f"{100 * share[i, j]:.0f}",
                    ha="center",
                    va="center",
                    fontsize=6.5,
                    color=colour,
                )
    means = ranks.groupby("csf")["rank"].mean()
    labels = [f"{c} ({means[c]:.2f})" if c in means.index else c for c in order]
    ticks = [str(r) for r in range(1, k + 1)] + ([f">{k}"] if columns > k else [])
    ax.set_xticks(range(columns), ticks, fontsize=7)
    ax.set_yticks(range(k), labels, fontsize=8)
    ax.set_xlabel("overall rank (1 = best)", fontsize=9)
    ax.set_ylabel("CSF (mean rank)", fontsize=9)
    ax.set_title(_wrapped(title, 60), fontsize=10)
    fig.colorbar(image, ax=ax, label="share of bootstrap resamples", fraction=0.04)
    return figure_png(fig)


def significance_figure(
    significance: pd.DataFrame, order: Sequence[str], studies: Sequence[str], title: str
) -> bytes:
    """Per-study significance maps: cell (a, b) filled where CSF a is significantly better than b.

    ``significance`` is the output of ``fdbench.analysis.significance_matrix``; every panel
    (one per study of ``studies``) has the rows and columns in the one ``order`` (e.g. the
    CSFs by overall mean rank, best first, top and left), so a CSF sits in the same row of
    every panel. Filled cells are dark blue (the colormap's dark end), empty ones light grey.
    """
    from matplotlib import colormaps
    from matplotlib.colors import ListedColormap

    from fdbench.report.palette import HEAT_COLORMAP

    csfs = list(order)
    k = max(len(csfs), 1)
    size = max(3.0, 1.3 + 0.14 * k)
    fig, axes = _grid(len(studies), columns=max(1, int(13.5 // size)), width=size, height=size)
    cmap = ListedColormap(["#f2f2f2", colormaps[HEAT_COLORMAP](0.0)]).with_extremes(bad="#bdbdbd")
    position = {c: i for i, c in enumerate(csfs)}
    for n, (ax, study) in enumerate(zip(axes, studies, strict=True)):
        part = significance[significance["study"] == study]
        matrix = np.full((len(csfs), len(csfs)), np.nan)
        for a, b, s in zip(part["csf_a"], part["csf_b"], part["significant"], strict=True):
            if a in position and b in position:
                matrix[position[a], position[b]] = float(s)
        ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=0, vmax=1)
        ax.set_xticks(range(len(csfs)), csfs, rotation=90, fontsize=6.5)
        ax.set_yticks(
            range(len(csfs)), csfs if n % max(1, int(13.5 // size)) == 0 else [], fontsize=6.5
        )
        ax.set_title(_wrapped(study, 30), fontsize=9)
    fig.supxlabel("CSF b (column)", fontsize=9)
    fig.supylabel("CSF a (row)", fontsize=9)
    fig.suptitle(
        f"{_wrapped(title, 90)}\ndark: a significantly better than b (Holm-corrected); "
        "rows and columns in one order, by overall mean rank",
        fontsize=10,
    )
    return figure_png(fig)


def reliability_figure(reliability: pd.DataFrame, title: str) -> bytes:
    """Reliability diagrams of every CSF of one run: accuracy over mean confidence per bin.

    ``reliability`` holds one run (columns study, csf, count, confidence, accuracy; the bins of
    ``fdbench.analysis.reliability_table``). One panel per CSF, one line per study (empty bins
    left out); the dashed diagonal is perfect calibration.
    """
    from fdbench.report.palette import sequence_colours

    csfs = list(dict.fromkeys(reliability["csf"]))
    studies = list(dict.fromkeys(reliability["study"]))
    fig, axes = _grid(len(csfs), columns=6, width=2.15, height=2.05)
    colours = sequence_colours(len(studies))
    columns = min(6, len(csfs))
    for i, (ax, csf) in enumerate(zip(axes, csfs, strict=True)):
        part = reliability[(reliability["csf"] == csf) & (reliability["count"] > 0)]
        for study, colour in zip(studies, colours, strict=True):
            bins = part[part["study"] == study]
            ax.plot(bins["confidence"], bins["accuracy"], "o-", ms=2.5, lw=1, color=colour)
        ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--")
        ax.set(xlim=(0, 1), ylim=(0, 1))
        ax.set_title(csf, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if i + columns >= len(csfs):
            ax.set_xlabel("mean confidence in bin", fontsize=8)
        if i % columns == 0:
            ax.set_ylabel("accuracy in bin", fontsize=8)
    fig.legend(
        handles=_legend_handles(studies, colours),
        loc="outside lower center",
        ncol=min(len(studies), 5),
        fontsize=8,
        frameon=False,
    )
    fig.suptitle(title, fontsize=11)
    return figure_png(fig)


def sgr_figure(sgr: pd.DataFrame, title: str) -> bytes:
    """Realised test risk − r* and coverage of SGR thresholds, per study and target risk.

    ``sgr`` holds one run (``fdbench.analysis.risk_excess`` rows of every CSF: study,
    target_risk, risk, coverage, excess, feasible). For each study and target r*, a box over
    the CSFs with a feasible threshold (their values as dots); above the zero line the risk
    guarantee fitted on validation is broken.
    """
    from fdbench.report.palette import sequence_colours

    plt = _pyplot()
    studies = list(dict.fromkeys(sgr["study"]))
    targets = sorted(sgr["target_risk"].unique())
    if "feasible" in sgr.columns:
        sgr = sgr[sgr["feasible"].astype(bool)]
    colours = sequence_colours(len(targets))
    width = 0.8 / max(len(targets), 1)
    fig, axes = plt.subplots(
        2,
        1,
        figsize=(max(6.0, min(13.0, 1.0 + 1.1 * len(studies))), 6.5),
        sharex=True,
        layout="constrained",
    )
    rng = np.random.default_rng(0)
    for ax, column, label in zip(
        axes, ("excess", "coverage"), ("test risk − r*", "test coverage"), strict=True
    ):
        for j, (target, colour) in enumerate(zip(targets, colours, strict=True)):
            for i, study in enumerate(studies):
                values = sgr.loc[
                    (sgr["study"] == study) & (sgr["target_risk"] == target), column
                ].to_numpy(np.float64)
                if values.size == 0:
                    continue
                x = i + (j - (len(targets) - 1) / 2) * width
                box = ax.boxplot(
                    values,
                    positions=[x],
                    widths=0.8 * width,
                    patch_artist=True,
                    showfliers=False,
                    manage_ticks=False,
                )
                for patch in box["boxes"]:
                    patch.set(facecolor=colour, alpha=0.35, edgecolor=colour)
                for median in box["medians"]:
                    median.set(color=colour, lw=1.5)
                jitter = rng.uniform(-0.25, 0.25, values.size) * width
                ax.scatter(x + jitter, values, s=6, color=colour, zorder=3)
        ax.set_ylabel(label, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3, axis="y")
    axes[0].axhline(0, color="black", lw=0.9)
    axes[1].set_ylim(0, 1.02)
    axes[1].set_xlim(-0.5, len(studies) - 0.5)
    axes[1].set_xticks(range(len(studies)), studies, rotation=30, ha="right", fontsize=8)
    fig.legend(
        handles=_legend_handles([f"r* = {t:g}" for t in targets], colours),
        loc="outside lower center",
        ncol=len(targets),
        fontsize=9,
        frameon=False,
    )
    fig.suptitle(title, fontsize=11)
    return figure_png(fig)
