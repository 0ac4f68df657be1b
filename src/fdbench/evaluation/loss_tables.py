"""Tables of confidences and per-sample losses of any model (``correct`` or ``residual``):
reading them, their metrics, curves and operating points, without labels, logits or PyTorch."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fdbench import metrics as M
from fdbench.core.validation import (
    LOSS_COLUMNS,
    LOSS_META_COLUMNS,
    UNCERTAINTY_PREFIX,
    check_unique,
    is_loss_like,
    loss_table_columns,
    real_column,
)
from fdbench.evaluation.confidences import SUBGROUP_COLUMN
from fdbench.evaluation.result_tables import results_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "JSON_LINES_SUFFIXES",
    "LOSS_TABLE_META",
    "LOSS_TABLE_SUFFIXES",
    "evaluate_loss_table",
    "is_loss_table",
    "loss_table",
    "loss_table_curves",
    "loss_table_groups",
    "read_loss_table",
    "read_table_file",
    "table_columns",
]

JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
LOSS_TABLE_SUFFIXES = (".csv", ".parquet", ".pq", *JSON_LINES_SUFFIXES)
#: The columns of a normalised table of losses before its confidence columns: the model, the
#: study, the sample id (``""`` where the table has none), the weight (1 where none), the
#: subgroup (``""`` where none) and the residual.
LOSS_TABLE_META = ("model", "study", "sample_id", "weight", SUBGROUP_COLUMN, "residual")


def read_table_file(path: str | Path) -> pd.DataFrame:
    """Read a CSV, Parquet or JSON Lines (``.jsonl``/``.ndjson``: one JSON object per line)
    table; an unreadable file is one ``ValueError`` naming it."""
    import pandas as pd

    from fdbench.evaluation.tables import _check_header

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"table not found: {path}")
    suffix = path.suffix.lower()
    if suffix not in LOSS_TABLE_SUFFIXES:
        raise ValueError(f"table must be {', '.join(LOSS_TABLE_SUFFIXES)}; got {path.name}")
    try:
        if suffix == ".csv":
            _check_header(path)
            return pd.read_csv(path)
        if suffix in JSON_LINES_SUFFIXES:
            return pd.read_json(path, lines=True, dtype=False, precise_float=True)
        return pd.read_parquet(path)
    except (OSError, ValueError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"cannot read {path.name}: {message}") from err


def table_columns(path: str | Path) -> list[str]:
    """The column names of a table file without reading its rows (CSV header, Parquet schema;
    a JSON Lines file is read whole)."""
    import csv

    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            with open(path, newline="", encoding="utf-8") as fh:
                return next(csv.reader(fh), [])
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read {path.name}: {str(err).splitlines()[0]}") from err
    return list(read_table_file(path).columns)


def is_loss_table(
    path: str | Path, *, correct: str | None = None, residual: str | None = None,
    quality: str | None = None,
) -> bool:  # fmt: skip
    """Whether ``path`` is read as a table of losses: a loss column is declared, the file is
    JSON Lines, the table has a ``correct`` or ``residual`` column, or it has no ``label`` or
    ``prediction`` but a column that looks like a loss
    (:func:`fdbench.core.validation.is_loss_like`, refused there until declared)."""
    path = Path(path)
    if correct is not None or residual is not None or quality is not None:
        return True
    if path.suffix.lower() in JSON_LINES_SUFFIXES:
        return True
    if path.suffix.lower() not in LOSS_TABLE_SUFFIXES or not path.is_file():
        return False
    columns = table_columns(path)
    if set(LOSS_COLUMNS) & set(columns):
        return True
    return not {"label", "prediction"} & set(columns) and any(is_loss_like(c) for c in columns)


def read_loss_table(
    path: str | Path,
    *,
    confidence: Sequence[str] | None = None,
    correct: str | None = None,
    residual: str | None = None,
    quality: str | None = None,
) -> pd.DataFrame:
    """Read a CSV, Parquet or JSON Lines table of losses and confidences
    (:func:`read_table_file`) and normalise it (:func:`loss_table`)."""
    path = Path(path)
    frame = read_table_file(path)
    return loss_table(
        frame,
        source=path.name,
        confidence=confidence,
        correct=correct,
        residual=residual,
        quality=quality,
    )


def loss_table(
    frame: pd.DataFrame,
    *,
    source: str = "table",
    confidence: Sequence[str] | None = None,
    correct: str | None = None,
    residual: str | None = None,
    quality: str | None = None,
) -> pd.DataFrame:
    """A table of per-sample losses and confidences, validated and normalised.

    ``frame`` is a pandas DataFrame or anything with ``to_pandas()`` (a Hugging Face
    ``datasets.Dataset``).

    The loss is declared (:func:`fdbench.core.validation.loss_table_columns`): a ``correct``
    column (0/1, bool allowed; residual = 1 − correct), a ``residual`` column (a finite
    non-negative loss: 1 − ROUGE-L, a judge's error, |y − ŷ|) or a ``quality`` column (a score
    in [0, 1], higher is better; residual = 1 − quality), by the reserved name or by the
    argument naming the column. Confidences (higher = more confident) are the ``confidence``
    columns, else every other numeric column but ``study``, ``group``, ``subgroup``,
    ``weight``, ``sample_id``/``id`` and ``model``; a column ``ue:<name>`` (an LM-Polygraph
    uncertainty, higher = less confident) is the confidence ``<name>`` = −uncertainty. A text
    column in which no cell is a number is not a confidence. Optional columns: ``study`` (or
    its alias ``group``; default ``iid``), ``subgroup`` (per-group operating points),
    ``weight`` (finite, >= 0), ``sample_id`` or ``id`` (pairs the samples of several models),
    ``model`` (one row per sample and model: several models of one task).

    Returns the columns :data:`LOSS_TABLE_META` then one float64 column per confidence.
    Nothing is coerced: a cell that is not a number, a non-finite confidence, a ``correct``
    that is not 0/1 or a negative residual is a ``ValueError`` naming the column and row.
    """
    import pandas as pd

    from fdbench.evaluation.tables import _is_annotation

    if not isinstance(frame, pd.DataFrame) and hasattr(frame, "to_pandas"):
        frame = frame.to_pandas()
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")
    if isinstance(confidence, str):
        confidence = [confidence]
    columns = [str(c) for c in frame.columns]
    frame = frame.set_axis(columns, axis=1)
    text = [c for c in columns if _is_annotation(frame[c])]
    roles = loss_table_columns(
        columns,
        source,
        confidence=confidence,
        correct=correct,
        residual=residual,
        quality=quality,
        text_columns=text,
    )
    if frame.empty:
        raise ValueError(f"{source}: the table has no rows")
    if {"sample_id", "id"} <= set(columns):
        raise ValueError(f"{source}: columns 'sample_id' and 'id' both name the samples; keep one")
    if roles.confidences is not None:
        csfs = list(roles.confidences)
    else:
        skip = {roles.loss, *LOSS_META_COLUMNS}
        csfs = [c for c in columns if c not in skip and c not in text]
    if not csfs:
        raise ValueError(f"{source}: no confidence column besides the loss {roles.loss!r}")
    out = pd.DataFrame(index=range(len(frame)))
    out["model"] = _text(frame, "model", "", source)
    out["study"] = _text(frame, "study" if "study" in columns else "group", "iid", source)
    ids = "sample_id" if "sample_id" in columns else "id"
    out["sample_id"] = _text(frame, ids, "", source)
    out["weight"] = _weights(frame, source) if "weight" in columns else 1.0
    out[SUBGROUP_COLUMN] = _text(frame, SUBGROUP_COLUMN, "", source)
    out["residual"] = _residuals(frame[roles.loss], roles.loss, roles.kind, source)
    for c in csfs:
        values = real_column(frame[c], c, source)
        bad = ~np.isfinite(values)
        if bad.any():
            first = np.flatnonzero(bad)[:5].tolist()
            raise ValueError(
                f"{source}: confidence column {c!r} has {int(bad.sum())} non-finite or missing "
                f"value(s), first at rows {first}"
            )
        name = c.removeprefix(UNCERTAINTY_PREFIX)
        if name in out.columns:
            raise ValueError(f"{source}: confidence {name!r} is given twice ({c!r})")
        out[name] = -values if c.startswith(UNCERTAINTY_PREFIX) else values
    if "sample_id" in columns or "id" in columns:
        check_unique(out, ["model", "study", "sample_id"], source)
    return out


def _text(frame: pd.DataFrame, name: str, default: str, source: str) -> np.ndarray | str:
    """The values of column ``name`` as text (``default`` where the table has no such
    column); an empty cell is an error naming the column and row."""
    if name not in frame.columns:
        return default
    column = frame[name]
    if column.isna().any():
        row = int(np.flatnonzero(column.isna().to_numpy())[0])
        raise ValueError(f"{source}: column {name!r}, row {row} is empty")
    return column.astype(str).to_numpy()


def _weights(frame: pd.DataFrame, source: str) -> np.ndarray:
    values = real_column(frame["weight"], "weight", source)
    bad = ~(np.isfinite(values) & (values >= 0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{source}: column 'weight' must hold finite values >= 0; row {row} holds "
            f"{frame['weight'].iloc[row]!r}"
        )
    return values


def _residuals(column: pd.Series, name: str, kind: str, source: str) -> np.ndarray:
    """The residual of each sample from the loss column ``name`` read as ``kind``."""
    values = real_column(column, name, source)
    if kind == "correct":
        bad, expected = ~np.isin(values, (0.0, 1.0)), "0 or 1 (1 = correct)"
    elif kind == "quality":
        bad, expected = ~(np.isfinite(values) & (values >= 0) & (values <= 1)), "a value in [0, 1]"
    else:
        bad, expected = ~(np.isfinite(values) & (values >= 0)), "a finite loss >= 0"
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{source}: column {name!r} must hold {expected}; row {row} holds "
            f"{column.iloc[row]!r} ({int(bad.sum())} such row(s))"
        )
    return values if kind == "residual" else 1.0 - values


def _confidence_names(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if c not in LOSS_TABLE_META]


def loss_table_groups(table: pd.DataFrame):
    """The (model, study, rows) of a table from :func:`loss_table`, in the order of first
    appearance."""
    for (model, study), part in table.groupby(["model", "study"], sort=False):
        yield str(model), str(study), part


def _weights_of(part: pd.DataFrame) -> np.ndarray | None:
    weight = part["weight"].to_numpy(dtype=np.float64)
    return None if np.all(weight == 1.0) else weight


def evaluate_loss_table(
    table: pd.DataFrame,
    *,
    n_bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
    dataset: str = "",
) -> pd.DataFrame:
    """Every metric of every confidence of a table from :func:`loss_table`, per model and
    study.

    Each (model, study, confidence) is :func:`fdbench.metrics.evaluate_all` of the residuals
    and the confidence (weighted by ``weight`` where the table has one): AURC, AUGRC (the
    generalised risk with these residuals, METRICS.md), their excess and normalised forms and,
    for 0/1 residuals, AUROC_f, AP, FPR@TPR, ECE and the working points; ``mean_residual``
    replaces ``accuracy`` for continuous residuals. With ``n_bootstrap > 0`` the rows gain
    ``std``, ``ci_lower`` and ``ci_upper`` from seeded bootstrap resamples of the study's
    samples (the same resamples for every confidence, :func:`fdbench.metrics.bootstrap`).

    Returns the tidy results table: ``RESULT_COLUMNS`` (``method`` holds the model) plus
    ``n_samples``.
    """

    if not isinstance(n_bootstrap, int) or n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be an int >= 0; got {n_bootstrap!r}")
    csfs = _confidence_names(table)
    rows: list[dict[str, object]] = []
    for model, study, part in loss_table_groups(table):
        residuals = part["residual"].to_numpy(dtype=np.float64)
        weight = _weights_of(part)
        for csf in csfs:
            conf = part[csf].to_numpy(dtype=np.float64)
            values = M.evaluate_all(residuals, conf, sample_weight=weight)
            intervals = (
                _intervals(residuals, conf, weight, n_bootstrap, seed, confidence_level)
                if n_bootstrap
                else {}
            )
            info = {"dataset": dataset, "method": model, "seed": 0, "csf": csf, "study": study}
            for metric, value in values.items():
                row = {**info, "metric": metric, "value": value, "n_samples": len(part)}
                row.update(intervals.get(metric, {}))
                rows.append(row)
    return results_frame(rows)


def _intervals(
    residuals: np.ndarray,
    confidence: np.ndarray,
    weight: np.ndarray | None,
    n_resamples: int,
    seed: int,
    confidence_level: float,
) -> dict[str, dict[str, float]]:
    """Bootstrap standard deviation and percentile interval of every metric that has one
    (as :func:`fdbench.evaluation.confidences.evaluate_confidences` computes them)."""
    binary = bool(np.all((residuals == 0) | (residuals == 1)))
    names = [
        s.name for s in M.metric_specs().values() if s.interval and (binary or not s.binary_only)
    ]
    draws = M.bootstrap(
        residuals,
        confidence,
        metrics=names,
        n_resamples=n_resamples,
        seed=seed,
        sample_weight=weight,
    )
    summary = M.bootstrap_summary(draws, confidence_level=confidence_level)
    return {
        metric: {
            "std": float(summary.loc[metric, "std"]),
            "ci_lower": float(summary.loc[metric, "lower"]),
            "ci_upper": float(summary.loc[metric, "upper"]),
        }
        for metric in summary.index
    }


def loss_table_curves(
    table: pd.DataFrame, *, dataset: str = "", max_points: int = 2000
) -> pd.DataFrame:
    """Risk-coverage and generalised-risk curves of every confidence of a table from
    :func:`loss_table`, per model and study (:func:`fdbench.evaluation.curves.curve_table`,
    weighted by ``weight`` where the table has one); the ``method`` column holds the model.
    The ``curves.parquet`` that ``fdbench report`` draws."""
    import pandas as pd

    from fdbench.evaluation.curves import curve_table

    csfs = _confidence_names(table)
    frames = []
    for model, study, part in loss_table_groups(table):
        residuals = part["residual"].to_numpy(dtype=np.float64)
        confs = {c: part[c].to_numpy(dtype=np.float64) for c in csfs}
        curves = curve_table(
            residuals,
            confs,
            study=study,
            max_points=max_points,
            sample_weight=_weights_of(part),
        )
        frames.append(curves.assign(dataset=dataset, method=model, seed=0))
    return pd.concat(frames, ignore_index=True)
