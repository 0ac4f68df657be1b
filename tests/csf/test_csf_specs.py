"""The list of CSF specs: every fact of a built-in CSF, and the plug-in path into the same list."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.analysis import calibration_treatment, scoring_method_name
from fdbench.csf import OPT_IN, REGISTRY, CSFSpec, compute_csfs, csf_spec, csf_specs, register_csf
from fdbench.csf import specs as csf_spec_list
from fdbench.evaluation.runs import csf_prediction_source
from fdbench.outputs import RunOutputs, SplitOutputs
from fdbench.report.palette import csf_colour
from fdbench.training.methods import method_names

# The facts as FD-Shifts and the papers give them, written out by hand (not read from the list).
PLATT = {"MLS", "PE", "energy", "DOCTOR", "MCD-PE", "MCD-EE", "MCD-MI", "MCD-MLS", "ENS-PE"}
PLATT |= {"ENS-EE", "ENS-MI", "Mahalanobis", "DKNN", "TrustScore", "ViM", "EDL-Unc"}
MCD = {"MCD-MSR", "MCD-PE", "MCD-EE", "MCD-MI", "MCD-MLS", "DeVries-MCD", "DG-Res-MCD"}
MCD |= {"ConfidNet-MCD"}
HEADS = {"DeVries", "DG-Res", "ConfidNet", "DUQ", "DeVries-MCD", "DG-Res-MCD", "ConfidNet-MCD"}
HEADS |= {"EDL-MSR", "EDL-Unc", "ODIN"}


@pytest.fixture
def clean_specs(monkeypatch):
    monkeypatch.setattr(csf_spec_list, "_SPECS", dict(csf_spec_list._SPECS))
    monkeypatch.setattr(csf_spec_list, "_ENTRY_POINTS_LOADED", True)


def test_every_builtin_fact_is_a_field_of_its_spec():
    assert list(csf_specs())[: len(REGISTRY)] == list(REGISTRY)
    assert {n for n, s in REGISTRY.items() if s.calibration == "platt"} == PLATT
    assert {n for n, s in REGISTRY.items() if s.calibration == "temperature"} == {"TEMP-MLS"}
    assert {n for n, s in REGISTRY.items() if s.judged_by == "mcd"} == MCD
    assert {n for n, s in REGISTRY.items() if s.judged_by == "ensemble"} == {
        "ENS-MSR", "ENS-PE", "ENS-EE", "ENS-MI"}  # fmt: skip
    assert {n for n, s in REGISTRY.items() if s.head is not None} == HEADS
    assert {n for n, s in REGISTRY.items() if s.binary == "exclude"} == {
        "PE", "MCD-PE", "MCD-EE", "ENS-PE", "ENS-EE"}  # fmt: skip
    assert {n for n, s in REGISTRY.items() if s.binary == "predicted_class"} == {
        "MSR", "MCD-MSR", "ENS-MSR"}  # fmt: skip
    assert set(OPT_IN) == {"MaxLogit-pNorm", "pNormSoftmax"}
    assert all(s.compute is None for s in OPT_IN.values())
    assert all(s.colour is not None for s in csf_specs().values())
    assert csf_colour("MSR") == "#0072B2" and csf_colour("ENS-MSR") == csf_colour("MSR")


def test_the_stages_read_the_spec(clean_specs):
    register_csf(
        "Margin2", calibration="none", judged_by="mcd", colour="#123456", binary="exclude"
    )(lambda run, s: np.ones(len(run.splits[s].labels)))
    assert calibration_treatment("Margin2") == "none"
    assert csf_prediction_source("Margin2") == "mcd"
    assert csf_colour("Margin2") == "#123456"
    assert "deepgamblers" in method_names()  # registering the methods names their prefixes
    assert scoring_method_name("deepgamblers", "Margin2") == "DG-Margin2"
    register_csf("OwnHead", head="myhead")(lambda run, s: run.splits[s].heads["myhead"])
    assert scoring_method_name("deepgamblers", "OwnHead") == "OwnHead"
    rng = np.random.default_rng(0)
    split = SplitOutputs(labels=rng.integers(0, 3, 10), logits=rng.normal(size=(10, 3)))
    run = RunOutputs(splits={"iid": split}, meta={})
    # judged by the MC-dropout classifier: computed only where MC-dropout logits are stored;
    # a head CSF only where the head is stored
    assert "Margin2" not in compute_csfs(run, "iid") and "OwnHead" not in compute_csfs(run, "iid")
    with_head = SplitOutputs(
        labels=split.labels, logits=split.logits, heads={"myhead": rng.random(10)}
    )
    out = compute_csfs(RunOutputs(splits={"iid": with_head}, meta={}), "iid")
    np.testing.assert_array_equal(out["OwnHead"], with_head.heads["myhead"])


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("calibration", "sigmoid", "calibration"),
        ("judged_by", "ensemble-ish", "judged_by"),
        ("binary", "drop", "binary"),
        ("colour", "red", "colour"),
    ],
)
def test_bad_spec_fields_are_refused(clean_specs, field, value, needle):
    with pytest.raises(ValueError, match=needle):
        register_csf("Bad", **{field: value})(lambda run, s: np.zeros(3))


def test_unknown_names():
    with pytest.raises(ValueError, match="csf must be one of"):
        csf_spec("TEMP-MSR")
    with pytest.raises(TypeError, match="csf must be a str"):
        csf_spec(3)
    with pytest.raises(TypeError, match="CSFSpec"):
        csf_spec_list.add_csf("MSR")
    assert isinstance(csf_spec("MSR"), CSFSpec)
