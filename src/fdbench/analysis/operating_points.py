"""Certified operating points of every CSF: fitted on a declared calibration split, checked on
each test study, per group where samples carry one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fdbench.metrics.groups import mondrian_operating_points
from fdbench.metrics.operating_points import (
    OPERATING_POINT_METHODS,
    OperatingPoint,
    apply_operating_point,
    calibration_split,
    certify,
)
from fdbench.metrics.selective import augrc, aurc

__all__ = [
    "BINARY_METHODS",
    "OPERATING_POINT_COLUMNS",
    "operating_point_table",
    "split_operating_point_table",
]

#: Methods whose bound needs 0/1 residuals (left out for other losses).
BINARY_METHODS = ("sgr", "ltt_binomial")

#: Columns of :func:`operating_point_table`.
OPERATING_POINT_COLUMNS = (
    "study",
    "procedure",
    "alpha",
    "delta",
    "calibration",
    "group",
    "threshold",
    "feasible",
    "calibration_coverage",
    "calibration_risk",
    "bound",
    "risk",
    "coverage",
    "generalized_risk",
    "held",
    "aurc",
    "augrc",
    "worst_group",
)

Samples = tuple[ArrayLike, ArrayLike]


def _methods(residuals: np.ndarray, methods: Sequence[str]) -> list[str]:
    for method in methods:
        if method not in OPERATING_POINT_METHODS:
            raise ValueError(
                f"methods: expected names of {OPERATING_POINT_METHODS}, got {method!r}"
            )
    binary = bool(np.isin(residuals, (0.0, 1.0)).all())
    return [m for m in methods if binary or m not in BINARY_METHODS]


def _row(study, point: OperatingPoint, calibration: str, group, residuals, confidence) -> dict:
    out = apply_operating_point(point, residuals, confidence)
    return {
        "study": study,
        "procedure": point.method,
        "alpha": point.alpha,
        "delta": point.delta,
        "calibration": calibration,
        "group": group,
        "threshold": point.threshold,
        "feasible": point.feasible,
        "calibration_coverage": point.coverage,
        "calibration_risk": point.risk,
        "bound": point.bound,
        "risk": out.risk,
        "coverage": out.coverage,
        "generalized_risk": out.generalized_risk,
        "held": out.held,
        "aurc": aurc(residuals, confidence),
        "augrc": augrc(residuals, confidence),
        "worst_group": False,
    }


def operating_point_table(
    calibration: Samples,
    studies: Mapping[str, Samples],
    alpha: float,
    delta: float,
    *,
    methods: Sequence[str] = OPERATING_POINT_METHODS,
    calibration_name: str = "val",
    calibration_groups: ArrayLike | None = None,
    study_groups: Mapping[str, ArrayLike] | None = None,
) -> pd.DataFrame:
    """Operating points certified on ``calibration`` = (residuals, confidence), a split
    disjoint from every test study, applied to each ``studies[name]`` = (residuals,
    confidence): one row per study and procedure (:data:`OPERATING_POINT_COLUMNS`, group "";
    ``procedure`` is a name of :data:`fdbench.metrics.OPERATING_POINT_METHODS`).

    ``held`` says whether the quantity the method controls (selective risk; generalized risk
    for CRC) stayed within α on the study; on i.i.d. data it does with probability >= 1 − δ
    (CRC: in expectation), under shift the guarantee does not apply. With
    ``calibration_groups`` (one group per calibration sample) and ``study_groups``, each group
    also gets its own threshold, certified on its calibration samples alone (Mondrian) and
    applied to the study's samples of that group, one row per group. SGR and binomial LTT
    need 0/1 residuals and are left out for other losses. Every row also holds the AURC and
    AUGRC of its test samples (METRICS.md); among the group rows of a study and procedure,
    ``worst_group`` marks the group of the largest AURC.
    """
    cal_r, cal_c = (np.asarray(a, dtype=np.float64) for a in calibration)
    chosen = _methods(cal_r, methods)
    rows = []
    for method in chosen:
        point = certify(cal_r, cal_c, alpha, delta, method)
        per_group = (
            mondrian_operating_points(cal_r, cal_c, calibration_groups, alpha, delta, method)
            if calibration_groups is not None
            else {}
        )
        for study, (r, c) in studies.items():
            r, c = np.asarray(r, dtype=np.float64), np.asarray(c, dtype=np.float64)
            rows.append(_row(study, point, calibration_name, "", r, c))
            if not per_group or study_groups is None or study not in study_groups:
                continue
            groups = np.asarray(study_groups[study])
            for group, group_point in per_group.items():
                members = groups == group
                if members.any():
                    rows.append(
                        _row(study, group_point, calibration_name, str(group),
                             r[members], c[members])
                    )  # fmt: skip
    table = pd.DataFrame(rows, columns=list(OPERATING_POINT_COLUMNS))
    grouped = table[table["group"] != ""]
    if not grouped.empty:
        worst = grouped.groupby(["study", "procedure"], sort=False)["aurc"].idxmax()
        table.loc[worst.to_numpy(), "worst_group"] = True
    return table


def split_operating_point_table(
    studies: Mapping[str, Samples],
    alpha: float,
    delta: float,
    *,
    calibration_fraction: float,
    seed: int,
    methods: Sequence[str] = OPERATING_POINT_METHODS,
    groups: Mapping[str, ArrayLike] | None = None,
) -> pd.DataFrame:
    """Operating points from a seeded random split of each study: a ``calibration_fraction``
    of its samples (:func:`fdbench.metrics.calibration_split` with ``seed``) certifies the
    threshold, the disjoint rest is its test split. Rows as :func:`operating_point_table`,
    ``calibration`` = "random <fraction> (seed <seed>)"; with ``groups`` (per study, one group
    per sample) Mondrian rows per group as there."""
    tables = []
    name = f"random {calibration_fraction:g} (seed {seed})"
    for study, (r, c) in studies.items():
        r, c = np.asarray(r, dtype=np.float64), np.asarray(c, dtype=np.float64)
        cal = calibration_split(r.size, calibration_fraction, seed)
        g = None if groups is None or study not in groups else np.asarray(groups[study])
        tables.append(
            operating_point_table(
                (r[cal], c[cal]),
                {study: (r[~cal], c[~cal])},
                alpha,
                delta,
                methods=methods,
                calibration_name=name,
                calibration_groups=None if g is None else g[cal],
                study_groups=None if g is None else {study: g[~cal]},
            )
        )
    if not tables:
        return pd.DataFrame(columns=list(OPERATING_POINT_COLUMNS))
    return pd.concat(tables, ignore_index=True)
