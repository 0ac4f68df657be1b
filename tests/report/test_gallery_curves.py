"""Gallery selection and storage; curve tables from the metric engine."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench import metrics as M
from fdbench.evaluation.curves import curve_table
from fdbench.report import OVERCONFIDENT_FAILURE, UNDERCONFIDENT_SUCCESS, Gallery, select_gallery


def test_select_gallery_picks_extremes_and_round_trips(tmp_path):
    images = np.arange(6 * 4 * 4 * 1, dtype=np.uint8).reshape(6, 4, 4, 1)
    residuals = np.array([1, 0, 1, 0, 1, 0], dtype=float)
    confidence = np.array([0.9, 0.1, 0.3, 0.8, 0.95, 0.05])
    g = select_gallery(images, residuals, confidence, study="iid", csf="MSR", k=2)
    failures = g.kind == OVERCONFIDENT_FAILURE
    np.testing.assert_array_equal(g.confidence[failures], [0.95, 0.9])
    np.testing.assert_array_equal(g.confidence[g.kind == UNDERCONFIDENT_SUCCESS], [0.05, 0.1])
    np.testing.assert_array_equal(g.images[0], images[4])
    g.save(tmp_path / "gallery.npz")
    back = Gallery.load(tmp_path / "gallery.npz")
    np.testing.assert_array_equal(back.images, g.images)
    assert list(back.kind) == list(g.kind) and list(back.study) == ["iid"] * 4
    both = Gallery.concat([g, back])
    assert len(both) == 8
    with pytest.raises(TypeError, match="uint8"):
        Gallery(images.astype(float), g.confidence[:6], g.study, g.csf, g.kind)


def test_curve_table_matches_metric_engine():
    rng = np.random.default_rng(0)
    r = (rng.uniform(size=500) < 0.2).astype(float)
    c = rng.normal(size=500) - r
    table = curve_table(r, {"a": c, "b": -c}, study="iid")
    curve = M.risk_coverage_curve(r, c)
    a = table[table.csf == "a"]
    np.testing.assert_allclose(a.coverage, curve.coverages)
    np.testing.assert_allclose(a.selective_risk, curve.selective_risks)
    np.testing.assert_allclose(a.generalized_risk, curve.generalized_risks)
    thin = curve_table(r, {"a": c}, study="iid", max_points=50)
    assert len(thin) == 50
    assert thin.coverage.iloc[0] == 1.0 and thin.coverage.iloc[-1] == 0.0
