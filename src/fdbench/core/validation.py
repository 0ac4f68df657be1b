"""The one input boundary: checks of every array, table and stated size that enters fdbench.

Every array or table a user gives (outputs to evaluate, zoo members and OOD pools, results
tables for the report, sizes a file header or a config states) passes through these functions.
Each refuses what it cannot interpret with one ``TypeError`` (wrong kind of value: text,
complex, dates, Python objects) or ``ValueError`` (wrong shape, non-finite value, value out of
range, repeated key, size beyond the memory there is) whose message names the argument, file
or column, and what was expected; nothing is coerced.
"""

from __future__ import annotations

import math
import os
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LOSS_COLUMNS",
    "LOSS_LIKE_COLUMNS",
    "LOSS_META_COLUMNS",
    "REAL_KINDS",
    "LossColumns",
    "as_real_array",
    "check_allocation",
    "check_config_scalar",
    "check_config_scalars",
    "check_finite",
    "check_integers",
    "check_results_table",
    "check_unique",
    "first_non_finite",
    "format_bytes",
    "is_loss_like",
    "loss_table_columns",
    "memory_limit",
    "npz_headers",
    "real_column",
]

#: dtype kinds that hold real numbers: bool (an exact 0/1), integers and floats.
REAL_KINDS = "buif"

_KIND_NAMES = {
    "c": "complex numbers",
    "U": "text",
    "S": "bytes",
    "O": "Python objects",
    "M": "dates",
    "m": "durations",
    "V": "raw records",
}


def _kind_name(dtype: np.dtype) -> str:
    return _KIND_NAMES.get(dtype.kind, "not a number")


def as_real_array(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as a float64 array, refusing what is not a real number.

    Complex numbers (whose imaginary part a cast would drop), strings (which NumPy would parse
    or compare as text), dates, durations and Python objects raise ``TypeError`` naming
    ``name``: they are not coerced. Booleans are accepted as the exact numbers 0 and 1.
    """
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"{name}: expected an array of numbers, got {type(values).__name__}"
        ) from err
    if arr.dtype.kind not in REAL_KINDS:
        raise TypeError(
            f"{name}: expected real numbers (bool, int or float), got dtype {arr.dtype} "
            f"({_kind_name(arr.dtype)})"
        )
    return arr.astype(np.float64, copy=False)


def _first(mask: np.ndarray) -> str:
    index = tuple(int(i) for i in np.argwhere(mask)[0])
    return str(index[0]) if len(index) == 1 else str(index)


def check_finite(values: np.ndarray, name: str) -> None:
    """Raise ``ValueError`` naming ``name``, the count and the first index of NaN/inf values."""
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(
            f"{name}: expected finite numbers, got {int(bad.sum())} NaN/infinite value(s), "
            f"first at index {_first(bad)}"
        )


def check_integers(
    values: ArrayLike, name: str, *, low: int | None = None, high: int | None = None
) -> np.ndarray:
    """``values`` as int64, refusing non-numbers (``TypeError``), non-integral or non-finite
    numbers and values outside ``[low, high)`` (``ValueError`` naming the first)."""
    arr = np.asarray(values)
    if arr.dtype.kind not in REAL_KINDS:
        raise TypeError(
            f"{name}: expected integers, got dtype {arr.dtype} ({_kind_name(arr.dtype)})"
        )
    if arr.dtype.kind == "f":
        bad = ~(np.isfinite(arr) & (arr == np.round(arr)))
        if bad.any():
            raise ValueError(
                f"{name}: expected integers, got {arr[bad][0].item()!r} at index {_first(bad)} "
                f"({int(bad.sum())} such value(s))"
            )
    ints = arr.astype(np.int64)
    bad = np.zeros(ints.shape, dtype=bool)
    if low is not None:
        bad |= ints < low
    if high is not None:
        bad |= ints >= high
    if bad.any():
        bounds = f"[{'-inf' if low is None else low}, {'inf' if high is None else high})"
        raise ValueError(
            f"{name}: expected integers in {bounds}, got {int(ints[bad][0])} at index "
            f"{_first(bad)} ({int(bad.sum())} out of range)"
        )
    return ints


def memory_limit() -> int:
    """The bytes one allocation may take at most: the machine's physical memory, or the
    process's address-space limit (``ulimit -v``) where that is lower."""
    limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
    except (ImportError, OSError, ValueError):
        pass
    return int(limit)


def format_bytes(n: float) -> str:
    """``n`` bytes in the largest binary unit below it (``5.1 TiB``)."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"


def check_allocation(n_bytes: float, what: str) -> None:
    """Refuse, before allocating, an array of ``n_bytes`` larger than :func:`memory_limit`:
    ``ValueError`` naming ``what`` and the memory it would need."""
    limit = memory_limit()
    if n_bytes > limit:
        raise ValueError(
            f"{what} would need {format_bytes(n_bytes)} of memory, more than the "
            f"{format_bytes(limit)} available; refusing to read it"
        )


def _npy_header(fh: IO[bytes], where: str) -> tuple[tuple[int, ...], np.dtype, int]:
    """Shape, dtype and header length of the ``.npy`` stream ``fh`` (positioned at its start)."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh, max_header_size=100_000)
    elif version in ((2, 0), (3, 0)):
        reader = np.lib.format.read_array_header_2_0
        shape, fortran, dtype = reader(fh, max_header_size=100_000)
    else:
        raise ValueError(f"{where}: .npy format {version} is not supported")
    del fortran
    return tuple(int(s) for s in shape), dtype, fh.tell()


def npz_headers(
    path: str | os.PathLike[str] | IO[bytes], what: str, *, name: str | None = None
) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The shape and dtype of every array of the ``.npz`` archive at ``path`` (or in the open
    binary file ``path``, called ``name`` in messages), read from the ``.npy`` headers alone
    (nothing is allocated).

    Each header is checked against the size of its zip entry (a header claiming 10^11 × 7
    values in a small entry is damaged or hostile) and the array against :func:`memory_limit`
    (:func:`check_allocation`); arrays of Python objects are refused (they would need
    unpickling). ``ValueError`` names ``what``, the file and the array.
    """
    if name is not None:
        shown = name
    elif isinstance(path, str | os.PathLike):
        shown = os.fspath(path)
    else:
        raise TypeError("name: required with an open file, to name it in messages")
    headers: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                continue
            key = info.filename.removesuffix(".npy")
            where = f"{what} {shown!r}: array {key!r}"
            with archive.open(info) as fh:
                shape, dtype, offset = _npy_header(fh, where)
            if dtype.hasobject:
                raise ValueError(f"{where} holds Python objects (dtype {dtype}); expected numbers")
            need = math.prod(shape) * dtype.itemsize
            if offset + need != info.file_size:
                raise ValueError(
                    f"{where}: its header states shape {shape} of {dtype} "
                    f"({format_bytes(need)}), but the archive holds "
                    f"{format_bytes(max(info.file_size - offset, 0))} for it"
                )
            check_allocation(need, where)
            headers[key] = (shape, dtype)
    return headers


def first_non_finite(data: Any, where: str = "") -> str | None:
    """The dotted path of the first NaN or infinite number in parsed YAML/JSON data, if any."""
    if isinstance(data, float) and not math.isfinite(data):
        return where or "<root>"
    items = (
        data.items()
        if isinstance(data, dict)
        else (enumerate(data) if isinstance(data, list) else ())
    )
    for key, value in items:
        found = first_non_finite(value, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def _line(source: str, row: int) -> str:
    return f" (line {row + 2} of the file)" if source.lower().endswith(".csv") else ""


def real_column(column: pd.Series, name: str, source: str) -> np.ndarray:
    """The float64 values of the table column ``name`` of ``source``; a cell that is not a real
    number is an error naming the column and row (nothing is coerced: not text, complex, dates
    or durations). Missing cells read as NaN."""
    kind = column.dtype.kind
    if kind in REAL_KINDS:
        return column.to_numpy(dtype=np.float64)
    if kind in "OSUT":
        import pandas as pd  # lazy: pandas costs ~0.4 s to import

        parsed = pd.to_numeric(column, errors="coerce")
        bad = parsed.isna().to_numpy() & column.notna().to_numpy()
        if not bad.any() and parsed.dtype.kind in REAL_KINDS:
            return parsed.to_numpy(dtype=np.float64)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{source}: column {name!r}, row {row}{_line(source, row)}: "
                f"{column.iloc[row]!r} is not a number ({int(bad.sum())} such cell(s))"
            )
    raise TypeError(f"{source}: column {name!r} must hold real numbers, got dtype {column.dtype}")


def check_unique(table: pd.DataFrame, keys: Sequence[str], source: str) -> None:
    """Raise ``ValueError`` naming the first key (values of ``keys``) held by more than one row
    of ``table``: a table that says two things about one result is not averaged or guessed."""
    repeated = table.duplicated(subset=list(keys), keep=False).to_numpy()
    if not repeated.any():
        return
    first = int(np.flatnonzero(repeated)[0])
    key = ", ".join(
        f"{k}={table[k].iloc[first]!r}" for k in keys if not _blank(table[k].iloc[first])
    )
    groups = table.groupby(list(keys), dropna=False, sort=False).ngroup().to_numpy()
    twins = np.flatnonzero(groups == groups[first])
    shown = ", ".join(str(r) for r in twins[:3])
    raise ValueError(
        f"{source}: {twins.size} rows ({shown}) hold the same result ({key}); expected one "
        "row per result"
    )


def _blank(value: Any) -> bool:
    return value == "" or (isinstance(value, float) and math.isnan(value))


#: Columns of a results table that are text: they name a result.
RESULT_TEXT_COLUMNS = ("dataset", "method", "csf", "study", "metric", "protocol", "params")
#: Columns of a results table that are integers.
RESULT_INTEGER_COLUMNS = ("seed", "candidate", "n_samples")
#: Columns of a results table that hold a result (or its interval), not its name.
RESULT_VALUE_COLUMNS = ("value", "std", "ci_lower", "ci_upper", "n_samples")
#: Columns every results table has.
RESULT_REQUIRED = ("csf", "study", "metric", "value")


def check_results_table(
    table: pd.DataFrame,
    source: str,
    ranges: Mapping[str, tuple[float, float]],
    *,
    tolerance: float = 1e-9,
) -> pd.DataFrame:
    """A results table given to fdbench (one row per result: ``dataset, method, seed, csf,
    study, metric, value, ...``), checked and with its columns in their types.

    Refused, each with one error naming ``source`` and the column (and row, or key):
    a missing required column (:data:`RESULT_REQUIRED`); no rows; a name column
    (:data:`RESULT_TEXT_COLUMNS`) that is not text; an integer column
    (:data:`RESULT_INTEGER_COLUMNS`) with a non-integer; a value column that is not a real
    number; two rows with the same key (every column but the value columns) and a value of a
    metric of ``ranges`` outside its ``[low, high]`` (beyond ``tolerance``, infinities
    included; NaN, an undefined metric, passes). Empty cells of a name column (a CSV's
    ``dataset,method`` of ``fdbench evaluate``) read as ``""``.
    """
    import pandas as pd  # lazy: pandas costs ~0.4 s to import

    missing = [c for c in RESULT_REQUIRED if c not in table.columns]
    if missing:
        raise ValueError(
            f"{source}: missing column(s) {missing} of a results table; found {list(table.columns)}"
        )
    if table.empty:
        raise ValueError(f"{source}: the results table has no rows")
    table = table.copy()
    for column in RESULT_TEXT_COLUMNS:
        if column not in table.columns:
            continue
        values = table[column]
        if values.isna().all():
            table[column] = ""
            continue
        if values.dtype.kind in "iu":
            # names made of digits, read from a CSV as integers
            table[column] = values.astype(str)
            continue
        if values.isna().any():
            values = values.where(values.notna(), "")
            table[column] = values
        if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:
            continue
        bad = ~values.map(lambda v: isinstance(v, str)).to_numpy()
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise TypeError(
                f"{source}: column {column!r} must hold names (text), got "
                f"{values.iloc[row]!r} in row {row}{_line(source, row)}"
            )
    for column in RESULT_INTEGER_COLUMNS:
        if column in table.columns:
            values = real_column(table[column], column, source)
            table[column] = check_integers(values, f"{source}: column {column!r}", low=0)
    for column in RESULT_VALUE_COLUMNS:
        if column in table.columns and column not in RESULT_INTEGER_COLUMNS:
            table[column] = real_column(table[column], column, source)
    keys = [c for c in table.columns if c not in RESULT_VALUE_COLUMNS]
    check_unique(table, keys, source)
    values = table["value"].to_numpy(dtype=np.float64)
    metrics = table["metric"].to_numpy()
    for metric, (low, high) in ranges.items():
        mine = metrics == metric
        if not mine.any():
            continue
        v = values[mine]
        inside = (v >= low - tolerance) & (v <= high + tolerance) & ~np.isinf(v)
        bad = ~np.isnan(v) & ~inside
        if bad.any():
            row = int(np.flatnonzero(mine)[np.flatnonzero(bad)[0]])
            raise ValueError(
                f"{source}: metric {metric!r} must lie in [{low:g}, {high:g}], got "
                f"{values[row]!r} in row {row}{_line(source, row)} ({int(bad.sum())} such row(s))"
            )
    return table


#: The reserved column names of a table of losses (docs/any_model.md): ``correct`` holds 0/1
#: correctness, ``residual`` a non-negative loss per sample.
LOSS_COLUMNS = ("correct", "residual")
#: Columns of a table of losses that describe its samples, never confidences: the study (or
#: ``group``, its alias), the per-group ``subgroup``, ``weight``, a sample id, the ``model``.
LOSS_META_COLUMNS = ("study", "group", "subgroup", "weight", "sample_id", "id", "model")
#: Names that look like a loss, a correctness or a label: undeclared, such a column could be
#: read either as a confidence or as the loss, so a table holding one is refused until the
#: loss and the confidences are declared.
LOSS_LIKE_COLUMNS = frozenset(
    {
        *LOSS_COLUMNS,
        "label",
        "prediction",
        "is_correct",
        "loss",
        "error",
        "errors",
        "accuracy",
        "score",
        "quality",
        "target",
        "y_true",
        "y_pred",
    }
)

#: Column prefixes of an LM-Polygraph export (docs/any_model.md): ``ue:<estimator>`` holds an
#: uncertainty (higher = less confident), ``metric:<name>`` a generation metric (higher =
#: better).
UNCERTAINTY_PREFIX = "ue:"
GENERATION_METRIC_PREFIX = "metric:"


@dataclass(frozen=True)
class LossColumns:
    """The roles of the columns of a table of losses: ``loss`` is the column holding the loss,
    ``kind`` how it reads (``correct``: 0/1 correctness, the residual is 1 − correct;
    ``residual``: a non-negative loss; ``quality``: a score in [0, 1], the residual is
    1 − quality), ``confidences`` the confidence columns (``None``: every other numeric
    column but the reserved ones)."""

    loss: str
    kind: str
    confidences: tuple[str, ...] | None


def loss_table_columns(
    columns: Sequence[str],
    source: str,
    *,
    confidence: Sequence[str] | None = None,
    correct: str | None = None,
    residual: str | None = None,
    quality: str | None = None,
    text_columns: Sequence[str] = (),
) -> LossColumns:
    """Which column of a table of losses is the loss and which are confidences, declared and
    never guessed from position. ``text_columns`` are columns of text in which no cell is a
    number (a generated answer named ``prediction``, a reference named ``target``): neither a
    confidence nor a class, they make no layout ambiguous.

    The loss is the column a flag names (``correct``, ``residual`` or ``quality``: one at
    most), else the reserved column ``correct`` or ``residual`` (:data:`LOSS_COLUMNS`).
    Confidences are the ``confidence`` columns, else the uncertainty columns ``ue:<name>`` of
    an LM-Polygraph export where there are any, else every other column but
    :data:`LOSS_META_COLUMNS`. A layout readable two ways is a ``ValueError`` of one line
    naming the columns: both reserved loss columns without a flag, a ``label`` or
    ``prediction`` column beside an undeclared loss, or (confidences undeclared) any other
    column of :data:`LOSS_LIKE_COLUMNS` that would otherwise become a confidence.
    """
    present = list(columns)
    text = set(text_columns)
    flags = (("correct", correct), ("residual", residual), ("quality", quality))
    given = {k: v for k, v in flags if v is not None}
    if len(given) > 1:
        named = " and ".join(f"--{k} {v}" for k, v in given.items())
        raise ValueError(f"{source}: declare one loss column; got {named}")
    for option, name in [*given.items(), *(("confidence", c) for c in confidence or ())]:
        if name not in present:
            raise ValueError(
                f"{source}: --{option} column {name!r} not found; columns: {', '.join(present)}"
            )
    if given:
        kind, loss = next(iter(given.items()))
    else:
        reserved = [c for c in LOSS_COLUMNS if c in present]
        if not reserved:
            alike = [
                c
                for c in present
                if is_loss_like(c) and c not in ("label", "prediction") and c not in text
            ]
            if len(alike) > 1:
                raise ValueError(_ambiguous(source, alike))
            found = f"column {alike[0]!r} looks like one; " if alike else ""
            raise ValueError(
                f"{source}: no declared loss column ({found}name it 'correct' (0/1) or "
                "'residual' (a loss), or declare it with --correct, --residual or --quality)"
            )
        classifier = [c for c in ("label", "prediction") if c in present and c not in text]
        if len(reserved) > 1 or classifier:
            raise ValueError(_ambiguous(source, [*reserved, *classifier]))
        loss = kind = reserved[0]
    confidences: tuple[str, ...] | None
    if confidence:
        declared = tuple(dict.fromkeys(confidence))
        clash = [c for c in declared if c == loss or c in LOSS_META_COLUMNS]
        if clash:
            raise ValueError(f"{source}: {clash} cannot be confidence columns")
        confidences = declared
    elif any(c.startswith(UNCERTAINTY_PREFIX) for c in present):
        confidences = tuple(c for c in present if c.startswith(UNCERTAINTY_PREFIX))
    else:
        confidences = None
        others = [c for c in present if c != loss and is_loss_like(c) and c not in text]
        if others:
            raise ValueError(_ambiguous(source, [loss, *others]))
    return LossColumns(loss, kind, confidences)


def is_loss_like(name: str) -> bool:
    """Whether column ``name`` looks like a loss or a label (:data:`LOSS_LIKE_COLUMNS`, or a
    generation metric ``metric:<name>`` of an LM-Polygraph export)."""
    return name in LOSS_LIKE_COLUMNS or name.startswith(GENERATION_METRIC_PREFIX)


def _ambiguous(source: str, names: Sequence[str]) -> str:
    quoted = ", ".join(repr(n) for n in names)
    return (
        f"{source}: ambiguous columns {quoted}: declare the loss with --correct, --residual or "
        "--quality COLUMN and the confidences with --confidence"
    )


#: A number in scientific notation (``1e-3``), which YAML 1.1 reads as text.
_SCIENTIFIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


def _scalar_types(annotation: Any) -> set[type] | None:
    """The scalar types (``bool``, ``int``, ``float``) a field annotation allows, if it allows
    nothing else (``None`` aside); ``None`` for any other annotation."""
    from typing import Annotated, Union, get_args, get_origin

    origin = get_origin(annotation)
    if origin is Annotated:
        return _scalar_types(get_args(annotation)[0])
    if origin is Union or type(annotation).__name__ == "UnionType":
        found: set[type] = set()
        for arg in get_args(annotation):
            if arg is type(None):
                continue
            inner = _scalar_types(arg)
            if inner is None:
                return None
            found |= inner
        return found or None
    return {annotation} if annotation in (bool, int, float) else None


def check_config_scalar(value: Any, annotation: Any, name: str) -> Any:
    """``value`` of the config setting ``name`` unchanged, or ``ValueError`` naming it if the
    setting takes numbers or booleans and ``value`` would only be coerced into one.

    Refused: a boolean where a number belongs (``epochs: true`` would train 1 epoch), text
    where a number or boolean belongs (``lr: "0.1"``, ``nesterov: "no"``, which pydantic's lax
    mode reads as 0.1 and False), a number where a boolean belongs; elements of a list of
    numbers alike. An integer is a float's exact value and is accepted, as is scientific
    notation without a dot where a float belongs (``lr: 1e-3``, which PyYAML's YAML 1.1 reads
    as text).
    """
    from typing import get_args, get_origin

    if get_origin(annotation) in (list, tuple) and isinstance(value, list | tuple):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        if len(args) == 1:
            for index, item in enumerate(value):
                check_config_scalar(item, args[0], f"{name}[{index}]")
        return value
    allowed = _scalar_types(annotation)
    if allowed is None or value is None:
        return value
    numeric = bool(allowed & {int, float})
    if float in allowed and isinstance(value, str) and _SCIENTIFIC.match(value):
        return value  # YAML 1.1 reads 1e-3 as text; YAML 1.2 and every reader a number
    if isinstance(value, bool):
        ok = bool in allowed
    elif isinstance(value, int | float):
        ok = numeric and (float in allowed or isinstance(value, int) or float(value).is_integer())
    else:
        ok = False
    if not ok:
        wanted = " or ".join(sorted(t.__name__ for t in allowed))
        raise ValueError(
            f"{name} must be {wanted}, got {value!r} ({type(value).__name__}); it is not "
            "converted: write the value itself"
        )
    return value


def check_config_scalars(values: Any, fields: Mapping[str, Any]) -> Any:
    """``values`` (a config section's mapping, before pydantic reads it) unchanged, after
    :func:`check_config_scalar` of every value whose field (``fields``: pydantic's
    ``model_fields``) takes numbers or booleans."""
    if isinstance(values, Mapping):
        for key, value in values.items():
            field = fields.get(key) if isinstance(key, str) else None
            if field is not None:
                check_config_scalar(value, field.annotation, key)
    return values
