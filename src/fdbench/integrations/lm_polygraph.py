"""LM-Polygraph's results as a table of losses, without unpickling: the export of a loaded
``UEManager`` to JSON Lines (``ue:<estimator>`` uncertainties, ``metric:<name>`` generation
metrics), which ``fdbench evaluate --quality metric:<name>`` reads (docs/any_model.md).

LM-Polygraph saves its results with ``torch.save`` (a pickle, ``UEManager.save``); fdbench
never loads a pickle. Whoever trusts the file loads it with LM-Polygraph itself and writes
the export with :func:`write_lm_polygraph_export`, which needs neither PyTorch nor
LM-Polygraph: it reads the manager's ``estimations``, ``gen_metrics`` and ``stats``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from fdbench.core.validation import GENERATION_METRIC_PREFIX, UNCERTAINTY_PREFIX

__all__ = ["lm_polygraph_frame", "write_lm_polygraph_export"]


def _sequence_level(values: Mapping[Any, Sequence[float]], what: str) -> dict[str, list[float]]:
    """The sequence-level entries of LM-Polygraph's ``{(level, name): values}``."""
    if not isinstance(values, Mapping):
        raise TypeError(f"{what}: expected a mapping (level, name) -> values")
    out = {}
    for key, column in values.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise ValueError(f"{what}: expected keys (level, name); got {key!r}")
        level, name = key
        if level == "sequence":
            out[str(name)] = [float(v) for v in column]
    return out


def lm_polygraph_frame(
    estimations: Mapping[Any, Sequence[float]],
    gen_metrics: Mapping[Any, Sequence[float]],
    stats: Mapping[str, Sequence[Any]] | None = None,
) -> pd.DataFrame:
    """One row per generated sequence of an LM-Polygraph run: ``sample_id``, ``input`` (the
    input text, where ``stats`` has ``input_texts``), ``ue:<estimator>`` (each sequence-level
    uncertainty of ``estimations``; higher = less confident) and ``metric:<name>`` (each
    sequence-level generation metric of ``gen_metrics``; higher = better, as LM-Polygraph
    assumes). The arguments are the attributes of the same names of a ``UEManager``. A NaN
    (LM-Polygraph's mark of a failed estimate) is kept; fdbench refuses it when it reads the
    column (drop such rows or estimators first).
    """
    ue = _sequence_level(estimations, "estimations")
    quality = _sequence_level(gen_metrics, "gen_metrics")
    if not ue or not quality:
        raise ValueError(
            "estimations and gen_metrics: expected at least one sequence-level estimator and "
            "one sequence-level generation metric"
        )
    lengths = {len(v) for v in (*ue.values(), *quality.values())}
    if len(lengths) != 1:
        raise ValueError(f"estimations and gen_metrics: columns of different lengths {lengths}")
    n = lengths.pop()
    frame = pd.DataFrame({"sample_id": range(n)})
    texts = (stats or {}).get("input_texts")
    if texts is not None and len(texts) == n:
        frame["input"] = [str(t) for t in texts]
    for name, values in ue.items():
        frame[f"{UNCERTAINTY_PREFIX}{name}"] = values
    for name, values in quality.items():
        frame[f"{GENERATION_METRIC_PREFIX}{name}"] = values
    return frame


def write_lm_polygraph_export(manager: Any, path: str | Path) -> Path:
    """Write :func:`lm_polygraph_frame` of a loaded ``UEManager`` (its ``estimations``,
    ``gen_metrics`` and ``stats``) as JSON Lines at ``path``; NaN is written as ``null``.
    Returns the path."""
    path = Path(path)
    for attribute in ("estimations", "gen_metrics"):
        if not hasattr(manager, attribute):
            raise TypeError(
                f"manager: expected an LM-Polygraph UEManager with .{attribute}, got "
                f"{type(manager).__name__}"
            )
    frame = lm_polygraph_frame(
        manager.estimations, manager.gen_metrics, getattr(manager, "stats", None)
    )
    with open(path, "w", encoding="utf-8") as fh:
        for record in frame.to_dict(orient="records"):
            clean = {
                k: None if isinstance(v, float) and math.isnan(v) else v for k, v in record.items()
            }
            fh.write(json.dumps(clean) + "\n")
    return path
