"""Reliability tables and ECE of scaled confidences, per study and CSF."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fdbench.analysis import calibration_analysis, platt_calibration, reliability_table


def test_reliability_table_hand_example():
    c = np.array([0.0, 0.1, 0.5, 0.55, 0.9, 1.0])
    r = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    bins = reliability_table(r, c, n_bins=2)
    assert bins["count"].tolist() == [3, 3]
    np.testing.assert_allclose(bins.confidence, [0.2, 2.45 / 3])
    np.testing.assert_allclose(bins.accuracy, [2 / 3, 2 / 3])
    np.testing.assert_allclose(bins.lower, [0.0, 0.5])


def test_calibration_analysis_separates_calibrated_from_overconfident():
    rng = np.random.default_rng(1)
    c = rng.uniform(size=20000)
    r = (rng.uniform(size=20000) >= c).astype(np.float64)
    over = np.clip(c + 0.2, 0, 1)
    ece, reliability = calibration_analysis({"iid": r}, {"iid": {"good": c, "over": over}})
    values = ece.set_index("csf").value
    assert values["good"] < 0.02 < 0.15 < values["over"]
    # ECE equals the count-weighted gap of the reliability table
    for csf, bins in reliability.groupby("csf"):
        filled = bins[bins["count"] > 0]
        gap = (filled["count"] * (filled.accuracy - filled.confidence).abs()).sum()
        assert values[csf] == pytest.approx(gap / filled["count"].sum())
    assert list(reliability.columns[:3]) == ["study", "csf", "bin"]
    assert len(reliability) == 30
    with pytest.raises(ValueError, match="Platt"):
        calibration_analysis({"iid": r}, {"iid": {"raw": c + 1}})
    with pytest.raises(ValueError, match="without residuals"):
        calibration_analysis({}, {"iid": {"good": c}})


def test_platt_calibration_fixes_a_badly_scaled_csf():
    from fdbench.csf import fit_platt

    rng = np.random.default_rng(4)

    def draw(n):
        logit = rng.normal(0, 2, size=n)
        r = (rng.uniform(size=n) >= 1 / (1 + np.exp(-logit))).astype(np.float64)
        return r, {"raw_margin": 5 * logit + 3}

    val_r, val_c = draw(4000)
    test_r, test_c = draw(4000)
    ece, reliability = platt_calibration(val_r, val_c, {"iid": test_r}, {"iid": test_c})
    assert ece.value.item() < 0.03
    platt = fit_platt(val_c["raw_margin"], 1 - val_r)
    _, direct = calibration_analysis(
        {"iid": test_r}, {"iid": {"raw_margin": platt(test_c["raw_margin"])}}
    )
    pd.testing.assert_frame_equal(reliability, direct)
