"""Analyses across a zoo: member table, TS and MC-dropout effects, p-norm gain, Spearman
correlations with member-bootstrap intervals, family/regime comparisons, C-OOD rankings."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from fdbench.core.validation import check_allocation
from fdbench.zoo.config import bootstrap_memory

__all__ = [
    "CORRELATED",
    "cood_curves",
    "cood_level_rank_correlation",
    "cood_ranks",
    "extra_ood_table",
    "group_comparison",
    "mcd_effect",
    "member_table",
    "pnorm_gain",
    "spearman_table",
    "ts_effect",
]

#: Member columns whose pairwise Spearman correlations are reported.
CORRELATED = ("accuracy", "auroc_f", "aurc", "eaurc", "ece", "nll", "brier", "sac@95", "cood_auroc")
_ID = ("accuracy", "auroc_f", "aurc", "eaurc", "augrc", "ece", "nll", "brier")


def _pivot(results: pd.DataFrame, csf: str, calibration: str, study: str) -> pd.DataFrame:
    rows = results[
        (results["csf"] == csf)
        & (results["calibration"] == calibration)
        & (results["study"] == study)
    ]
    return rows.pivot_table(index="member", columns="metric", values="value", sort=False)


def member_table(results: pd.DataFrame, meta: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per member: MSR's metrics before TS (plain names) and after (``<metric>_ts``),
    the fitted ``temperature`` and p's, ``cood_auroc`` (MSR's C-OOD AUROC averaged over the
    levels), AURC of MaxLogit-pNorm and p-NormSoftmax, and the metadata columns (family,
    params, regime, ...). Every number is a value of ``results`` or a mean of such values."""
    before = _pivot(results, "MSR", "none", "iid")
    after = _pivot(results, "MSR", "ts", "iid").add_suffix("_ts")
    fits = results[results["study"] == "val"].pivot_table(
        index="member", columns="metric", values="value", sort=False, dropna=False
    )
    table = before.join(after, how="left").join(fits, how="left")
    cood = results[(results["csf"] == "MSR") & (results["metric"] == "auroc_cood")]
    if not cood.empty:
        table = table.join(cood.groupby("member")["value"].mean().rename("cood_auroc"))
    named = (("MaxLogit-pNorm", "aurc_maxlogit_pnorm"), ("pNormSoftmax", "aurc_pnorm_softmax"))
    for csf, column in named:
        rows = results[(results["csf"] == csf) & (results["study"] == "iid")]
        rows = rows[rows["metric"] == "aurc"]
        if not rows.empty:
            table = table.join(rows.set_index("member")["value"].rename(column))
    if meta is not None and not meta.empty:
        table = table.join(meta.set_index("name"), how="left")
    table.index.name = "member"
    return table


def ts_effect(members: pd.DataFrame) -> pd.DataFrame:
    """The change through temperature scaling, split by T < 1 and T > 1 (Galil et al., Sec. 4):
    per group the number of members and the mean and median change (after − before) of
    AUROC_f, AURC, E-AURC and ECE, and the share of members whose AUROC_f rose."""
    frame = members.assign(group=np.where(members["temperature"] < 1, "T < 1", "T > 1"))
    frame.loc[members["temperature"] == 1, "group"] = "T = 1"
    rows = []
    for group, part in frame.groupby("group", sort=True):
        row = {"group": group, "members": len(part)}
        for metric in ("auroc_f", "aurc", "eaurc", "ece"):
            change = part[f"{metric}_ts"] - part[metric]
            row[f"mean Δ{metric}"] = change.mean()
            row[f"median Δ{metric}"] = change.median()
        row["share AUROC_f improved"] = float((part["auroc_f_ts"] > part["auroc_f"]).mean())
        rows.append(row)
    return pd.DataFrame(rows).set_index("group")


def pnorm_gain(results: pd.DataFrame) -> pd.DataFrame:
    """Per member the AURC of MSR, MaxLogit-pNorm and p-NormSoftmax (p, T fitted on validation
    only) and the gains over MSR, ``AURC_MSR − AURC_csf`` (positive = better) and relative
    ``gain / AURC_MSR`` (Cattelan & Silva, UAI 2024)."""
    iid = results[(results["study"] == "iid") & (results["calibration"] == "none")]
    aurc = iid[iid["metric"] == "aurc"].pivot_table(index="member", columns="csf", values="value")
    table = pd.DataFrame(index=aurc.index)
    table["aurc_MSR"] = aurc["MSR"]
    for csf in ("MaxLogit-pNorm", "pNormSoftmax"):
        if csf in aurc:
            table[f"aurc_{csf}"] = aurc[csf]
            table[f"gain_{csf}"] = aurc["MSR"] - aurc[csf]
            table[f"relative_gain_{csf}"] = table[f"gain_{csf}"] / aurc["MSR"]
    fits = results[results["study"] == "val"].pivot_table(
        index="member", columns="metric", values="value", dropna=False
    )
    for column in ("pnorm_p", "pnorm_softmax_p", "pnorm_softmax_t"):
        if column in fits:
            table[column] = fits[column]
    return table


def mcd_effect(results: pd.DataFrame) -> pd.DataFrame:
    """For members with MC-dropout logits: AUROC_f and AURC of the entropy of one deterministic
    pass (PE) and of the MC mean softmax (MCD-PE, Galil et al.'s MC-dropout κ), and the change;
    empty when no member has MC-dropout logits."""
    iid = results[(results["study"] == "iid") & (results["calibration"] == "none")]
    have = iid.loc[iid["csf"] == "MCD-PE", "member"].unique()
    if not len(have):
        return pd.DataFrame()
    wide = iid[iid["member"].isin(have) & iid["csf"].isin(["PE", "MCD-PE"])]
    wide = wide[wide["metric"].isin(["accuracy", "auroc_f", "aurc"])]
    table = wide.pivot_table(index="member", columns=["csf", "metric"], values="value")
    out = pd.DataFrame(index=table.index)
    for metric in ("accuracy", "auroc_f", "aurc"):
        out[f"{metric}_PE"] = table[("PE", metric)]
        out[f"{metric}_MCD-PE"] = table[("MCD-PE", metric)]
        out[f"Δ{metric}"] = out[f"{metric}_MCD-PE"] - out[f"{metric}_PE"]
    return out


def spearman_table(
    members: pd.DataFrame,
    columns: tuple[str, ...] = CORRELATED,
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> pd.DataFrame:
    """Spearman's ρ between every pair of member columns, with a percentile interval from
    ``n_bootstrap`` seeded resamples of the members (with replacement; ranks with ties
    averaged; a resample where a column is constant gives no ρ and is skipped). Resamples
    whose memory (:func:`fdbench.zoo.config.bootstrap_memory`) exceeds what one allocation may
    take (:func:`fdbench.core.validation.check_allocation`) are refused before drawing them."""
    present = [c for c in columns if c in members and members[c].notna().sum() >= 3]
    rng = np.random.default_rng(seed)
    rows = []
    for i, a in enumerate(present):
        for b in present[i + 1 :]:
            pair = members[[a, b]].dropna().to_numpy(np.float64)
            n = pair.shape[0]
            if n < 3:
                continue
            check_allocation(
                bootstrap_memory(n_bootstrap, n),
                f"n_bootstrap: {n_bootstrap} resamples of {n} members",
            )
            rho = _spearman(pair[None, :, 0], pair[None, :, 1])[0]
            idx = rng.integers(0, n, (n_bootstrap, n))
            boot = _spearman(pair[idx, 0], pair[idx, 1])
            boot = boot[np.isfinite(boot)]
            alpha = (1 - confidence_level) / 2
            low, high = np.quantile(boot, [alpha, 1 - alpha]) if boot.size else (np.nan, np.nan)
            rows.append(
                {"x": a, "y": b, "members": n, "spearman": rho, "ci_lower": low, "ci_upper": high}
            )
    return pd.DataFrame(rows, columns=["x", "y", "members", "spearman", "ci_lower", "ci_upper"])


def _spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Spearman ρ (Pearson correlation of average ranks); NaN for a constant row."""
    rx = rankdata(x, axis=1)
    ry = rankdata(y, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=1) / np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))


def group_comparison(members: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per value of the metadata column ``by`` (family, regime): the number of members and the
    median of accuracy, AUROC_f, AURC, ECE, the TS change of AUROC_f and the C-OOD AUROC; empty
    when the metadata lacks the column."""
    if by not in members or members[by].isna().all():
        return pd.DataFrame()
    frame = members.assign(**{"Δauroc_f_ts": members["auroc_f_ts"] - members["auroc_f"]})
    columns = [c for c in (*_ID[:2], "aurc", "ece", "Δauroc_f_ts", "cood_auroc") if c in frame]
    grouped = frame.groupby(by, dropna=True)
    table = grouped[columns].median()
    table.insert(0, "members", grouped.size())
    return table


def cood_curves(results: pd.DataFrame, csf: str = "MSR") -> pd.DataFrame:
    """C-OOD AUROC per member (rows) and level percentile (columns) for one CSF's levels."""
    rows = results[(results["csf"] == csf) & (results["metric"] == "auroc_cood")]
    if rows.empty:
        return pd.DataFrame()
    rows = rows.assign(percentile=rows["study"].str.removeprefix("cood/").astype(float))
    table = rows.pivot_table(index="member", columns="percentile", values="value")
    return table.sort_index(axis=1)


def extra_ood_table(results: pd.DataFrame, study: str = "imagenet_o") -> pd.DataFrame:
    """OOD AUROC on an extra OOD set without levels (ImageNet-O) per member (rows) and CSF
    (columns); empty when no member has outputs on it."""
    rows = results[(results["study"] == study) & (results["metric"] == "auroc_ood")]
    if rows.empty:
        return pd.DataFrame()
    return rows.pivot_table(index="member", columns="csf", values="value").sort_index()


def cood_ranks(curves: pd.DataFrame) -> pd.DataFrame:
    """The rank of every member by C-OOD AUROC at each level (1 = best; ties averaged)."""
    return curves.rank(axis=0, ascending=False, method="average")


def cood_level_rank_correlation(curves: pd.DataFrame) -> pd.DataFrame:
    """Spearman's ρ between the member rankings of every two C-OOD levels (levels × levels)."""
    if curves.shape[0] < 3:
        return pd.DataFrame()
    return curves.corr(method="spearman")
