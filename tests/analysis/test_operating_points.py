"""Operating-point tables: certified on the declared calibration split, checked per study and
group."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench import metrics as M
from fdbench.analysis.operating_points import (
    OPERATING_POINT_COLUMNS,
    operating_point_table,
    split_operating_point_table,
)


def _samples(seed, n=1500, shift=0.0):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=n)
    r = (rng.uniform(size=n) < (0.1 + shift) * (1 + (c < 0))).astype(float)
    groups = rng.choice(np.array(["f", "m"]), size=n)
    return r, c, groups


def test_rows_are_the_calibrated_points_applied_to_each_study():
    cal_r, cal_c, _ = _samples(0)
    studies = {"iid": _samples(1)[:2], "shift": _samples(2, shift=0.2)[:2]}
    table = operating_point_table((cal_r, cal_c), studies, 0.1, 0.1)
    assert list(table.columns) == list(OPERATING_POINT_COLUMNS)
    assert len(table) == 2 * len(M.OPERATING_POINT_METHODS)
    for _, row in table.iterrows():
        point = M.certify(cal_r, cal_c, 0.1, 0.1, row["procedure"])
        out = M.apply_operating_point(point, *studies[row["study"]])
        assert row["threshold"] == point.threshold and row["bound"] == point.bound
        assert (row["risk"], row["coverage"], row["held"]) == (out.risk, out.coverage, out.held)
        assert row["calibration"] == "val" and row["group"] == ""


def test_groups_get_mondrian_rows():
    cal_r, cal_c, cal_g = _samples(0)
    r, c, g = _samples(1)
    table = operating_point_table(
        (cal_r, cal_c), {"iid": (r, c)}, 0.1, 0.1, methods=["sgr"],
        calibration_groups=cal_g, study_groups={"iid": g},
    )  # fmt: skip
    assert list(table["group"]) == ["", "f", "m"]
    for group in ("f", "m"):
        row = table[table["group"] == group].iloc[0]
        point = M.certify(cal_r[cal_g == group], cal_c[cal_g == group], 0.1, 0.1, "sgr")
        assert row["threshold"] == point.threshold
        m = g == group
        assert row["coverage"] == pytest.approx((c[m] >= point.threshold).mean())
        assert row["aurc"] == M.aurc(r[m], c[m]) and row["augrc"] == M.augrc(r[m], c[m])
    rows = M.group_metrics(r, c, g)
    assert table[table["worst_group"]]["group"].tolist() == [M.worst_group(rows).group]


def test_soft_residuals_leave_out_the_binary_methods():
    cal_r, cal_c, _ = _samples(0)
    soft = cal_r * 0.5
    table = operating_point_table((soft, cal_c), {"iid": (soft, cal_c)}, 0.1, 0.1)
    assert sorted(table["procedure"]) == ["crc", "ltt_hb"]


def test_random_split_is_declared_and_disjoint():
    r, c, g = _samples(3)
    table = split_operating_point_table(
        {"iid": (r, c)}, 0.1, 0.1, calibration_fraction=0.4, seed=2, groups={"iid": g}
    )
    assert set(table["calibration"]) == {"random 0.4 (seed 2)"}
    cal = M.calibration_split(r.size, 0.4, 2)
    row = table[(table["procedure"] == "ltt_hb") & (table["group"] == "")].iloc[0]
    point = M.certify(r[cal], c[cal], 0.1, 0.1, "ltt_hb")
    assert row["threshold"] == point.threshold
    assert row["coverage"] == pytest.approx((c[~cal] >= point.threshold).mean())
    assert set(table["group"]) == {"", "f", "m"}
