"""Outputs given as class probabilities: ``.npz`` files with ``probs`` and tables with
``prob_<k>`` columns, turned into confidence tables of the CSFs defined on probabilities.

``fdbench evaluate`` reads them like the confidence tables of
:func:`fdbench.evaluation.tables.read_confidence_table`: the probabilities are used as given
(:mod:`fdbench.csf.probabilities`), the prediction is their arg-max (the first of tied maxima)
unless a table gives a ``prediction`` column, and the CSFs that need logits are skipped with a
note.
"""

from __future__ import annotations

import os
import re
import warnings
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from fdbench.csf.probabilities import probability_csfs, skipped_note

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PROBS_KEY",
    "PROB_COLUMN",
    "is_probs_file",
    "probability_columns",
    "probability_table",
    "read_probs_file",
    "table_from_probability_columns",
]

#: The key of the N × K probabilities in an ``.npz`` file (instead of ``logits``).
PROBS_KEY = "probs"
#: Table columns of class probabilities: ``prob_0``, ``prob_1``, ..., ``prob_<K-1>``.
PROB_COLUMN = re.compile(r"^prob_(\d+)$")


def is_probs_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an ``.npz`` file with ``probs`` and ``labels`` and no ``logits``."""
    path = Path(path)
    if path.suffix.lower() != ".npz" or not path.is_file():
        return False
    try:
        with np.load(path, allow_pickle=False) as npz:
            keys = set(npz.files)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        return False  # not a readable .npz: the reader of the file says why, in one line
    return {PROBS_KEY, "labels"} <= keys and "logits" not in keys


def probability_table(
    labels: ArrayLike,
    probs: ArrayLike,
    *,
    study: ArrayLike | None = None,
    prediction: ArrayLike | None = None,
) -> pd.DataFrame:
    """The confidence table (``study``, ``label``, ``prediction``, ``MSR``, ``PE``, ``DOCTOR``)
    of ``probs`` (N × K) used as given, for :func:`fdbench.evaluation.tables.evaluate_table`.

    ``labels`` are N integers (-1 marks a new-class sample), ``study`` optional N names (default
    ``iid``), ``prediction`` optional N class indices (default: the arg-max of ``probs``, the
    first of tied maxima). Warns once that the logit CSFs are skipped.
    """
    import pandas as pd

    confidences = probability_csfs(probs)
    n = next(iter(confidences.values())).size
    y = np.asarray(labels)
    if y.shape != (n,):
        raise ValueError(f"labels: expected {n} values (one per row of probs), got {y.shape}")
    if y.dtype.kind not in "iu":
        raise TypeError(f"labels: expected integer class labels, got dtype {y.dtype}")
    if prediction is None:
        prediction = np.asarray(probs).argmax(axis=1)
    pred = np.asarray(prediction)
    if pred.shape != (n,) or pred.dtype.kind not in "iu":
        raise ValueError(f"prediction: expected {n} integer class indices, got {pred.shape}")
    names = np.full(n, "iid") if study is None else np.asarray(study).astype(str)
    if names.shape != (n,):
        raise ValueError(f"study: expected {n} names (one per row of probs), got {names.shape}")
    warnings.warn(skipped_note(), UserWarning, stacklevel=2)
    frame = {"study": names, "label": y.astype(np.int64), "prediction": pred.astype(np.int64)}
    return pd.DataFrame({**frame, **confidences})


def read_probs_file(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The :func:`probability_table` of an ``.npz`` file with ``probs`` (N × K), ``labels``
    (N) and optionally ``study`` or ``group`` (N names). A damaged file or a bad array raises
    one ``ValueError`` naming the file."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            data = {key: np.asarray(npz[key]) for key in npz.files}
    except (OSError, ValueError, EOFError) as err:
        raise ValueError(f"cannot read probabilities file {str(path)!r}: {err}") from err
    study = data.get("study", data.get("group"))
    labels = data["labels"]
    if labels.dtype.kind == "f" and np.all(np.isfinite(labels)) and np.all(labels % 1 == 0):
        labels = labels.astype(np.int64)
    try:
        return probability_table(labels, data[PROBS_KEY], study=study)
    except (ValueError, TypeError) as err:
        raise type(err)(f"{path.name}: {err}") from None


def probability_columns(table: pd.DataFrame) -> list[str]:
    """The ``prob_<k>`` columns of ``table`` in class order; ``ValueError`` unless they are
    ``prob_0`` .. ``prob_<K-1>`` without a gap (none: an empty list)."""
    found = {int(m.group(1)): c for c in table.columns if (m := PROB_COLUMN.match(str(c)))}
    if not found:
        return []
    if sorted(found) != list(range(len(found))):
        raise ValueError(
            f"probability columns must be prob_0 .. prob_{len(found) - 1}; got {sorted(found)}"
        )
    return [found[k] for k in range(len(found))]


def table_from_probability_columns(table: pd.DataFrame) -> pd.DataFrame:
    """A confidence table whose ``prob_<k>`` columns are replaced by the CSFs of those
    probabilities as given (its ``study``, ``label``, ``prediction`` and other confidence
    columns kept); the table unchanged when it has no such columns."""
    import pandas as pd

    columns = probability_columns(table)
    if not columns:
        return table
    probs = table[columns].to_numpy(dtype=np.float64)
    converted = probability_table(
        table["label"].to_numpy(),
        probs,
        study=table["study"].to_numpy(),
        prediction=table["prediction"].to_numpy(),
    )
    meta = {"study", "group", "label", "prediction", *columns, *converted.columns}
    others = [c for c in table.columns if c not in meta]
    return pd.concat([converted, table[others].reset_index(drop=True)], axis=1)
