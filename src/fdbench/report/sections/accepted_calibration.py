"""Report section: accuracy and ECE of the samples each scoring method accepts at a coverage."""

from __future__ import annotations

import pandas as pd

from fdbench.report.builder import ReportContext, _Builder
from fdbench.report.tables import (
    ReportTable,
)

#: Columns the section needs in ``accepted_calibration.parquet``.
ACCEPTED_COLUMNS = ("study", "csf", "target_coverage", "coverage", "accuracy", "ece")


def _pivot(table: pd.DataFrame, column: str) -> pd.DataFrame:
    frame = table.pivot_table(
        index="scoring_method", columns="study", values=column, sort=False, dropna=False
    )
    frame = frame.reindex(
        index=list(dict.fromkeys(table["scoring_method"])),
        columns=list(dict.fromkeys(table["study"])),
    )
    frame.index.name = "scoring method"
    frame.columns.name = None
    return frame


def accepted_calibration_section(b, accepted: pd.DataFrame) -> str:
    """The section's HTML: per target coverage, accuracy and ECE of the accepted samples
    (scoring method × study, means over the seeds) and their realised coverage in a CSV.

    ``accepted`` holds the rows of :func:`fdbench.analysis.accepted_calibration_table` of
    every run (with ``dataset``, ``method``, ``seed`` where known); ``b`` is the report's
    builder.
    """
    from fdbench.analysis._scoring import scoring_method_labels

    table = accepted.assign(scoring_method=scoring_method_labels(accepted))
    if "dataset" in table.columns and table["dataset"].nunique() > 1:
        table = table.assign(study=table["dataset"].astype(str) + ": " + table["study"])
    parts = []
    for target, part in table.groupby("target_coverage", sort=True):
        means = part.groupby(["scoring_method", "study"], sort=False).agg(
            accuracy=("accuracy", "mean"),
            ece=("ece", "mean"),
            coverage=("coverage", "mean"),
            n_runs=("accuracy", "size"),
        )
        means = means.reset_index()
        b.csv(means, f"accepted_calibration_{100 * target:g}")
        head = f"at {100 * target:g} % coverage"
        parts.append(
            b.table(
                ReportTable(
                    f"accepted_accuracy_{100 * target:g}",
                    f"Accuracy of the accepted samples {head} (mean over seeds)",
                    _pivot(means, "accuracy"),
                    4,
                    True,
                )
            )
        )
        parts.append(
            b.table(
                ReportTable(
                    f"accepted_ece_{100 * target:g}",
                    f"ECE (15 bins) of the accepted samples {head} (mean over seeds)",
                    _pivot(means, "ece"),
                    4,
                    False,
                )
            )
        )
    note = (
        '<p class="note">What a deployer sees after thresholding: each scoring method (training '
        "method / CSF) accepts the samples whose confidence reaches the threshold τ of the "
        "target coverage on the study, τ being the largest confidence whose share of samples "
        "with confidence ≥ τ reaches the target; samples tied at τ are all accepted, so the "
        "realised coverage (in the CSV) can exceed the target, the operating point of "
        "selective_risk_at_coverage. Accuracy: correct share of the accepted samples (on a "
        "new-class study with misclassified inliers removed and every new-class sample a "
        "failure). ECE: 15 equal-width bins over the accepted samples, of the CSF's confidence "
        "as a probability: Platt-scaled on the validation split where the CSF is not one "
        "(the CSF calibration section's treatment), as it is otherwise; – where it cannot be "
        "scaled.</p>"
    )
    return note + "".join(parts)


def _accepted(b: _Builder, context: ReportContext) -> str:
    accepted = context.inputs.accepted_calibration
    if accepted is None or accepted.empty:
        return ""

    return accepted_calibration_section(b, accepted)
