"""The list of metric specs: each built-in's function gives the suite's value; plug-ins."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.analysis import higher_is_better
from fdbench.metrics import (
    METRIC_KEYS,
    SOFT_METRIC_KEYS,
    evaluate_all,
    metric_keys,
    metric_spec,
    metric_specs,
    register_metric,
)
from fdbench.metrics import specs as metric_spec_list


@pytest.fixture
def clean_specs(monkeypatch):
    monkeypatch.setattr(metric_spec_list, "_SPECS", dict(metric_spec_list._SPECS))
    monkeypatch.setattr(metric_spec_list, "_ENTRY_POINTS_LOADED", True)


def test_each_suite_function_gives_the_suites_value():
    rng = np.random.default_rng(0)
    residuals = rng.integers(0, 2, 300).astype(float)
    confidence = np.round(rng.random(300), 2)  # ties
    labels = rng.integers(0, 3, 300)
    suite = evaluate_all(residuals, confidence, labels=labels)
    checked = 0
    for spec in metric_specs().values():
        if spec.computed_by != "suite" or spec.function is None or spec.needs_logits:
            continue
        args = (residuals, confidence, labels) if spec.needs_labels else (residuals, confidence)
        assert spec.function(*args) == pytest.approx(suite[spec.name], abs=1e-12), spec.name
        checked += 1
    assert checked == 17


def test_facts_of_the_builtins():
    assert {m for m in METRIC_KEYS if metric_spec(m).scale == 1000} == {
        "aurc", "augrc", "eaurc", "eaugrc"}  # fmt: skip
    assert set(SOFT_METRIC_KEYS) - set(METRIC_KEYS) == {"mean_residual"}
    assert metric_spec("aurc").heading() == "AURC ×1000"
    assert metric_spec("auroc_f").heading(per_cent=True) == "AUROC_f ×100"
    assert metric_spec("auroc_f").heading() == "AUROC_f"
    assert [s.name for s in metric_specs().values() if s.interval] == [
        "aurc", "augrc", "eaurc", "eaugrc", "auroc_f", "fpr@95tpr"]  # fmt: skip


def test_a_plugin_metric_enters_the_suite_and_the_directions(clean_specs):
    @register_metric("worst", higher_is_better=False, binary_only=True)
    def worst(residuals, confidence, sample_weight=None):
        return float(residuals[np.argmax(confidence)])

    r = np.array([0.0, 1.0, 0.0])
    c = np.array([0.1, 0.9, 0.5])
    assert evaluate_all(r, c)["worst"] == 1.0
    assert np.isnan(evaluate_all(np.array([0.2, 0.7, 0.0]), c)["worst"])
    assert metric_keys()[-1] == "worst" and not higher_is_better("worst")
    register_metric("worst", higher_is_better=False)(worst)  # the same function: a no-op
    with pytest.raises(ValueError, match="already registered"):
        register_metric("worst", higher_is_better=True)(lambda r, c: 0.0)
    with pytest.raises(ValueError, match="built-in metric"):
        register_metric("aurc", higher_is_better=False)


def test_a_plugin_must_return_a_number(clean_specs):
    register_metric("text", higher_is_better=True)(lambda r, c: "high")
    with pytest.raises(TypeError, match="real number"):
        evaluate_all(np.array([0.0, 1.0]), np.array([0.3, 0.2]))
