"""Bad inputs raise errors that name the argument."""

import numpy as np
import pytest

from fdbench import metrics as M


def test_confidence_nan_reports_count_and_position():
    with pytest.raises(ValueError, match=r"confidence: .*2 value\(s\), first at index 1, 3"):
        M.aurc([0, 1, 0, 1], [0.1, np.nan, 0.3, np.inf])


@pytest.mark.parametrize(
    ("residuals", "confidence", "weights", "match"),
    [
        ([0, 1], [0.1], None, "residuals and confidence"),
        ([], [], None, "residuals: expected at least one sample"),
        ([0, -1], [0.1, 0.2], None, "residuals"),
        ([0, np.nan], [0.1, 0.2], None, "residuals"),
        ([0, 1], [0.1, 0.2], [1, -1], "sample_weight"),
        ([0, 1], [0.1, 0.2], [0, 0], "sample_weight"),
        ([0, 1], [0.1, 0.2], [1], "sample_weight"),
        ([[0, 1]], [[0.1, 0.2]], None, "residuals"),
    ],
)
def test_bad_inputs(residuals, confidence, weights, match):
    for fn in (M.aurc, M.evaluate_all, M.risk_coverage_curve):
        with pytest.raises(ValueError, match=match):
            fn(residuals, confidence, sample_weight=weights)


def test_bad_scalars_and_labels():
    with pytest.raises(ValueError, match="coverage"):
        M.selective_risk_at_coverage([0, 1], [0.1, 0.2], 0.0)
    with pytest.raises(ValueError, match="risk"):
        M.coverage_at_risk([0, 1], [0.1, 0.2], -0.1)
    with pytest.raises(ValueError, match="coverage_range"):
        M.aurc([0, 1], [0.1, 0.2], coverage_range=(0.5, 0.5))
    with pytest.raises(ValueError, match="labels"):
        M.aurc_ba([0, 1], [0.1, 0.2], [0])
    with pytest.raises(TypeError, match="confidence"):
        M.aurc([0, 1], ["a", "b"])
