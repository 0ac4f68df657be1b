"""Reliability tables and ECE of scaled confidences, per study and CSF."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.analysis import (
    calibration_analysis,
    calibration_treatment,
    csf_calibration,
    mean_calibration,
    platt_collapsed,
    reliability_table,
)
from fdbench.csf import REGISTRY, fit_platt


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
    rng = np.random.default_rng(4)

    def draw(n):
        logit = rng.normal(0, 2, size=n)
        r = (rng.uniform(size=n) >= 1 / (1 + np.exp(-logit))).astype(np.float64)
        return r, {"MLS": 5 * logit + 3}

    val_r, val_c = draw(4000)
    test_r, test_c = draw(4000)
    ece, reliability = csf_calibration(val_r, val_c, {"iid": test_r}, {"iid": test_c})
    assert ece.value.item() < 0.03
    platt = fit_platt(val_c["MLS"], 1 - val_r)
    _, direct = calibration_analysis(
        {"iid": test_r}, {"iid": {"MLS": platt(test_c["MLS"])}}, n_bins=20
    )
    bins = reliability.drop(columns=["treatment", "platt_collapsed"])
    pd.testing.assert_frame_equal(bins, direct)
    assert (reliability["treatment"] == "platt").all() and not reliability.platt_collapsed.any()


def test_treatment_of_every_csf():
    # FD-Shifts (fd_shifts/analysis/__init__.py): Platt for _pe, _ee, _mi, _sv, maha, _mls;
    # temperature for temp_mls; probabilities as they are
    treatment = {name: calibration_treatment(name) for name in REGISTRY}
    platt = {"MLS", "PE", "energy", "DOCTOR", "MCD-PE", "MCD-EE", "MCD-MI", "MCD-MLS"}
    platt |= {"ENS-PE", "ENS-EE", "ENS-MI", "Mahalanobis", "DKNN", "TrustScore", "ViM"}
    platt |= {"EDL-Unc"}  # -K / S lies in [-1, 0), not a probability
    assert {c for c, t in treatment.items() if t == "platt"} == platt
    assert {c for c, t in treatment.items() if t == "temperature"} == {"TEMP-MLS"}
    for csf in ("MSR", "MCD-MSR", "ENS-MSR", "DeVries", "DG-Res", "ConfidNet", "DG-Res-MCD",
                "EDL-MSR", "ODIN"):  # fmt: skip
        assert calibration_treatment(csf) == "none"
    with pytest.raises(ValueError, match="csf must be one of"):
        calibration_treatment("TEMP-MSR")
    with pytest.raises(TypeError, match="csf must be a str"):
        calibration_treatment(3)


def _correctness_data(seed, n=3000):
    rng = np.random.default_rng(seed)
    margin = rng.normal(size=n)
    residuals = (rng.uniform(size=n) >= 1 / (1 + np.exp(-(1.5 + 2 * margin)))).astype(float)
    probs = rng.dirichlet(np.ones(4), size=n)
    msr = 1 / (1 + np.exp(-(1.5 + 2 * margin)))
    confidences = {
        "MSR": msr,
        "TEMP-MLS": np.clip(msr - 0.05, 0, 1),
        "PE": np.sum(probs * np.log(probs), axis=1) + 3 * margin,
        # no signal at all and heavy tails: the logistic fit keeps a ≈ 0
        "Mahalanobis": -np.abs(rng.standard_cauchy(n)) * 1e3,
    }
    return residuals, confidences


def test_msr_and_temp_mls_as_they_are_pe_platt_scaled():
    val_r, val_c = _correctness_data(0)
    test_r, test_c = _correctness_data(1)
    ece, _ = csf_calibration(val_r, val_c, {"iid": test_r}, {"iid": test_c})
    got = ece.set_index("csf")
    assert got.loc["MSR", "value"] == M.ece(test_r, test_c["MSR"], n_bins=20)
    assert got.loc["TEMP-MLS", "value"] == M.ece(test_r, test_c["TEMP-MLS"], n_bins=20)
    platt = fit_platt(val_c["PE"], 1 - val_r)
    assert got.loc["PE", "value"] == M.ece(test_r, platt(test_c["PE"]), n_bins=20)
    assert got.loc["PE", "value"] != M.ece(test_r, 1 / (1 + np.exp(-test_c["PE"])), n_bins=20)
    assert dict(got["treatment"]) == {
        "MSR": "none",
        "TEMP-MLS": "temperature",
        "PE": "platt",
        "Mahalanobis": "platt",
    }
    # the no-signal CSF's fit collapses; nothing else is flagged
    assert dict(got["platt_collapsed"]) == {
        "MSR": False,
        "TEMP-MLS": False,
        "PE": False,
        "Mahalanobis": True,
    }
    with pytest.raises(ValueError, match="values in \\[0, 1\\]"):
        csf_calibration(val_r, val_c, {"iid": test_r}, {"iid": {"MSR": test_c["PE"]}})


def test_platt_collapse_rule():
    from fdbench.csf import PlattScaling

    c = np.linspace(-1, 1, 101)
    # central 95 % of c is [-0.95, 0.95]; a = 0.1, b = 2 maps it to
    # σ(2.095) − σ(1.905) ≈ 0.0198 < 1/20; a = 0.3, b = 0 to 2·σ(0.285) − 1 ≈ 0.1416,
    # wider than a bin of 20, narrower than a bin of 5
    assert platt_collapsed(PlattScaling(a=0.1, b=2.0), c, n_bins=20)
    assert not platt_collapsed(PlattScaling(a=0.3, b=0.0), c, n_bins=20)
    assert platt_collapsed(PlattScaling(a=0.3, b=0.0), c, n_bins=5)
    assert not platt_collapsed(PlattScaling(a=2.0, b=0.0), c, n_bins=20)
    assert platt_collapsed(PlattScaling(a=0.0, b=1.0), c, n_bins=20)
    with pytest.raises(ValueError, match="val_confidence"):
        platt_collapsed(PlattScaling(a=1.0, b=0.0), [], n_bins=20)


def test_one_bin_study_is_flagged_only_for_platt_scaled_csfs():
    # a useful fit on validation, but on the study every sample maps into one bin
    val_r, val_c = _correctness_data(0)
    test_r = np.array([0.0, 1.0, 0.0, 0.0])
    study = {"PE": np.full(4, 40.0), "MSR": np.full(4, 0.99)}
    ece, reliability = csf_calibration(val_r, val_c, {"s": test_r}, {"s": study})
    flags = ece.set_index("csf")["platt_collapsed"]
    assert flags["PE"] and not flags["MSR"]
    assert reliability.groupby("csf")["platt_collapsed"].all().to_dict() == flags.to_dict()


def test_mean_calibration_averages_runs_and_keeps_any_collapse():
    rows = pd.DataFrame(
        {
            "method": ["ce"] * 4,
            "seed": [0, 1, 0, 1],
            "csf": ["MSR", "MSR", "Mahalanobis", "Mahalanobis"],
            "study": ["iid"] * 4,
            "treatment": ["none", "none", "platt", "platt"],
            "value": [0.02, 0.04, 0.003, 0.09],
            "platt_collapsed": [False, False, True, False],
        }
    )
    out = mean_calibration(rows).set_index("csf")
    assert out.loc["MSR", "value"] == pytest.approx(0.03)
    assert out.loc["Mahalanobis", "value"] == pytest.approx(0.0465)
    assert out["n_runs"].tolist() == [2, 2]
    assert out["platt_collapsed"].tolist() == [False, True]
    assert out["treatment"].tolist() == ["none", "platt"]
    with pytest.raises(ValueError, match="lacks column"):
        mean_calibration(rows.drop(columns="platt_collapsed"))
