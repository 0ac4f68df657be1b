"""Section: how float16/32/64 softmax rounding changes the metrics."""

from __future__ import annotations

import pandas as pd

from fdbench.report.builder import ReportContext, _Builder
from fdbench.report.tables import plain_table


def _display_scale(column: str) -> float:
    """The factor a column of metric values is shown with (its spec's ``scale``: ×1000 for
    AURC-type metrics); 1 for a column that is no metric."""
    from fdbench.metrics import find_metric

    spec = find_metric(column)
    return 1.0 if spec is None else spec.scale


def _rounding_section(b: _Builder, rounding: pd.DataFrame) -> str:
    text = [c for c in rounding.columns if not pd.api.types.is_numeric_dtype(rounding[c])]
    keys = text or [rounding.columns[0]]
    frame = rounding.copy()
    frame.index = frame[keys].astype(str).agg(" / ".join, axis=1)
    frame.index.name = " / ".join(map(str, keys))
    frame = frame.drop(columns=keys)
    scales = {c: _display_scale(str(c)) for c in frame.columns}
    for column, scale in scales.items():
        if scale != 1:
            frame[column] = frame[column] * scale
    frame = frame.rename(columns={c: f"{c} ×{s:g}" for c, s in scales.items() if s != 1})
    note = (
        '<p class="note">How storing or computing the outputs at lower float precision changes '
        "the metrics of the first method's lowest seed on the i.i.d. test set (FD-Shifts stored "
        "float16 outputs; fdbench keeps float64). AURC ×1000, as everywhere on this page.</p>"
    )
    return note + b.table(
        plain_table(frame, "float_precision", "Rounding of float16/32/64 outputs", 6)
    )


def _precision(b: _Builder, context: ReportContext) -> str:
    rounding = context.inputs.rounding
    return "" if rounding is None or rounding.empty else _rounding_section(b, rounding)
