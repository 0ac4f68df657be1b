"""Section: selective classification with guaranteed risk."""

from __future__ import annotations

import pandas as pd

from fdbench.report.builder import ReportContext, _Builder, _lowest_seed, _seed_note, _suffix
from fdbench.report.tables import (
    _run_groups,
    _stem,
    plain_table,
)


def _sgr_summary(sgr: pd.DataFrame) -> pd.DataFrame:
    """Per study and target risk: how many CSFs got a threshold, the share of those whose test
    risk exceeds r*, and their median excess."""
    feasible = (
        sgr["feasible"].astype(bool)
        if "feasible" in sgr.columns
        else pd.Series(True, index=sgr.index)
    )
    studies = list(dict.fromkeys(sgr["study"]))
    frame = pd.DataFrame(index=pd.Index(studies, name="study"))
    for target in sorted(sgr["target_risk"].unique()):
        at = sgr["target_risk"] == target
        fitted = sgr[at & feasible].groupby("study", sort=False)["excess"]
        head = f"r*={target:g}"
        frame[f"{head}: CSFs with a threshold"] = (
            feasible[at].groupby(sgr.loc[at, "study"]).sum().reindex(studies).astype("int64")
        )
        frame[f"{head}: share exceeding"] = fitted.apply(lambda e: float((e > 0).mean()))
        frame[f"{head}: median excess"] = fitted.median()
        none = frame[f"{head}: CSFs with a threshold"] == 0
        for column in (f"{head}: share exceeding", f"{head}: median excess"):
            frame[column] = frame[column].astype(object).where(~none, NO_THRESHOLD)
    return frame


#: The SGR table's cell where no CSF has a threshold for r*, explained once under the table
#: (:data:`NO_THRESHOLD_NOTE`).
NO_THRESHOLD = "no CSF †"
NO_THRESHOLD_NOTE = (
    '<p class="note">† No CSF has a threshold: r* lies below the risk the bound can certify on '
    "the validation split.</p>"
)


def _sgr_section(b: _Builder, sgr: pd.DataFrame) -> str:
    from fdbench.report.plots import sgr_figure

    delta = sgr["delta"].iloc[0] if "delta" in sgr.columns else None
    parts = [
        '<p class="note">Selection with guaranteed risk (Geifman &amp; El-Yaniv, 2017): for '
        "each CSF and target risk r*, the threshold with the largest validation coverage whose "
        "risk bound holds"
        + (f" with probability 1 − δ = {1 - delta:g}" if delta is not None else "")
        + " is applied to every test study; <i>excess</i> = realised test risk − r*. Above 0 "
        "the guarantee, valid for i.i.d. data, is broken (FD-Shifts' risk-excess analysis). "
        "Share exceeding: among the CSFs with a threshold. One training run (the lowest seed) "
        "per dataset × method; every row is in tables/sgr_thresholds.csv.</p>"
    ]
    b.csv(sgr, "sgr_thresholds")
    for label, part in _run_groups(_lowest_seed(sgr)):
        title = "SGR risk excess" + _suffix(label) + _seed_note(part)
        summary = _sgr_summary(part)
        group = b.table(plain_table(summary, _stem("sgr", label), title, 3))
        if (summary.astype(object) == NO_THRESHOLD).to_numpy().any():
            group += NO_THRESHOLD_NOTE
        if "feasible" in part.columns and not part["feasible"].astype(bool).any():
            group += (
                '<p class="note">No CSF has a threshold whose risk bound meets any target on '
                "the validation split: nothing to plot.</p>"
            )
        else:
            group += b.figure(sgr_figure, (part, title), _stem("sgr_risk_excess", label), title)
        parts.append(b.group(label, group))
    return "".join(parts)


def _sgr(b: _Builder, context: ReportContext) -> str:
    sgr = context.inputs.sgr
    return "" if sgr is None or sgr.empty else _sgr_section(b, sgr)
