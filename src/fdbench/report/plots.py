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


def figure_png(fig) -> bytes:
    """PNG bytes of a matplotlib figure (closed afterwards)."""
    plt = _pyplot()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


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


def _grid(n: int, columns: int, size: float = 3.2):
    plt = _pyplot()
    cols = min(columns, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(size * cols, size * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def curves_figure(curves: pd.DataFrame, study: str, csfs: Sequence[str]) -> bytes:
    """Risk-coverage and generalized-risk-coverage curves of ``csfs`` on one study.

    ``curves`` has columns study, csf, coverage, selective_risk, generalized_risk (the arrays of
    ``fdbench.metrics.risk_coverage_curve``).
    """
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    part = curves[curves["study"] == study]
    for csf in csfs:
        line = part[part["csf"] == csf]
        if line.empty:
            continue
        left.plot(line["coverage"], line["selective_risk"], label=csf, lw=1.3)
        right.plot(line["coverage"], line["generalized_risk"], label=csf, lw=1.3)
    left.set(xlabel="coverage", ylabel="selective risk", title=f"{study}: risk-coverage")
    right.set(xlabel="coverage", ylabel="generalized risk", title=f"{study}: generalized risk")
    for ax in (left, right):
        ax.set_xlim(0, 1)
        ax.grid(alpha=0.3)
    right.legend(fontsize=7, loc="upper left")
    return figure_png(fig)


def rank_distribution_figure(distribution: pd.DataFrame, order: Sequence[str], title: str) -> bytes:
    """Heat map of how often each CSF (rows, in ``order``) takes each rank (columns)."""
    plt = _pyplot()
    table = distribution.pivot_table(
        index="csf", columns="rank", values="frequency", aggfunc="sum", fill_value=0.0
    ).reindex(index=list(order), fill_value=0.0)
    fig, ax = plt.subplots(figsize=(1.2 + 0.45 * table.shape[1], 0.9 + 0.32 * table.shape[0]))
    image = ax.imshow(table.to_numpy(), cmap="Blues", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(table.shape[1]), [f"{r:g}" for r in table.columns], fontsize=7)
    ax.set_yticks(range(table.shape[0]), table.index, fontsize=8)
    ax.set(xlabel="rank", title=title)
    fig.colorbar(image, ax=ax, label="share of resamples", fraction=0.05)
    return figure_png(fig)


def significance_figure(
    significance: pd.DataFrame, orders: dict[str, list[str]], title: str
) -> bytes:
    """Per-study significance maps: cell (a, b) filled where CSF a is significantly better than b.

    ``significance`` is the output of ``fdbench.analysis.significance_matrix``; ``orders`` maps
    each study to its CSFs sorted by mean rank.
    """
    studies = list(orders)
    fig, axes = _grid(len(studies), columns=4)
    for ax, study in zip(axes, studies, strict=True):
        csfs = orders[study]
        part = significance[significance["study"] == study]
        matrix = np.full((len(csfs), len(csfs)), np.nan)
        position = {c: i for i, c in enumerate(csfs)}
        for row in part.itertuples():
            if row.csf_a in position and row.csf_b in position:
                matrix[position[row.csf_a], position[row.csf_b]] = float(row.significant)
        ax.imshow(matrix, cmap="Greens", vmin=0, vmax=1.4)
        ax.set_xticks(range(len(csfs)), csfs, rotation=90, fontsize=6)
        ax.set_yticks(range(len(csfs)), csfs, fontsize=6)
        ax.set_title(study, fontsize=8)
    fig.suptitle(title, fontsize=10, y=1.03)
    return figure_png(fig)


def reliability_figure(reliability: pd.DataFrame, study: str) -> bytes:
    """Reliability diagrams (accuracy and mean confidence per bin) of every CSF on one study."""
    part = reliability[reliability["study"] == study]
    csfs = list(dict.fromkeys(part["csf"]))
    fig, axes = _grid(len(csfs), columns=5, size=2.6)
    for ax, csf in zip(axes, csfs, strict=True):
        bins = part[part["csf"] == csf]
        width = (bins["upper"] - bins["lower"]).to_numpy()
        ax.bar(
            bins["lower"],
            bins["accuracy"].fillna(0),
            width=width,
            align="edge",
            color="#4c72b0",
            edgecolor="white",
            label="accuracy",
        )
        accuracy = bins["accuracy"].fillna(0).to_numpy()
        confidence = bins["confidence"].fillna(0).to_numpy()
        ax.bar(
            bins["lower"],
            np.abs(confidence - accuracy),
            width=width,
            bottom=np.minimum(confidence, accuracy),
            align="edge",
            fill=False,
            edgecolor="#c44e52",
            hatch="//",
            label="gap to confidence",
        )
        ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--")
        ax.set(xlim=(0, 1), ylim=(0, 1), title=csf)
        ax.tick_params(labelsize=6)
    axes[0].legend(fontsize=6, loc="upper left")
    fig.suptitle(f"{study}: reliability after scaling on validation", fontsize=10, y=1.03)
    return figure_png(fig)


def sgr_figure(sgr: pd.DataFrame) -> bytes:
    """Risk excess (realised selective risk − target) and coverage of SGR thresholds per study."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    keys = ["study", "csf"] if "csf" in sgr.columns else ["study"]
    for key, part in sgr.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        label = " / ".join(str(k) for k in key)
        part = part.sort_values("target_risk")
        left.plot(part["target_risk"], part["excess"], marker="o", ms=3, label=label)
        right.plot(part["target_risk"], part["coverage"], marker="o", ms=3, label=label)
    left.axhline(0, color="black", lw=0.8)
    left.set(xlabel="target risk r*", ylabel="realised risk − r*", title="SGR risk excess")
    right.set(xlabel="target risk r*", ylabel="coverage", title="SGR coverage")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    right.legend(fontsize=7)
    return figure_png(fig)
