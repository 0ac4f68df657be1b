"""Accuracy and ECE of the samples accepted at a coverage: hand-computed cases and brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.analysis.accepted_calibration import (
    acceptance_threshold,
    accepted_calibration,
    accepted_calibration_table,
)

CONF = [0.9, 0.8, 0.8, 0.7, 0.6]
WRONG = [0, 1, 0, 1, 0]


def test_hand_computed_case_with_a_tie_at_the_threshold():
    # target 40 %: 0.9 alone covers 20 %, >= 0.8 covers 60 % (the tie is accepted together)
    assert acceptance_threshold(CONF, 0.4) == 0.8
    assert acceptance_threshold(CONF, 0.2) == 0.9
    assert acceptance_threshold(CONF, 0.6) == 0.8
    assert acceptance_threshold(CONF, 0.8) == 0.7
    assert acceptance_threshold(CONF, 1.0) == 0.6
    out = accepted_calibration(WRONG, CONF, 0.4)
    assert out["threshold"] == 0.8
    assert out["n_accepted"] == 3
    assert out["coverage"] == 0.6
    assert out["accuracy"] == pytest.approx(2 / 3)
    # 15 bins: 0.9 in (13/15, 14/15] (1 correct), both 0.8 in (11/15, 12/15] (1 of 2 correct):
    # ECE = (|1 - 0.9| + |1 - 1.6|) / 3
    assert out["ece"] == pytest.approx(0.7 / 3)
    # the reported probability is measured, the threshold stays on the confidence
    scaled = accepted_calibration(WRONG, CONF, 0.4, probability=[1.0, 0.5, 0.5, 0.0, 0.0])
    assert scaled["n_accepted"] == 3
    assert scaled["ece"] == pytest.approx(0.0)


def test_default_coverage_is_80_percent():
    out = accepted_calibration(WRONG, CONF)
    assert (out["threshold"], out["n_accepted"], out["accuracy"]) == (0.7, 4, 0.5)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 6)), min_size=1, max_size=40),
    st.floats(0.01, 1.0),
)
def test_matches_brute_force_and_selective_risk(pairs, coverage):
    wrong = np.array([w for w, _ in pairs], dtype=float)
    conf = np.array([c / 6 for _, c in pairs])
    out = accepted_calibration(wrong, conf, coverage)
    # brute force: the largest candidate threshold whose share of c >= t reaches the target
    candidates = sorted(set(conf), reverse=True)
    tau = next(t for t in candidates if np.mean(conf >= t) >= coverage)
    assert out["threshold"] == tau
    accepted = conf >= tau
    assert out["n_accepted"] == accepted.sum()
    assert out["accuracy"] == pytest.approx(1 - wrong[accepted].mean())
    assert out["ece"] == pytest.approx(M.ece(wrong[accepted], conf[accepted]))
    assert 1 - out["accuracy"] == pytest.approx(M.selective_risk_at_coverage(wrong, conf, coverage))


def test_table_uses_the_calibration_treatment():
    rng = np.random.default_rng(0)
    wrong_val = (rng.uniform(size=400) < 0.3).astype(float)
    val = {"MSR": rng.uniform(0.5, 1, 400), "MLS": rng.normal(5, 2, 400) - 3 * wrong_val}
    wrong = (rng.uniform(size=300) < 0.3).astype(float)
    test = {"MSR": rng.uniform(0.5, 1, 300), "MLS": rng.normal(5, 2, 300) - 3 * wrong}
    table = accepted_calibration_table(wrong_val, val, {"iid": wrong}, {"iid": test}, coverage=0.5)
    assert list(table["csf"]) == ["MSR", "MLS"]
    assert list(table["treatment"]) == ["none", "platt"]
    msr = table.iloc[0]
    assert msr["ece"] == accepted_calibration(wrong, test["MSR"], 0.5)["ece"]
    from fdbench.csf import fit_platt

    platt = fit_platt(val["MLS"], 1 - wrong_val)
    expected = accepted_calibration(wrong, test["MLS"], 0.5, probability=platt(test["MLS"]))
    mls = table.iloc[1]
    assert mls["ece"] == expected["ece"]
    assert mls["accuracy"] == expected["accuracy"]
    # without validation confidences a Platt CSF keeps its accuracy, its ECE is NaN
    bare = accepted_calibration_table(None, {}, {"iid": wrong}, {"iid": test}, coverage=0.5)
    assert np.isnan(bare.iloc[1]["ece"]) and bare.iloc[1]["accuracy"] == expected["accuracy"]


def test_bad_inputs():
    with pytest.raises(ValueError, match="coverage"):
        accepted_calibration(WRONG, CONF, 0.0)
    with pytest.raises(ValueError, match="confidence"):
        accepted_calibration(WRONG, [0.1, np.nan, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="residuals"):
        accepted_calibration([0, 2, 0, 1, 0], CONF)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        accepted_calibration(WRONG, [2.0, 1.0, 0.5, 0.2, 0.1])
    with pytest.raises(ValueError, match="without residuals"):
        accepted_calibration_table(None, {}, {}, {"iid": {"MSR": CONF}})
