"""Section: risk-coverage and generalized-risk curves."""

from __future__ import annotations

from collections.abc import Sequence

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
from fdbench.report.tables import (
    _run_groups,
    _stem,
)

BASELINE_CSFS = ("MSR", "ENS-MSR")


def _curve_csfs(curves: pd.DataFrame, results: pd.DataFrame | None, limit: int = 4) -> list[str]:
    """The ``limit`` CSFs of ``curves`` with the lowest mean AURC in ``results`` (else the
    first ones)."""
    available = list(curves["csf"].unique())
    if results is not None and (results["metric"] == "aurc").any():
        aurc = results[results["metric"] == "aurc"]
        means = aurc.groupby("csf")["value"].mean().sort_values(kind="stable")
        ranked = [c for c in means.index if c in available]
        return ranked[:limit] or available[:limit]
    return available[:limit]


def _curve_groups(
    curves: pd.DataFrame, csfs: Sequence[str] | None, results: pd.DataFrame | None
) -> list[tuple[str, pd.DataFrame, list[str], str | None]]:
    """The curve figures of the curves section: per dataset × method (its lowest seed) the
    label, the curves, the CSFs drawn (the method's own confidence, the MSR baseline and
    ``csfs`` if given, else :func:`_curve_csfs`) and the baseline; groups with none of the
    CSFs asked for are left out."""
    from fdbench.csf import csf_specs

    own_csfs = [s.name for s in csf_specs().values() if s.head is not None and s.judged_by != "mcd"]
    groups = []
    for label, part in _run_groups(_lowest_seed(curves)):
        available = list(part["csf"].unique())
        if csfs is not None:
            asked = [c for c in csfs if c in available]
        else:
            mine = None if results is None else _select(results, part)
            asked = _curve_csfs(part, mine)
        if not asked:
            continue
        baseline = next((c for c in BASELINE_CSFS if c in available), None)
        own = [c for c in own_csfs if c in available]
        chosen = list(dict.fromkeys([*own, *([baseline] if baseline else []), *asked]))
        groups.append((label, part, chosen, baseline))
    return groups


def _curves_section(
    b: _Builder, curves: pd.DataFrame, csfs: Sequence[str] | None, results: pd.DataFrame | None
) -> str:
    from fdbench.report.plots import curves_figure

    how = (
        "the CSFs asked for"
        if csfs is not None
        else "the CSFs with the lowest mean AURC of each dataset × method"
    )
    parts = [
        f'<p class="note">One training run (the lowest seed) per dataset × method: the '
        "method's own confidence (a learned head such as DG-Res, DeVries or ConfidNet, where "
        f"it has one), the MSR baseline (ENS-MSR for an ensemble) and {how}; every CSF has one "
        "fixed colour on the whole page. Black: the optimal CSF (every failure ranked below "
        "every success); grey, dashed: a random CSF (risk = the error rate e, generalized risk "
        "= coverage × e). Selective risk: error rate among the accepted samples; generalized "
        "risk: share of all samples that are accepted and wrong (the curve AUGRC "
        "integrates).</p>"
    ]
    for label, part, chosen, baseline in _curve_groups(curves, csfs, results):
        title = "Risk-coverage curves" + _suffix(label) + _seed_note(part)
        figure = b.figure(
            curves_figure,
            (part, chosen, title, baseline),
            _stem("curves", label),
            title,
            csf_colours(chosen),
        )
        parts.append(b.group(label, figure))
    return "".join(parts)


def _curves(b: _Builder, context: ReportContext) -> str:
    curves = context.inputs.curves
    if curves is None or curves.empty:
        return ""
    return _curves_section(b, curves, context.curve_csfs, context.inputs.results)
