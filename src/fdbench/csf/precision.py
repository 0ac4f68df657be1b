"""Diagnostics of softmax rounding at reduced float precision (the FD-Shifts rounding study)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from fdbench import metrics

from ._validation import as_float_array, as_label_array
from .softmax import log_softmax

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PRECISIONS", "precision_diagnostics", "softmax_in_precision"]

PRECISIONS = ("float16", "float32", "float64")


def _cast_logits(z: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``z`` cast to ``dtype`` and, per sample, whether a logit overflowed its finite range."""
    with np.errstate(over="ignore"):
        cast = z.astype(dtype)
    return cast, ~np.isfinite(cast).all(axis=1)


def _softmax_cast(z: np.ndarray, dtype: np.dtype) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True, dtype=dtype)


def softmax_in_precision(logits: ArrayLike, precision: str) -> np.ndarray:
    """Softmax computed entirely in ``precision``: logits cast, max-shifted, exponentiated, summed.

    Returns the probabilities in that dtype. Raises ``ValueError`` when a logit lies outside the
    precision's finite range (e.g. |z| > 65504 for float16), where the softmax is undefined.
    """
    dtype = _dtype(precision)
    z, overflow = _cast_logits(as_float_array(logits, "logits", 2), dtype)
    if overflow.any():
        raise ValueError(
            f"logits exceed the {precision} range (|z| <= {float(np.finfo(dtype).max):g}) in "
            f"{int(overflow.sum())} sample(s); their softmax cannot be computed in {precision}"
        )
    return _softmax_cast(z, dtype)


def _dtype(precision: str) -> np.dtype:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    return np.dtype(precision)


def precision_diagnostics(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    precisions: Sequence[str] = PRECISIONS,
) -> pd.DataFrame:
    """How float precision changes MSR and its failure-detection metrics.

    For each precision two ways of losing precision are measured (Jaeger et al., "A call to
    reflect on evaluation practices for failure detection in image classification", ICLR 2023,
    found that FD-Shifts' float16 outputs round many top softmax probabilities to exactly 1):

    - ``computed``: logits cast to the precision and softmax computed in it;
      predictions are the argmax of the cast logits;
    - ``stored``: softmax computed in float64, then stored (cast) in the precision;
      predictions are the argmax of the float64 logits.

    Columns: ``precision``, ``stage``, ``overflow_rate`` (``computed``: fraction of samples with a
    logit outside the precision's finite range, e.g. |z| > 65504 in float16, whose cast logit is
    infinite and softmax undefined, so such a row has NaN metrics; always 0 for ``stored``),
    ``msr_one_rate`` (fraction of samples whose MSR is exactly 1.0), ``n_distinct`` (distinct MSR
    values), ``accuracy``, ``aurc`` and ``auroc_f`` (``fdbench.metrics``, residual = prediction
    != label; label -1 is always a failure).
    """
    import pandas as pd

    z = as_float_array(logits, "logits", 2)
    y = np.asarray(labels)
    y = as_label_array(y, "labels", z.shape[0])
    if y.min() < -1 or y.max() >= z.shape[1]:
        raise ValueError(f"labels must lie in [-1, {z.shape[1]})")
    if isinstance(precisions, str) or not precisions:
        raise ValueError("precisions must be a non-empty sequence of precision names")
    rows = []
    p64 = np.exp(log_softmax(z))
    pred64 = np.argmax(z, axis=1)
    nan = float("nan")
    for precision in precisions:
        dtype = _dtype(precision)
        cast, overflow = _cast_logits(z, dtype)
        stored = p64.astype(dtype)
        stages = [("stored", stored, pred64)]
        if overflow.any():
            rows.append(
                {
                    "precision": precision,
                    "stage": "computed",
                    "overflow_rate": float(overflow.mean()),
                    "msr_one_rate": nan,
                    "n_distinct": 0,
                    "accuracy": nan,
                    "aurc": nan,
                    "auroc_f": nan,
                }
            )
        else:
            stages.insert(0, ("computed", _softmax_cast(cast, dtype), np.argmax(cast, axis=1)))
        for stage, probs, pred in stages:
            confidence = probs.max(axis=1).astype(np.float64)
            residuals = (pred != y).astype(np.float64)
            rows.append(
                {
                    "precision": precision,
                    "stage": stage,
                    "overflow_rate": 0.0,
                    "msr_one_rate": float(np.mean(confidence == 1.0)),
                    "n_distinct": int(np.unique(confidence).size),
                    "accuracy": float(1.0 - residuals.mean()),
                    "aurc": float(metrics.aurc(residuals, confidence)),
                    "auroc_f": float(metrics.auroc_f(residuals, confidence))
                    if 0 < residuals.sum() < residuals.size
                    else float("nan"),
                }
            )
    return pd.DataFrame(rows)
