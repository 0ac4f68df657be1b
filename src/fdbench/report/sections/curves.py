"""Section: risk-coverage and generalized-risk curves."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import NamedTuple

import pandas as pd

from fdbench.report.builder import (
    ReportContext,
    _Builder,
    _lowest_seed,
    _seed_note,
    _select,
    _suffix,
)
from fdbench.report.palette import csf_colours
from fdbench.report.selection import BASELINE_CSFS, csf_ranking, csf_references, select
from fdbench.report.tables import (
    _run_groups,
    _stem,
)

#: How many of the best CSFs of a dataset × method a curve figure draws besides the references.
CURVE_TOP = 4


class CurveGroup(NamedTuple):
    """One curve figure: the run group's ``label``, its ``curves`` (lowest seed), the ``csfs``
    drawn, the ``baseline`` CSF and the ``caption`` saying which CSFs these are."""

    label: str
    curves: pd.DataFrame
    csfs: list[str]
    baseline: str | None
    caption: str


def _curve_groups(
    curves: pd.DataFrame, csfs: Sequence[str] | None, results: pd.DataFrame | None
) -> list[CurveGroup]:
    """The curve figures of the curves section, per dataset × method (its lowest seed): the
    references (:func:`fdbench.report.selection.csf_references`: the MSR baseline or ENS-MSR,
    the method's own confidence) and ``csfs`` if given, else the :data:`CURVE_TOP` best by
    :func:`fdbench.report.selection.csf_ranking` on the studies drawn; groups with none of the
    CSFs asked for are left out."""
    groups = []
    for label, part in _run_groups(_lowest_seed(curves)):
        available = [str(c) for c in dict.fromkeys(part["csf"])]
        references = csf_references(available)
        baseline = next((c for c in BASELINE_CSFS if c in available), None)
        if csfs is not None:
            asked = [c for c in csfs if c in available]
            if not asked:
                continue
            chosen = list(dict.fromkeys([*references, *asked]))
            caption = "the CSFs asked for" + (
                ", plus the references " + ", ".join(references) if references else ""
            )
        else:
            mine = None if results is None else _select(results, part)
            ranked, by = csf_ranking(mine, available, part["study"].unique())
            selection = select(ranked, references, by or "their order in the run", CURVE_TOP)
            chosen, caption = selection.shown, selection.caption()
        groups.append(CurveGroup(label, part, chosen, baseline, caption))
    return groups


def _curves_section(
    b: _Builder, curves: pd.DataFrame, csfs: Sequence[str] | None, results: pd.DataFrame | None
) -> str:
    from fdbench.report.plots import curves_figure

    how = (
        "the CSFs asked for"
        if csfs is not None
        else f"the {CURVE_TOP} best CSFs of each dataset × method by their mean rank over the "
        "studies drawn (seed-mean AUGRC; the caption of each figure says which)"
    )
    parts = [
        f'<p class="note">One training run (the lowest seed) per dataset × method: the '
        "method's own confidence (a learned head such as DG-Res, DeVries or ConfidNet, where "
        f"it has one), the MSR baseline (ENS-MSR for an ensemble) and {how}; every CSF has one "
        "fixed colour on the whole page, and the metrics of every CSF are in the Metrics "
        "section's tables. Black: the optimal CSF (every failure ranked below "
        "every success); grey, dashed: a random CSF (risk = the error rate e, generalized risk "
        "= coverage × e). Selective risk: error rate among the accepted samples; generalized "
        "risk: share of all samples that are accepted and wrong (the curve AUGRC "
        "integrates).</p>"
    ]
    for label, part, chosen, baseline, caption in _curve_groups(curves, csfs, results):
        title = "Risk-coverage curves" + _suffix(label) + _seed_note(part)
        figure = b.figure(
            curves_figure,
            (part, chosen, title, baseline),
            _stem("curves", label),
            f"{title}: {caption}",
            csf_colours(chosen),
        )
        note = f'<p class="note">Drawn: {html.escape(caption)}.</p>'
        parts.append(b.group(label, note + figure))
    return "".join(parts)


def _curves(b: _Builder, context: ReportContext) -> str:
    curves = context.inputs.curves
    if curves is None or curves.empty:
        return ""
    return _curves_section(b, curves, context.curve_csfs, context.inputs.results)
