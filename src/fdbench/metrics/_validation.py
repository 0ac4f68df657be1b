"""Input checks shared by every metric: shapes, finiteness, residual range and sample weights."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from fdbench.core.validation import REAL_KINDS, as_real_array

__all__ = [
    "REAL_KINDS",
    "UndefinedMetricWarning",
    "as_real_array",
    "check_inputs",
    "check_labels",
    "check_unit_interval",
    "rescale_weights",
]


class UndefinedMetricWarning(UserWarning):
    """Warned when a metric is undefined for the given data and NaN is returned instead."""


def _as_1d_float(values: ArrayLike, name: str) -> np.ndarray:
    arr = as_real_array(values, name)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    return arr


def _describe_bad(mask: np.ndarray) -> str:
    positions = np.flatnonzero(mask)
    shown = ", ".join(str(p) for p in positions[:5])
    more = ", ..." if positions.size > 5 else ""
    return f"{positions.size} value(s), first at index {shown}{more}"


def check_inputs(
    residuals: ArrayLike,
    confidence: ArrayLike,
    sample_weight: ArrayLike | None = None,
    *,
    binary: bool = False,
    residuals_name: str = "residuals",
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Validate and convert the common inputs of the metrics.

    Returns float64 ``(residuals, confidence, weights, keep)``. Samples of weight 0 do not exist
    for any metric and are dropped; ``keep`` is the boolean mask of kept samples (``None`` when
    nothing was dropped), to apply to further per-sample arrays such as labels. ``weights`` is
    ``None`` for unweighted data; weights at the ends of the float64 range are divided by the
    largest (:func:`rescale_weights`), which changes no metric but for rounding.

    Raises ``ValueError`` (naming the argument) for different lengths, no samples, non-finite
    confidence, non-finite or negative residuals, residuals other than 0/1 when ``binary``,
    and negative, non-finite or all-zero weights.
    """
    r = _as_1d_float(residuals, residuals_name)
    c = _as_1d_float(confidence, "confidence")
    if r.shape != c.shape:
        raise ValueError(
            f"{residuals_name} and confidence: expected the same length, got {r.size} and {c.size}"
        )
    if r.size == 0:
        raise ValueError(f"{residuals_name}: expected at least one sample, got an empty array")
    bad = ~np.isfinite(c)
    if bad.any():
        raise ValueError(f"confidence: expected finite values, got NaN/inf in {_describe_bad(bad)}")
    bad = ~(np.isfinite(r) & (r >= 0))
    if bad.any():
        raise ValueError(
            f"{residuals_name}: expected finite non-negative values, got {_describe_bad(bad)}"
        )
    if binary:
        bad = (r != 0) & (r != 1)
        if bad.any():
            raise ValueError(
                f"{residuals_name}: expected 0/1 failure labels for this metric, got other values "
                f"in {_describe_bad(bad)}"
            )
    if sample_weight is None:
        return r, c, None, None
    w = _as_1d_float(sample_weight, "sample_weight")
    if w.shape != r.shape:
        raise ValueError(
            f"sample_weight: expected the same length as {residuals_name} ({r.size}), got {w.size}"
        )
    bad = ~(np.isfinite(w) & (w >= 0))
    if bad.any():
        raise ValueError(
            f"sample_weight: expected finite non-negative values, got {_describe_bad(bad)}"
        )
    if not w.max() > 0:
        raise ValueError("sample_weight: expected a positive sum, got all zeros")
    w = rescale_weights(w)
    keep = w > 0
    if keep.all():
        return r, c, w, None
    return r[keep], c[keep], w[keep], keep


_SAFE_EXPONENT = 64


def rescale_weights(weights: np.ndarray) -> np.ndarray:
    """Non-negative finite ``weights`` (largest > 0), divided by the largest when it lies at
    an end of the float64 range.

    Every metric is a ratio of weighted sums, unchanged by a common factor; but sums, squares
    and products of weights near the ends of the float64 range overflow to inf or underflow to
    0 (weights of 1e-200 or 1e308). When the largest weight lies outside [2^-64, 2^64] the
    weights are divided by it, so that the largest becomes 1 (equal weights become exactly 1,
    as unweighted data). A weight below 2^-1022 of the largest becomes subnormal or 0: its
    share of the total is below float64 resolution. Weights within the range, the ordinary
    ones, are returned as they are, so that their results do not change by a bit.
    """
    exponent = int(np.frexp(weights.max())[1])
    if -_SAFE_EXPONENT < exponent <= _SAFE_EXPONENT:
        return weights
    return weights / weights.max()


def check_labels(labels: ArrayLike, n: int, keep: np.ndarray | None = None) -> np.ndarray:
    """Validate class labels (one integer per sample) and apply the kept-samples mask."""
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"labels: expected a 1-D array, got shape {arr.shape}")
    if keep is not None:
        if arr.size != keep.size:
            raise ValueError(f"labels: expected {keep.size} values, got {arr.size}")
        arr = arr[keep]
    if arr.size != n:
        raise ValueError(f"labels: expected {n} values (one per sample), got {arr.size}")
    if arr.dtype.kind not in "iub":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"labels: expected integer class labels, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def check_unit_interval(value: float, name: str, *, low_open: bool = True) -> float:
    """Check that a scalar lies in (0, 1] (or [0, 1] when ``low_open`` is False)."""
    try:
        x = float(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}") from err
    ok = (0 < x <= 1) if low_open else (0 <= x <= 1)
    if not ok:
        interval = "(0, 1]" if low_open else "[0, 1]"
        raise ValueError(f"{name}: expected a value in {interval}, got {value!r}")
    return x
