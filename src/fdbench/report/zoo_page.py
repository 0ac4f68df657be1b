"""The page of a zoo run (``zoo_report.html``): what was run, the member table first, the figures,
then every analysis table as a collapsed block, each shown as a reader wants it (no pandas
index column, no ``x``/``y`` column names, integer ranks)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd

from fdbench.report.html import details_html, table_html
from fdbench.report.tables import ReportTable

#: The member table's columns the page shows (where present), in order; members.csv has all.
MEMBER_COLUMNS = (
    "family",
    "regime",
    "params",
    "accuracy",
    "auroc_f",
    "aurc",
    "ece",
    "temperature",
    "auroc_f_ts",
    "cood_auroc",
    "aurc_maxlogit_pnorm",
    "aurc_pnorm_softmax",
)


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as the page shows it: a pair table's ``x``/``y`` columns become its row label
    ("x ~ y", index "pair"), any other unnamed range index becomes the first column's values,
    column names are strings, and a column of whole numbers holds integers."""
    shown = frame.copy()
    if isinstance(shown.index, pd.RangeIndex) and {"x", "y"} <= set(shown.columns):
        pairs = [f"{x} ~ {y}" for x, y in zip(shown["x"], shown["y"], strict=True)]
        shown = shown.drop(columns=["x", "y"])
        shown.index = pd.Index(pairs, name="pair")
    elif isinstance(shown.index, pd.RangeIndex) and shown.shape[1] > 1:
        shown = shown.set_index(shown.columns[0])
    shown.columns = [str(c) for c in shown.columns]
    for column in shown.columns:
        values = shown[column]
        if values.dtype.kind == "f":
            finite = values.to_numpy(np.float64)
            if np.isfinite(finite).all() and (finite == np.round(finite)).all():
                shown[column] = values.astype("int64")
    return shown


def member_display(members: pd.DataFrame) -> pd.DataFrame:
    """The member table's :data:`MEMBER_COLUMNS` that it has, members as rows."""
    return display_frame(members[[c for c in MEMBER_COLUMNS if c in members.columns]])


def _run_list(items: Sequence[tuple[str, str]]) -> str:
    rows = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in items)
    return f'<dl class="run">{rows}</dl>'


def zoo_sections(
    run: Sequence[tuple[str, str]],
    members: pd.DataFrame,
    figures: Sequence[tuple[str, str, str]],
    tables: Sequence[tuple[str, str, pd.DataFrame, bool | None]],
) -> list[tuple[str, str, str]]:
    """The sections of the zoo page: "What was run" (``run``: label, text), the members
    (:func:`member_display`; every column in members.csv), the first figure open and the others
    collapsed (``figures``: anchor, title, ``<img>``), then every table collapsed (``tables``:
    name, title, frame, higher is better)."""
    shown = member_display(members)
    left = len(members.columns) - shown.shape[1]
    member_body = table_html(ReportTable("members", "Per member (MSR)", shown, 4, None)) + (
        f'<p class="note">{left} more columns (every metric before and after temperature '
        "scaling, the fitted p's) are in members.csv.</p>"
        if left
        else ""
    )
    sections = [("run", "What was run", _run_list(run)), ("members", "Members", member_body)]
    for n, (anchor, title, image) in enumerate(figures):
        sections.append(
            (
                anchor,
                title,
                image if n == 0 else details_html(f"{anchor}-body", "Show figure", image),
            )
        )
    for name, title, frame, higher in tables:
        if frame.empty or name == "members":
            continue
        body = table_html(ReportTable(name, title, display_frame(frame), 4, higher))
        sections.append((name, title, details_html(f"{name}-body", "Show table", body)))
    return sections
