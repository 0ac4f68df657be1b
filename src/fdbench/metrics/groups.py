"""Selective risk per group: AURC, AUGRC and a threshold's risk in each group, the worst
group, and operating points certified per group (Mondrian calibration)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_inputs
from .operating_points import OperatingPoint, certify, selective_outcome
from .selective import augrc, aurc

__all__ = ["GroupMetrics", "group_metrics", "mondrian_operating_points", "worst_group"]


@dataclass(frozen=True)
class GroupMetrics:
    """One group's samples: their number, AURC, AUGRC, and the selective risk and coverage
    of a threshold applied to them (NaN without a threshold)."""

    group: object
    n: int
    aurc: float
    augrc: float
    risk: float
    coverage: float


def _check_groups(groups: ArrayLike, n: int) -> np.ndarray:
    g = np.asarray(groups)
    if g.ndim != 1 or g.size != n:
        raise ValueError(f"groups: expected one group per sample ({n}), got shape {g.shape}")
    if g.dtype.kind == "f" and not np.isfinite(g).all():
        raise ValueError("groups: expected no NaN or inf group labels")
    return g


def group_metrics(
    residuals: ArrayLike,
    confidence: ArrayLike,
    groups: ArrayLike,
    *,
    threshold: float | None = None,
) -> list[GroupMetrics]:
    """AURC and AUGRC (METRICS.md definitions) of each group's samples, in sorted group order,
    and, given ``threshold``, the selective risk and coverage of accepting confidence >= it
    within the group (risk 0 when the group has nothing accepted)."""
    r, c, _, _ = check_inputs(residuals, confidence)
    g = _check_groups(groups, r.size)
    rows = []
    for value in np.unique(g):
        members = g == value
        risk, coverage = (
            selective_outcome(r[members], c[members], threshold)
            if threshold is not None
            else (np.nan, np.nan)
        )
        rows.append(
            GroupMetrics(
                value.item() if hasattr(value, "item") else value,
                int(members.sum()),
                aurc(r[members], c[members]),
                augrc(r[members], c[members]),
                risk,
                coverage,
            )
        )
    return rows


def worst_group(rows: list[GroupMetrics], metric: str = "aurc") -> GroupMetrics:
    """The group with the largest ``metric`` (``"aurc"``, ``"augrc"`` or ``"risk"``; all
    are lower-is-better); the first in group order among equals."""
    if metric not in ("aurc", "augrc", "risk"):
        raise ValueError(f"metric: expected 'aurc', 'augrc' or 'risk', got {metric!r}")
    if not rows:
        raise ValueError("rows: expected at least one group")
    values = np.array([getattr(row, metric) for row in rows], dtype=np.float64)
    if np.isnan(values).all():
        raise ValueError(f"rows: {metric} is NaN in every group (no threshold was applied)")
    return rows[int(np.nanargmax(values))]


def mondrian_operating_points(
    residuals: ArrayLike,
    confidence: ArrayLike,
    groups: ArrayLike,
    alpha: float,
    delta: float,
    method: str,
) -> dict[object, OperatingPoint]:
    """One operating point per group, each certified by ``method`` (see
    :func:`~fdbench.metrics.operating_points.certify`) on that group's calibration samples
    alone (Mondrian calibration, Vovk et al. 2005): within each group the guarantee of the
    method holds at level 1 − δ. Holding in every group at once has probability >= 1 − G·δ
    for G groups (union bound); pass δ/G for a joint guarantee at 1 − δ."""
    r, c, _, _ = check_inputs(residuals, confidence)
    g = _check_groups(groups, r.size)
    return {
        (value.item() if hasattr(value, "item") else value): certify(
            r[g == value], c[g == value], alpha, delta, method
        )
        for value in np.unique(g)
    }
