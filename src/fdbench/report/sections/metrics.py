"""Section: the metrics per study and CSF (seed means)."""

from __future__ import annotations

import pandas as pd

from fdbench.report.builder import ReportContext, _Builder
from fdbench.report.tables import (
    _run_groups,
    metric_tables,
)


def _metrics_section(b: _Builder, results: pd.DataFrame) -> str:
    groups = [(label, metric_tables(part)) for label, part in _run_groups(results)]
    groups = [(label, tables) for label, tables in groups if tables]
    if not groups:
        return ""
    note = (
        '<p class="note">Means over seeds; one column per study. Accuracy belongs to the '
        "classifier, not to the CSF, so it is shown once per classifier, without colours: "
        "MCD-* and *-MCD CSFs are judged with the MC-dropout classifier (arg-max of the mean MC "
        "softmax), every other CSF with the network. On a new-class study (failure-detection "
        "protocol: misclassified inliers removed, every new-class sample a failure) the value "
        "is the share of retained inliers: correctly classified inliers / (those + new-class "
        "samples). In the CSF tables colours are normalised per column on the colour-blind-safe "
        "cividis scale, from the worst value (dark blue) to the best (light yellow), and the "
        "best value of a column is bold and outlined; a "
        "column whose values all print alike has neither. AURC and AUGRC are shown ×1000, lower "
        "is better; AUROC_f higher is better; ECE of the raw confidence, lower is better (– "
        "where a CSF's confidence is not a probability; see CSF calibration for ECE after Platt "
        "scaling).</p>"
    )
    return note + "".join(
        b.group(label, "".join(b.table(t) for t in tables)) for label, tables in groups
    )


def _metrics(b: _Builder, context: ReportContext) -> str:
    results = context.inputs.results
    return "" if results is None or results.empty else _metrics_section(b, results)
