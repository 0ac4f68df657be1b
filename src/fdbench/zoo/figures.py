"""Figures of the zoo report (PNG bytes, matplotlib Agg)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fdbench.report.plots import _pyplot, figure_png

__all__ = ["cood_severity_figure", "pnorm_gain_figure", "scatter_figure", "ts_figure"]

#: (x column, y column, x label, y label) of the scatter plots across the zoo.
SCATTERS = (
    ("accuracy", "auroc_f", "accuracy", "AUROC_f (MSR)"),
    ("auroc_f", "ece", "AUROC_f (MSR)", "ECE (15 bins)"),
    ("accuracy", "aurc", "accuracy", "AURC (MSR)"),
    ("accuracy", "cood_auroc", "accuracy", "C-OOD AUROC (MSR, mean of levels)"),
    ("params", "cood_auroc", "parameters", "C-OOD AUROC (MSR, mean of levels)"),
)


def scatter_figure(members: pd.DataFrame) -> bytes | None:
    """One panel per pair of :data:`SCATTERS` the member table has, coloured by family."""
    pairs = [p for p in SCATTERS if p[0] in members and p[1] in members]
    pairs = [p for p in pairs if members[[p[0], p[1]]].dropna().shape[0] > 0]
    if not pairs:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(
        1, len(pairs), figsize=(3.6 * len(pairs), 3.3), squeeze=False, layout="constrained"
    )
    families = members["family"].fillna("–") if "family" in members else None
    for ax, (x, y, xlabel, ylabel) in zip(axes[0], pairs, strict=True):
        if families is None:
            ax.scatter(members[x], members[y], s=12)
        else:
            for family, part in members.groupby(families):
                ax.scatter(part[x], part[y], s=12, label=str(family))
        if x == "params":
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    if families is not None and families.nunique() <= 12:
        axes[0][-1].legend(fontsize=7, loc="best")
    return figure_png(fig)


def cood_severity_figure(curves: pd.DataFrame, csf: str) -> bytes | None:
    """C-OOD AUROC against severity level for every member, the best and the worst member
    (by mean AUROC over the levels) highlighted."""
    if curves.empty:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
    levels = np.arange(curves.shape[1])
    mean = curves.mean(axis=1)
    best, worst = mean.idxmax(), mean.idxmin()
    for member, values in curves.iterrows():
        if member not in (best, worst):
            ax.plot(levels, values.to_numpy(), color="0.75", linewidth=0.7)
    for member, colour, what in ((best, "tab:green", "best"), (worst, "tab:red", "worst")):
        values = curves.loc[member].to_numpy()
        ax.plot(levels, values, color=colour, linewidth=2, label=f"{what}: {member}")
    ax.set_xticks(levels, [f"{p:g}" for p in curves.columns])
    ax.set_xlabel("severity level (percentile of group severity)")
    ax.set_ylabel(f"C-OOD AUROC ({csf})")
    ax.legend(fontsize=8)
    return figure_png(fig)


def ts_figure(members: pd.DataFrame) -> bytes | None:
    """Change of AUROC_f through temperature scaling against the fitted T (log scale)."""
    if "temperature" not in members or "auroc_f_ts" not in members:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5), layout="constrained")
    change = members["auroc_f_ts"] - members["auroc_f"]
    ax.scatter(members["temperature"], change, s=12)
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.axvline(1, color="0.5", linewidth=0.8, linestyle="--")
    ax.set_xscale("log")
    ax.set_xlabel("temperature T (fitted on validation)")
    ax.set_ylabel("ΔAUROC_f (after − before TS)")
    return figure_png(fig)


def pnorm_gain_figure(gain: pd.DataFrame) -> bytes | None:
    """AURC gain over MSR of MaxLogit-pNorm (and p-NormSoftmax) per member, sorted."""
    columns = [c for c in ("gain_MaxLogit-pNorm", "gain_pNormSoftmax") if c in gain]
    if gain.empty or not columns:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 3.5), layout="constrained")
    for column in columns:
        values = np.sort(gain[column].to_numpy())[::-1]
        label = column.removeprefix("gain_")
        ax.plot(np.arange(values.size), values * 1000, marker=".", label=label)
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.set_xlabel("members (sorted by gain)")
    ax.set_ylabel("AURC_MSR − AURC_csf (‰)")
    ax.legend(fontsize=8)
    return figure_png(fig)
