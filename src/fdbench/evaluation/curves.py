"""Risk-coverage curves of several CSFs as one table, for the report's curve plots."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import pandas as pd

CURVE_COLUMNS = ("study", "csf", "coverage", "selective_risk", "generalized_risk")


def curve_table(
    residuals: ArrayLike,
    confidences: Mapping[str, ArrayLike],
    *,
    study: str,
    max_points: int = 2000,
    sample_weight: ArrayLike | None = None,
) -> pd.DataFrame:
    """Risk-coverage and generalized-risk curves of every CSF on one study.

    Each curve is ``fdbench.metrics.risk_coverage_curve`` (selective and generalized risk over
    coverage, end point at coverage 0 included). Curves with more than ``max_points`` points
    are thinned to evenly spaced points keeping both ends, for plotting only. ``sample_weight``
    weighs the samples as in the curve.

    Returns columns ``CURVE_COLUMNS``; stored in a run folder as ``curves.parquet``.
    """
    import pandas as pd

    check_max_points(max_points)
    frames = [
        curve_frame(
            study, csf, thin_curve(curve_points(residuals, conf, sample_weight), max_points)
        )
        for csf, conf in confidences.items()
    ]
    if not frames:
        raise ValueError("confidences holds no CSF")
    return pd.concat(frames, ignore_index=True)


def check_max_points(max_points: int) -> None:
    """``max_points`` of a curve table: an int >= 2."""
    if not isinstance(max_points, int) or max_points < 2:
        raise ValueError(f"max_points must be an int >= 2; got {max_points!r}")


def thin_curve(
    points: tuple[np.ndarray, np.ndarray, np.ndarray], max_points: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A curve's ``points`` (coverages, selective and generalized risks) at no more than
    ``max_points`` evenly spaced positions, both ends kept (for plotting only)."""
    keep = _thinned_positions(points[0].size, max_points)
    return points[0][keep], points[1][keep], points[2][keep]


def _thinned_positions(size: int, max_points: int) -> np.ndarray:
    """The positions :func:`thin_curve` keeps of a curve of ``size`` points (0 and size - 1
    among them): the rounded positions of an even spacing, each once (they do not decrease,
    so a repeat is a run; ``np.unique`` would sort them again and, on first use, import
    ``numpy.ma``)."""
    positions = np.linspace(0, size - 1, min(size, max_points)).round().astype(int)
    first = np.ones(positions.size, dtype=bool)
    np.not_equal(positions[1:], positions[:-1], out=first[1:])
    return positions[first]


def curve_frame(
    study: str, csf: str, thinned: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> pd.DataFrame:
    """One CSF's rows of :func:`curve_table` from its :func:`thin_curve` points."""
    import pandas as pd

    return pd.DataFrame(
        {
            "study": study,
            "csf": csf,
            "coverage": thinned[0],
            "selective_risk": thinned[1],
            "generalized_risk": thinned[2],
        }
    )


def curve_points(
    residuals: ArrayLike, confidence: ArrayLike, sample_weight: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coverages, selective and generalized risks of ``fdbench.metrics.risk_coverage_curve``.

    For 0/1 residuals without weights they come from value sorts (:func:`binary_unit_curve`),
    the same values bit for bit; otherwise from the curve itself."""
    from fdbench import metrics as M
    from fdbench.metrics._validation import check_inputs

    if sample_weight is None:
        r, c, _, _ = check_inputs(residuals, confidence)
        if np.all((r == 0) | (r == 1)):
            return binary_unit_curve(r, c)
    curve = M.risk_coverage_curve(residuals, confidence, sample_weight=sample_weight)
    return curve.coverages, curve.selective_risks, curve.generalized_risks


def binary_unit_curve(
    residuals: np.ndarray, confidence: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coverages, selective and generalized risks of the risk-coverage curve of 0/1
    ``residuals`` without weights (validated float64 vectors), from ``np.sort`` of the
    confidences and of the failures' confidences: no argsort, no gather, no cumulative sum.

    ``fdbench.metrics.risk_coverage_curve`` accumulates, over the distinct confidences ``tau``
    from the highest, ``W = #{c_i >= tau}`` and ``L = Σ r_i [c_i >= tau]`` as float64 sums of
    0/1 values: whole numbers, exact at any order below 2**53 samples. Here ``W = N - #{c_i <
    tau}`` (the start of ``tau``'s run in the sorted confidences) and ``L = F - #{failures with
    c_i < tau}`` (``searchsorted`` among the F failures' sorted confidences), the same whole
    numbers, so every ratio of the curve is the same float64 bit for bit
    (``tests/evaluation/test_curves_valuesort.py``).
    """
    ordered = np.sort(confidence)
    n = ordered.size
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    failures = np.sort(confidence[residuals == 1])
    W = (n - starts).astype(np.float64)
    L = (failures.size - np.searchsorted(failures, ordered[starts], side="left")).astype(np.float64)
    return _unit_curve(W, L)


def ranked_unit_curve(W: np.ndarray, L: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`binary_unit_curve` from the cumulative counts ``W`` and failures ``L`` at the
    tie-group ends in order of descending confidence, as ``fdbench.metrics.evaluate_all``
    hands them to its ``on_ranking`` caller after its argsort (0/1 residuals, no weights):
    no second sort.

    ``W`` and ``L`` are the same whole numbers as :func:`binary_unit_curve`'s (``#{c_i >=
    tau}`` and the failures among them, exact float64 sums), in the opposite order, so every
    ratio is the same float64 bit for bit (``tests/evaluation/test_curves_ranked.py``).
    """
    return _unit_curve(W[::-1], L[::-1])


def ranked_thinned_curve(
    W: np.ndarray, L: np.ndarray, max_points: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``thin_curve(ranked_unit_curve(W, L), max_points)`` without the full curve: only the
    points kept are divided (the same divisions of the same counts, so the same float64 values;
    at N = 10^6 ~35 ms less per CSF)."""
    n = W.size
    keep = _thinned_positions(n + 1, max_points)
    at = n - 1 - keep[:-1]  # the kept points but the closing one, as positions in W and L
    W_kept, L_kept = W[at], L[at]
    total = W[-1]
    return (
        np.append(W_kept / total, 0.0),
        np.append(L_kept / W_kept, L[0] / W[0]),
        np.append(L_kept / total, 0.0),
    )


def _unit_curve(W: np.ndarray, L: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coverage, selective risk and generalized risk from the counts ``W`` and failures ``L``
    at the tie-group thresholds, from full coverage down, each closed by its zero-coverage
    point."""
    total = W[0]
    selective = L / W
    return (
        np.append(W / total, 0.0),
        np.append(selective, selective[-1]),
        np.append(L / total, 0.0),
    )
