"""Section: CSF calibration (ECE after Platt scaling, reliability diagrams)."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from fdbench.report.builder import (
    ReportContext,
    _Builder,
    _lowest_seed,
    _seed_note,
    _select,
    _suffix,
)
from fdbench.report.selection import csf_ranking, csf_references, select
from fdbench.report.tables import (
    ReportTable,
    _run_groups,
    _stem,
)

COLLAPSED_MARK = "*"


def _run_ece(reliability: pd.DataFrame) -> pd.DataFrame:
    """ECE per run, CSF and study from reliability bins: Σ count·|accuracy − confidence| /
    Σ count, with the run's ``treatment`` and ``platt_collapsed`` where the bins carry them."""
    keys = [c for c in ("dataset", "method", "seed") if c in reliability.columns]
    keys += ["csf", "study"]
    filled = reliability[reliability["count"] > 0]
    gap = (filled["accuracy"] - filled["confidence"]).abs() * filled["count"]
    sums = filled.assign(gap=gap).groupby(keys, sort=False)[["gap", "count"]].sum()
    ece = (sums["gap"] / sums["count"]).rename("value").reset_index()
    flags = [c for c in ("treatment", "platt_collapsed") if c in reliability.columns]
    if flags:
        first = reliability.groupby(keys, sort=False)[flags].first().reset_index()
        ece = ece.merge(first, on=keys, how="left")
    if "platt_collapsed" not in ece.columns:
        ece["platt_collapsed"] = False
    return ece


def _ece_table(reliability: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """CSF × study mean ECE over the runs (seeds) of ``reliability``, and the CSF × study
    table of where the Platt fit of any run collapsed (``fdbench.analysis.mean_calibration``)."""
    from fdbench.analysis import mean_calibration

    mean = mean_calibration(_run_ece(reliability))
    shape = {
        "index": list(dict.fromkeys(reliability["csf"])),
        "columns": list(dict.fromkeys(reliability["study"])),
    }
    tables = []
    for column in ("value", "platt_collapsed"):
        table = mean.pivot(index="csf", columns="study", values=column).reindex(**shape)
        table.index.name = "CSF"
        table.columns.name = None
        tables.append(table)
    return tables[0], tables[1].fillna(False).astype(bool)


def _marked(ece: pd.DataFrame, collapsed: pd.DataFrame, digits: int) -> pd.DataFrame:
    """``ece`` with collapsed cells as text (value + :data:`COLLAPSED_MARK`): text cells get no
    heat colour and are never the best of their column."""
    from fdbench.report.latex import format_number

    if not collapsed.to_numpy().any():
        return ece
    shown = ece.astype(object)
    for i, j in zip(*np.nonzero(collapsed.to_numpy()), strict=True):
        shown.iat[i, j] = format_number(ece.iat[i, j], digits) + COLLAPSED_MARK
    return shown


def _calibration_section(
    b: _Builder, reliability: pd.DataFrame, results: pd.DataFrame | None = None
) -> str:
    """The section's HTML: per run group the ECE table of every CSF and the reliability
    diagrams of its lowest seed, of a selection where there are more CSFs than
    :data:`fdbench.report.selection.TOP` and the references (ranked by
    :func:`fdbench.report.selection.csf_ranking` on ``results``)."""
    from fdbench.report.plots import reliability_figure

    parts = [
        '<p class="note">FD-Shifts\' CSF calibration (Table 10): CSFs whose range is not a '
        "probability are Platt-scaled on the validation split of each run, TEMP-MLS (the "
        "temperature-scaled softmax) and probabilities (MSR, MCD-MSR, the learned heads) are "
        "used as they are (docs/csf.md). ECE with equal-width bins, averaged over the runs "
        f"(seeds) of each dataset × method. {COLLAPSED_MARK}: the Platt fit collapsed in at least "
        "one run (it maps nearly every sample to one probability, or all of a study's samples "
        "fall into one bin), so the ECE says little; such a cell is never marked best. The "
        "reliability diagrams show one run (the lowest seed).</p>"
    ]
    for label, part in _run_groups(reliability):
        ece, collapsed = _ece_table(part)
        b.csv(_run_ece(part), _stem("ece_after_scaling_runs", label))
        table = ReportTable(
            _stem("ece_after_scaling", label),
            "ECE after calibration on validation, mean over runs" + _suffix(label),
            _marked(ece, collapsed, 4),
            4,
            False,
        )
        lowest = _lowest_seed(part)
        csfs = list(dict.fromkeys(lowest["csf"]))
        ranked, by = csf_ranking(
            None if results is None else _select(results, part), csfs, lowest["study"].unique()
        )
        title = "Reliability after calibration on validation" + _suffix(label)
        drawn = title + _seed_note(lowest)
        note = ""
        if by is not None and (chosen := select(ranked, csf_references(csfs), by)).partial:
            place = {csf: i for i, csf in enumerate(chosen.shown)}
            lowest = lowest[lowest["csf"].isin(place)].sort_values(
                "csf", key=lambda c: c.map(place), kind="stable"
            )
            drawn += f", top {chosen.top} of {chosen.total} + references"
            note = (
                f'<p class="note">The reliability diagrams draw {html.escape(chosen.caption())}'
                "; the ECE of every CSF is in the table above.</p>"
            )
        figure = b.figure(
            reliability_figure,
            (lowest, drawn),
            _stem("reliability", label),
            title,
        )
        parts.append(b.group(label, b.table(table) + note + figure))
    return "".join(parts)


def _calibration(b: _Builder, context: ReportContext) -> str:
    reliability = context.inputs.reliability
    if reliability is None or reliability.empty:
        return ""
    return _calibration_section(b, reliability, context.inputs.results)
