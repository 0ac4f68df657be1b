"""Section: unknown detection in Kim et al.'s Table 5 layout."""

from __future__ import annotations

import pandas as pd

from fdbench.report.builder import ReportContext, _Builder
from fdbench.report.tables import ReportTable


def _unknown_detection_section(b: _Builder, summary: pd.DataFrame) -> str:
    from fdbench.report.unknown_detection import unknown_detection_display

    note = (
        '<p class="note">Kim et al.\'s Table 5 layout: mean ± standard deviation over seeds. '
        "AURC and FPR@95TPR of unknown detection on the pooled set (in-distribution test ∪ "
        "every near-OoD ∪ every far-OoD set, every OoD sample an error); misclassification "
        "detection (MD) on the in-distribution test set only; OoD detection with the "
        "in-distribution/OoD label against the pooled near-OoD and far-OoD sets; the AURC "
        "improvement is (AURC_base − AURC_m) / AURC_base over the baseline's MSR. AURC ×1000, "
        "the others in per cent.</p>"
    )
    b.csv(summary, "unknown_detection_summary")
    frame = unknown_detection_display(summary)
    return note + b.table(ReportTable("unknown_detection", "Unknown detection", frame))


def _unknown_detection(b: _Builder, context: ReportContext) -> str:
    summary = context.unknown_detection
    return "" if summary is None or summary.empty else _unknown_detection_section(b, summary)
