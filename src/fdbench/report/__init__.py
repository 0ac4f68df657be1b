"""Tables, plots, the HTML report and LaTeX export."""

from fdbench.report.gallery import (
    OVERCONFIDENT_FAILURE,
    UNDERCONFIDENT_SUCCESS,
    Gallery,
    select_gallery,
)
from fdbench.report.inputs import RunInputs, read_run_inputs
from fdbench.report.latex import escape_latex, to_booktabs
from fdbench.report.page import write_report
from fdbench.report.tables import ReportTable, classifier_accuracy, metric_tables
from fdbench.report.unknown_detection import (
    unknown_detection_display,
    unknown_detection_summary,
)

__all__ = [
    "OVERCONFIDENT_FAILURE",
    "UNDERCONFIDENT_SUCCESS",
    "Gallery",
    "ReportTable",
    "RunInputs",
    "classifier_accuracy",
    "escape_latex",
    "metric_tables",
    "read_run_inputs",
    "select_gallery",
    "to_booktabs",
    "unknown_detection_display",
    "unknown_detection_summary",
    "write_report",
]
