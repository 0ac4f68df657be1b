"""Checks shared by the analysis functions: required columns and metric selection."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd


def require_columns(table: pd.DataFrame, columns: Iterable[str], name: str) -> None:
    """Raise if ``table`` is not a DataFrame holding every name in ``columns``."""
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame; got {type(table).__name__}")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; it has {list(table.columns)}")


def present(columns: Sequence[str], table: pd.DataFrame) -> list[str]:
    """The names of ``columns`` that ``table`` has, in order."""
    return [c for c in columns if c in table.columns]


def metric_rows(table: pd.DataFrame, metric: str, name: str) -> pd.DataFrame:
    """The rows of ``table`` for ``metric``; raise if there are none."""
    require_columns(table, ("metric", "value"), name)
    rows = table[table["metric"] == metric]
    if rows.empty:
        available = sorted(table["metric"].unique())
        raise ValueError(f"{name} has no rows for metric {metric!r}; it has {available}")
    return rows
