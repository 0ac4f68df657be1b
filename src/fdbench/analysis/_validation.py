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


def require_numeric(table: pd.DataFrame, columns: Iterable[str], name: str) -> None:
    """Raise ``TypeError`` naming the first of ``columns`` whose values are not real numbers
    (bool, integer or float): text, complex, dates, durations or Python objects are not
    coerced (see :func:`fdbench.metrics._validation.as_real_array`)."""
    for column in columns:
        dtype = table[column].dtype
        if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)) or (
            pd.api.types.is_complex_dtype(dtype)
        ):
            raise TypeError(f"{name}: column {column!r} must hold real numbers, got dtype {dtype}")


def present(columns: Sequence[str], table: pd.DataFrame) -> list[str]:
    """The names of ``columns`` that ``table`` has, in order."""
    return [c for c in columns if c in table.columns]


def metric_rows(table: pd.DataFrame, metric: str, name: str) -> pd.DataFrame:
    """The rows of ``table`` for ``metric``; raise if there are none."""
    require_columns(table, ("metric", "value"), name)
    require_numeric(table, ("value",), name)
    rows = table[table["metric"] == metric]
    if rows.empty:
        available = sorted(table["metric"].unique())
        raise ValueError(f"{name} has no rows for metric {metric!r}; it has {available}")
    return rows
