"""Tables, plots, the HTML report and LaTeX export.

The names below are imported from their modules on first use (module ``__getattr__``), so that
``fdbench evaluate``, which prints console tables only (:mod:`fdbench.report.console`), does not
import the page builder and its analyses (scipy.stats)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: The module of each name this package exports.
_MODULES = {
    "OVERCONFIDENT_FAILURE": "gallery",
    "UNDERCONFIDENT_SUCCESS": "gallery",
    "Gallery": "gallery",
    "select_gallery": "gallery",
    "RunInputs": "inputs",
    "read_run_inputs": "inputs",
    "escape_latex": "latex",
    "to_booktabs": "latex",
    "write_report": "page",
    "ReportTable": "tables",
    "classifier_accuracy": "tables",
    "metric_tables": "tables",
    "unknown_detection_display": "unknown_detection",
    "unknown_detection_summary": "unknown_detection",
}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return getattr(import_module(f"fdbench.report.{_MODULES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
