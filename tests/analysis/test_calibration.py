"""Reliability-diagram bins and ECE of scaled confidences."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.analysis import calibration_analysis, expected_calibration_error, reliability_bins


def test_reliability_bins_hand_example():
    c = np.array([0.0, 0.1, 0.5, 0.55, 0.9, 1.0])
    r = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    bins = reliability_bins(r, c, n_bins=2)
    assert bins["count"].tolist() == [3, 3]
    np.testing.assert_allclose(bins.confidence, [0.2, 2.45 / 3])
    np.testing.assert_allclose(bins.accuracy, [2 / 3, 2 / 3])
    expected = 0.5 * abs(2 / 3 - 0.2) + 0.5 * abs(2 / 3 - 2.45 / 3)
    assert expected_calibration_error(bins) == pytest.approx(expected)


def test_calibration_analysis_perfectly_calibrated_is_small():
    rng = np.random.default_rng(1)
    c = rng.uniform(size=20000)
    r = (rng.uniform(size=20000) >= c).astype(np.float64)
    over = np.clip(c + 0.2, 0, 1)
    ece, reliability = calibration_analysis({"iid": r}, {"iid": {"good": c, "over": over}})
    values = ece.set_index("csf").value
    assert values["good"] < 0.02 < 0.15 < values["over"]
    assert set(reliability.columns) >= {"study", "csf", "bin", "confidence", "accuracy"}
    assert len(reliability) == 30
    with pytest.raises(ValueError, match="Platt"):
        reliability_bins(r, c + 1)
