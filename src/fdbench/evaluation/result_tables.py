"""The tidy results and curve tables of an evaluation, built from their rows as pandas
DataFrames or as pyarrow Tables.

:func:`fdbench.evaluation.confidences.evaluate_confidences` collects one dict per (CSF, study,
metric) and one set of thinned curve points per (study, CSF). Both table types are built here
from the same rows, with the same columns in the same order and the same types (strings, int64
``seed``/``n_samples``, float64 values), so that a Parquet file written from either reads back
as the same DataFrame. The pyarrow form spares a caller that only prints and writes the tables
(``fdbench evaluate`` on stored outputs) pandas' import, about a quarter of a second.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: The leading columns of the results table, in order (then ``n_samples`` and any others).
RESULT_COLUMNS = ("dataset", "method", "seed", "csf", "study", "metric", "value")
#: The run columns appended to the curve table.
RUN_COLUMNS = ("dataset", "method", "seed")
#: The table types an evaluation returns.
TableType = Literal["pandas", "arrow"]
TABLE_TYPES = get_args(TableType)

#: A curve's coverages, selective and generalized risks (:mod:`fdbench.evaluation.curves`).
CurvePoints = tuple[np.ndarray, np.ndarray, np.ndarray]
#: Per study, each CSF's thinned curve points.
StudyCurves = Sequence[tuple[str, Sequence[tuple[str, CurvePoints]]]]


def check_table_type(output: str) -> None:
    """``output`` names a table type of :data:`TABLE_TYPES`."""
    if output not in TABLE_TYPES:
        raise ValueError(f"output must be one of {list(TABLE_TYPES)}; got {output!r}")


def result_columns(rows: Sequence[Mapping[str, object]]) -> list[str]:
    """The columns of the results table of ``rows``: :data:`RESULT_COLUMNS`, ``n_samples``,
    then every other key in the order the rows first name it (``std``, ``ci_lower``,
    ``ci_upper`` with bootstrap intervals)."""
    ordered = [*RESULT_COLUMNS, "n_samples"]
    seen = dict.fromkeys(ordered)
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def results_frame(rows: Sequence[Mapping[str, object]]) -> pd.DataFrame:
    """The results table of ``rows`` as a DataFrame (columns :func:`result_columns`)."""
    import pandas as pd

    return pd.DataFrame(rows)[result_columns(rows)]


def results_arrow(rows: Sequence[Mapping[str, object]]) -> pa.Table:
    """The results table of ``rows`` as a pyarrow Table with :func:`results_frame`'s columns
    and types (:func:`arrow_column`)."""
    import pyarrow as pa

    return pa.table({c: arrow_column([row.get(c) for row in rows]) for c in result_columns(rows)})


def arrow_column(values: Sequence[object]) -> pa.Array:
    """``values`` as the pyarrow array of the column pandas would make of them: strings
    (``None`` for a missing one) as ``large_string``, integers as int64, numbers with a float
    or a ``None`` among them as float64 (``None`` as NaN, as in a DataFrame built from rows
    that lack the key).

    The arrays are built from their buffers: ``pa.array`` imports pandas (pyarrow's pandas
    shim checks every input against it), which these tables are built to do without. Other
    values go to ``pa.array``."""
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, str) for v in present):
        return _strings(values)
    numbers = not any(isinstance(v, bool | np.bool_) for v in present) and all(
        isinstance(v, int | float | np.integer | np.floating) for v in present
    )
    integers = numbers and all(isinstance(v, int | np.integer) for v in present)
    if integers and present and len(present) == len(values):
        return _from_numpy(pa.int64(), np.array(values, np.int64))
    if numbers:
        filled = [np.nan if v is None else v for v in values]
        return _from_numpy(pa.float64(), np.array(filled, np.float64))
    return pa.array(values)


def _from_numpy(kind: pa.DataType, values: np.ndarray) -> pa.Array:
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(kind, values.size, [None, pa.py_buffer(values)])


def _strings(values: Sequence[str | None], counts: Sequence[int] | None = None) -> pa.Array:
    """A ``large_string`` array of ``values`` (``None`` null), each repeated its count of
    ``counts`` times (once without them)."""
    import pyarrow as pa

    counts = [1] * len(values) if counts is None else counts
    encoded = [b"" if v is None else v.encode() for v in values]
    lengths = np.repeat([len(b) for b in encoded], counts).astype(np.int64)
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    valid = np.repeat([v is not None for v in values], counts).astype(bool)
    bitmap = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    data = b"".join(b * n for b, n in zip(encoded, counts, strict=True))
    buffers = [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(
        pa.large_string(), lengths.size, buffers, null_count=int(valid.size - valid.sum())
    )


def curves_frame(curves: StudyCurves, info: Mapping[str, object]) -> pd.DataFrame:
    """The curve table (:func:`fdbench.evaluation.curves.curve_table`'s columns, then
    :data:`RUN_COLUMNS` from ``info``) of every study's thinned curves, as a DataFrame."""
    import pandas as pd

    from fdbench.evaluation.curves import curve_frame

    frames = []
    for study, points in curves:
        table = pd.concat([curve_frame(study, csf, p) for csf, p in points], ignore_index=True)
        frames.append(table.assign(**{k: info[k] for k in RUN_COLUMNS}))
    return pd.concat(frames, ignore_index=True)


def curves_arrow(curves: StudyCurves, info: Mapping[str, object]) -> pa.Table:
    """:func:`curves_frame` as a pyarrow Table (the same columns, values and types)."""
    import pyarrow as pa

    from fdbench.evaluation.curves import CURVE_COLUMNS

    pairs = [(study, csf, p) for study, points in curves for csf, p in points]
    counts = [p[0].size for _, _, p in pairs]
    n = sum(counts)
    columns = {
        "study": _strings([study for study, _, _ in pairs], counts),
        "csf": _strings([csf for _, csf, _ in pairs], counts),
    }
    for k, name in enumerate(CURVE_COLUMNS[2:]):
        parts = [np.asarray(p[k], np.float64) for _, _, p in pairs]
        columns[name] = _from_numpy(pa.float64(), np.concatenate(parts) if parts else np.empty(0))
    for name in RUN_COLUMNS:
        value = info[name]
        if isinstance(value, str):
            columns[name] = _strings([value], [n])
        elif isinstance(value, int | np.integer) and not isinstance(value, bool):
            columns[name] = _from_numpy(pa.int64(), np.full(n, value, np.int64))
        else:
            columns[name] = arrow_column([value] * n)
    return pa.table(columns)


def concat_tables(tables: Sequence[pd.DataFrame] | Sequence[pa.Table]) -> pd.DataFrame | pa.Table:
    """The rows of ``tables`` (all of one type) one after the other; a column some tables lack
    is NaN (pandas) or null (pyarrow) in their rows."""
    if tables and hasattr(tables[0], "to_pylist"):
        import pyarrow as pa

        return pa.concat_tables(tables, promote_options="default")
    import pandas as pd

    return pd.concat(tables, ignore_index=True)
