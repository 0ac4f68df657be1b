"""Per-group selective metrics and Mondrian operating points against their definitions."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench import metrics as M
from fdbench.metrics.groups import group_metrics, mondrian_operating_points, worst_group
from fdbench.metrics.operating_points import certify


def _data(seed=0, n=600):
    rng = np.random.default_rng(seed)
    groups = rng.choice(np.array(["a", "b", "c"]), size=n)
    c = rng.normal(size=n)
    base = np.where(groups == "c", 0.45, 0.2)
    r = (rng.uniform(size=n) < base * (c < 0.5)).astype(float)
    return r, c, groups


def test_group_metrics_are_the_metrics_of_each_group():
    r, c, g = _data()
    rows = group_metrics(r, c, g, threshold=0.0)
    assert [row.group for row in rows] == ["a", "b", "c"]
    for row in rows:
        m = g == row.group
        assert row.n == m.sum()
        assert row.aurc == M.aurc(r[m], c[m])
        assert row.augrc == M.augrc(r[m], c[m])
        accepted = m & (c >= 0.0)
        assert row.coverage == pytest.approx(accepted.sum() / m.sum())
        assert row.risk == pytest.approx(r[accepted].mean())
    assert worst_group(rows).group == "c"
    assert worst_group(rows, "risk").group == "c"


def test_without_threshold_risk_is_nan_and_worst_risk_refused():
    r, c, g = _data()
    rows = group_metrics(r, c, g)
    assert np.isnan(rows[0].risk)
    with pytest.raises(ValueError, match="NaN"):
        worst_group(rows, "risk")
    with pytest.raises(ValueError, match="groups"):
        group_metrics(r, c, g[:-1])


@pytest.mark.parametrize("method", ["sgr", "ltt_binomial", "crc"])
def test_mondrian_points_are_each_groups_own(method):
    r, c, g = _data(1, 2000)
    points = mondrian_operating_points(r, c, g, 0.1, 0.1, method)
    assert sorted(points) == ["a", "b", "c"]
    for group, point in points.items():
        m = g == group
        assert point == certify(r[m], c[m], 0.1, 0.1, method)
