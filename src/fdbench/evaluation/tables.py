"""Tables of confidences a user gives (`fdbench evaluate --table`): reading and evaluating them."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fdbench.core.io import read_parquet
from fdbench.core.validation import real_column
from fdbench.evaluation.confidences import (
    SUBGROUP_COLUMN,
    TABLE_META_COLUMNS,
    default_studies,
    evaluate_confidences,
    split_kinds,
)
from fdbench.protocol import (
    NEW_CLASS_LABEL,
    Protocol,
    unknown_detection_pools,
)

if TYPE_CHECKING:
    import pandas as pd

    pass


def read_confidence_table(
    path: str | Path, *, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Read a CSV or Parquet table of ``label``, ``prediction`` and confidence columns.

    An optional ``study`` (or ``group``) column names the study of each sample (default
    ``iid``); label -1 marks a new-class sample. An optional ``subgroup`` column (a site, a
    sex: any value per sample) is kept for per-group operating points
    (docs/operating_points.md). Every other numeric column is a CSF unless
    ``columns`` selects some; a column of text in which no cell is a number (such as file
    names) is not a CSF. Values are validated, never coerced: integer labels >= -1, integer
    predictions, finite real confidences (bool counts as 0/1). A cell that is not a number is
    a ``ValueError`` naming the column and row; a complex, date or duration column a
    ``TypeError`` naming the column.
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"outputs file not found: {path}")
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".parquet", ".pq"}:
        raise ValueError(f"table must be .csv or .parquet; got {path.name}")
    try:
        if suffix == ".csv":
            _check_header(path)
        table = pd.read_csv(path) if suffix == ".csv" else read_parquet(path)
    except (OSError, ValueError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"cannot read {path.name}: {message}") from err
    missing = [c for c in ("label", "prediction") if c not in table.columns]
    if missing:
        raise ValueError(f"{path.name}: missing column(s) {missing}; found {list(table.columns)}")
    if table.empty:
        raise ValueError(f"{path.name}: the table has no rows")
    if "study" not in table.columns:
        table["study"] = table["group"].astype(str) if "group" in table.columns else "iid"
    if columns:
        absent = [c for c in columns if c not in table.columns]
        if absent:
            raise ValueError(f"{path.name}: confidence column(s) {absent} not found")
        meta = [c for c in columns if c in TABLE_META_COLUMNS]
        if meta:
            raise ValueError(f"{path.name}: {meta} cannot be confidence columns")
        csfs = list(dict.fromkeys(columns))
    else:
        csfs = [
            c for c in table.columns if c not in TABLE_META_COLUMNS and not _is_annotation(table[c])
        ]
    if not csfs:
        raise ValueError(f"{path.name}: no numeric confidence column besides label/prediction")
    for name in ("label", "prediction"):
        values = real_column(table[name], name, path.name)
        bad = ~(np.isfinite(values) & (np.mod(values, 1) == 0))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            line = f" (line {row + 2} of the file)" if suffix == ".csv" else ""
            raise ValueError(
                f"{path.name}: column {name!r} must hold integers without gaps; "
                f"row {row}{line} holds {table[name].iloc[row]!r}"
            )
        table[name] = values.astype(np.int64)
    if (table["label"] < NEW_CLASS_LABEL).any():
        raise ValueError(f"{path.name}: labels must be >= -1 (-1 marks a new-class sample)")
    for c in csfs:
        values = real_column(table[c], c, path.name)
        bad = ~np.isfinite(values)
        if bad.any():
            first = np.flatnonzero(bad)[:5].tolist()
            raise ValueError(
                f"{path.name}: confidence column {c!r} has {int(bad.sum())} non-finite value(s), "
                f"first at rows {first}"
            )
        table[c] = values
    subgroup = [SUBGROUP_COLUMN] if SUBGROUP_COLUMN in table.columns else []
    return table[["study", "label", "prediction", *subgroup, *csfs]]


def _check_header(path: Path) -> None:
    """Refuse a CSV header naming one column twice (pandas would read the second as
    ``<name>.1``, a CSF of its own)."""
    with open(path, newline="", encoding="utf-8") as fh:
        names = next(csv.reader(fh), [])
    seen: dict[str, int] = {}
    for position, name in enumerate(names):
        if name in seen:
            raise ValueError(
                f"{path.name}: column {name!r} appears twice in the header (columns "
                f"{seen[name] + 1} and {position + 1}); expected one column per name"
            )
        seen[name] = position


def _is_annotation(column: pd.Series) -> bool:
    """A column of text in which no cell is a number (e.g. file names): not a CSF."""
    import pandas as pd

    if column.dtype.kind not in "OSU":
        return False
    present = column.dropna()
    return bool(pd.to_numeric(present, errors="coerce").isna().all())


def evaluate_table(
    table: pd.DataFrame,
    *,
    protocol: Protocol | str = Protocol.FAILURE_DETECTION,
    iid_split: str = "iid",
    n_bootstrap: int = 0,
    seed: int = 0,
    run_info: Mapping[str, object] | None = None,
    return_curves: bool = False,
    conventions: Sequence[str] = (),
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """Evaluate a table from :func:`read_confidence_table` (one split per ``study`` value).

    With ``return_curves`` the result is ``(results, curves)``, ``curves`` the
    :func:`~fdbench.evaluation.confidences.confidence_curves` of the same studies (from the
    metrics' own ranking where there is one: :func:`evaluate_confidences`). ``conventions``:
    as in :func:`evaluate_confidences`.
    """
    csfs = [c for c in table.columns if c not in TABLE_META_COLUMNS]
    labels, predictions, confidences = {}, {}, {}
    for study, part in table.groupby("study", sort=False):
        labels[study] = part["label"].to_numpy(dtype=np.int64)
        predictions[study] = part["prediction"].to_numpy(dtype=np.int64)
        confidences[study] = {c: part[c].to_numpy(dtype=np.float64) for c in csfs}
    pools = _protocol_pools(protocol, split_kinds(labels))
    studies = [*default_studies(list(labels)), *pools]
    common = {
        "studies": studies,
        "protocol": protocol,
        "iid_split": iid_split,
        "run_info": run_info,
        "pools": pools,
    }
    return evaluate_confidences(
        labels,
        predictions,
        confidences,
        n_bootstrap=n_bootstrap,
        seed=seed,
        conventions=conventions,
        return_curves=return_curves,
        **common,
    )


def _protocol_pools(
    protocol: Protocol | str, kinds: Mapping[str, str]
) -> dict[str, tuple[str, ...]]:
    """The pooled studies evaluated under ``protocol``: Kim et al.'s pooled unknown-detection
    studies (:func:`fdbench.protocol.unknown_detection_pools`) under ``unknown_detection``,
    none under ``failure_detection``."""
    if Protocol(protocol) is not Protocol.UNKNOWN_DETECTION:
        return {}
    return unknown_detection_pools(kinds)
