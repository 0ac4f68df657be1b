"""Kim et al.'s Table 5: unknown, misclassification and OoD detection per method, over seeds."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fdbench.analysis.scoring_methods import ensemble_of
from fdbench.protocol import FAR_OOD_STUDY, NEAR_OOD_STUDY, UNKNOWN_STUDY, Protocol

#: The CSFs Kim et al. score each method with: MSR (baseline and training methods: CRL, OE,
#: AugMix), the MC-dropout and ensemble mean-softmax maximum, OpenMax's 1 − P(unknown), EDL's
#: expected-probability maximum and its uncertainty K / S (negated), and ODIN's score.
KIM_CSFS = ("MSR", "MCD-MSR", "ENS-MSR", "OpenMax", "EDL-MSR", "EDL-Unc", "ODIN")

#: Kim et al.'s Table 5 columns: (key, header, study, metric, scale); ``None`` as study: the
#: in-distribution study. AURC ×1000, the others in per cent, as the paper prints them.
COLUMNS = (
    ("accuracy", "ACC %", None, "accuracy", 100.0),
    ("aurc", "AURC ×1000", UNKNOWN_STUDY, "aurc", 1000.0),
    ("fpr95", "FPR@95TPR %", UNKNOWN_STUDY, "fpr@95tpr", 100.0),
    ("md_aurc", "MD AURC ×1000", None, "aurc", 1000.0),
    ("md_auroc", "MD AUROC %", None, "auroc_f", 100.0),
    ("near_auroc", "near-OoD AUROC %", NEAR_OOD_STUDY, "auroc_out", 100.0),
    ("near_fpr95", "near-OoD FPR@95TPR %", NEAR_OOD_STUDY, "fpr@95tpr_out", 100.0),
    ("far_auroc", "far-OoD AUROC %", FAR_OOD_STUDY, "auroc_out", 100.0),
    ("far_fpr95", "far-OoD FPR@95TPR %", FAR_OOD_STUDY, "fpr@95tpr_out", 100.0),
)
#: The relative unknown-detection AURC improvement over the baseline, in per cent.
IMPROVEMENT = ("improvement", "AURC improvement %")
SUMMARY_COLUMNS = ("dataset", "method", "csf", "quantity", "mean", "std", "n_seeds")


def _rows(results: pd.DataFrame, iid_study: str) -> pd.DataFrame:
    """The in-distribution rows (failure-detection protocol where a ``protocol`` column says)
    and the pooled unknown-detection rows."""
    pooled = results["study"].isin([UNKNOWN_STUDY, NEAR_OOD_STUDY, FAR_OOD_STUDY])
    iid = results["study"] == iid_study
    if "protocol" in results.columns:
        protocol = results["protocol"]
        pooled &= protocol == Protocol.UNKNOWN_DETECTION.value
        iid &= protocol == Protocol.FAILURE_DETECTION.value
    return results[pooled | iid]


def _default_baseline(keys: pd.DataFrame) -> tuple[str, str] | None:
    """The first (method, csf) scored by MSR that is not an ensemble."""
    plain = keys[(keys["csf"] == "MSR") & keys["method"].astype(str).map(ensemble_of).isna()]
    if plain.empty:
        return None
    first = plain.iloc[0]
    return str(first["method"]), str(first["csf"])


def unknown_detection_summary(
    results: pd.DataFrame,
    *,
    csfs: Sequence[str] | None = KIM_CSFS,
    baseline: tuple[str, str] | None = None,
    iid_study: str = "iid",
) -> pd.DataFrame:
    """Kim et al.'s Table 5 (2023) as a long table: mean and std over seeds per quantity.

    For every dataset, method and CSF (those of ``csfs``; all when None) that has rows of the
    pooled study :data:`~fdbench.protocol.UNKNOWN_STUDY`: the accuracy and misclassification
    detection (AURC, AUROC_f) on the in-distribution study ``iid_study`` (failure-detection
    rows when the table has a ``protocol`` column), the unknown-detection AURC and FPR@95TPR
    on the pooled set, and OoD detection (``auroc_out``, ``fpr@95tpr_out``: the
    in-distribution/OoD label) on the pooled near-OoD and far-OoD views (:data:`COLUMNS`).
    Values are scaled as the paper prints them (AURC ×1000, the others in per cent); ``std``
    is the sample standard deviation over seeds (NaN for one seed). The quantity
    ``improvement`` is the relative AURC improvement over ``baseline`` (method, CSF; default:
    the first non-ensemble method's MSR): (AURC_base − AURC_m) / AURC_base × 100 on the seed
    means (Kim et al.'s Fig. 5 plots improvement ratios without a formula; this is the one
    fdbench uses, docs/unknown_detection.md). Columns :data:`SUMMARY_COLUMNS`; empty when
    there are no pooled unknown-detection rows.
    """
    missing = [c for c in ("csf", "study", "metric", "value") if c not in results.columns]
    if missing:
        raise ValueError(f"results: missing column(s) {missing}")
    table = _rows(results, iid_study).copy()
    for column, default in (("dataset", ""), ("method", ""), ("seed", 0)):
        if column not in table.columns:
            table[column] = default
    if csfs is not None:
        table = table[table["csf"].isin(list(csfs))]
    keys = ["dataset", "method", "csf"]
    has_pool = table[table["study"] == UNKNOWN_STUDY][keys].drop_duplicates()
    if has_pool.empty:
        return pd.DataFrame(columns=list(SUMMARY_COLUMNS))
    table = table.merge(has_pool, on=keys)
    parts = []
    for key, _, study, metric, scale in COLUMNS:
        chosen = table[(table["study"] == (study or iid_study)) & (table["metric"] == metric)]
        stats = chosen.groupby(keys, sort=False)["value"].agg(["mean", "std", "count"])
        stats = (stats * [scale, scale, 1]).reset_index().assign(quantity=key)
        parts.append(stats.rename(columns={"count": "n_seeds"}))
    summary = pd.concat(parts, ignore_index=True)
    order = has_pool.reset_index(drop=True).reset_index().rename(columns={"index": "_order"})
    summary = summary.merge(order, on=keys)
    aurc = summary[summary["quantity"] == "aurc"]
    improvements = []
    for dataset, rows in aurc.groupby("dataset", sort=False):
        base = baseline or _default_baseline(rows[["method", "csf"]])
        if base is None:
            continue
        ref = rows[(rows["method"] == base[0]) & (rows["csf"] == base[1])]["mean"]
        if ref.empty:
            raise ValueError(f"baseline {base} has no unknown-detection AURC in {dataset!r}")
        value = (ref.iloc[0] - rows["mean"]) / ref.iloc[0] * 100.0
        improvements.append(rows.assign(quantity=IMPROVEMENT[0], mean=value.to_numpy(), std=np.nan))
    summary = pd.concat([summary, *improvements], ignore_index=True)
    rank = {k: i for i, k in enumerate([c[0] for c in COLUMNS] + [IMPROVEMENT[0]])}
    summary = summary.assign(_q=summary["quantity"].map(rank)).sort_values(
        ["_order", "_q"], kind="stable"
    )
    summary["n_seeds"] = summary["n_seeds"].astype(int)
    return summary[list(SUMMARY_COLUMNS)].reset_index(drop=True)


def unknown_detection_display(summary: pd.DataFrame, *, digits: int = 2) -> pd.DataFrame:
    """The summary of :func:`unknown_detection_summary` as Kim et al. lay Table 5 out: one row
    per method · CSF (prefixed by the dataset when there are several), one column per quantity,
    cells ``mean ± std`` (the mean alone for one seed)."""
    if summary.empty:
        return pd.DataFrame()
    headers = {key: header for key, header, *_ in COLUMNS}
    headers[IMPROVEMENT[0]] = IMPROVEMENT[1]
    several = summary["dataset"].nunique() > 1
    label = summary["method"].astype(str) + " · " + summary["csf"].astype(str)
    if several:
        label = summary["dataset"].astype(str) + ": " + label

    def cell(mean: float, std: float) -> str:
        if not np.isfinite(mean):
            return "–"
        text = f"{mean:.{digits}f}"
        return f"{text} ± {std:.{digits}f}" if np.isfinite(std) else text

    cells = summary.assign(
        row=label,
        text=[cell(m, s) for m, s in zip(summary["mean"], summary["std"], strict=True)],
        column=summary["quantity"].map(headers),
    )
    wide = cells.pivot(index="row", columns="column", values="text")
    wide = wide.reindex(index=list(dict.fromkeys(label)))
    columns = [h for h in headers.values() if h in wide.columns]
    wide = wide[columns].fillna("–")
    wide.index.name = "method · CSF"
    wide.columns.name = None
    return wide
