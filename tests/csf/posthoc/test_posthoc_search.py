"""The hyper-parameter search: validation data only (an instrumented reader), both modes, the
chosen values against a search by hand."""

import numpy as np
import pytest

from fdbench.csf import compute_csfs, csf_spec
from fdbench.csf.posthoc import (
    PostHocInputs,
    posthoc_confidences,
    posthoc_score,
    posthoc_scores,
    search_posthoc,
)
from fdbench.metrics import aurc
from fdbench.outputs import SplitOutputs

from .conftest import make_run


class RecordingSplits(dict):
    """``run.splits`` that records every split read."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read: set[str] = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)


def instrumented(run):
    run.splits = RecordingSplits(run.splits)
    return run


def test_the_search_reads_no_test_split():
    run = instrumented(make_run())
    inputs = PostHocInputs(run)
    for name in posthoc_scores():
        search_posthoc(inputs, name, test_studies=["iid", "new_class"])
    assert run.splits.read <= {"train", "val"}
    assert "val" in run.splits.read and "train" in run.splits.read


def test_the_ood_mode_reads_its_validation_ood_split_only():
    run = make_run()
    run.splits["val_ood"] = SplitOutputs(
        labels=np.full(20, -1),
        logits=run.splits["new_class"].logits[:20],
        features=run.splits["new_class"].features[:20],
        kind="new_class",
    )
    run = instrumented(run)
    inputs = PostHocInputs(run)
    for name in posthoc_scores():
        search_posthoc(inputs, name, mode="ood", val_ood=["val_ood"], test_studies=["iid"])
    assert run.splits.read <= {"train", "val", "val_ood"}
    assert "val_ood" in run.splits.read


def test_a_validation_ood_split_must_be_disjoint_from_the_test_studies():
    inputs = PostHocInputs(make_run())
    with pytest.raises(ValueError, match="disjoint"):
        search_posthoc(inputs, "GEN", mode="ood", val_ood=["new_class"], test_studies=["new_class"])
    with pytest.raises(ValueError, match="val_ood"):
        search_posthoc(inputs, "GEN", mode="ood")
    with pytest.raises(ValueError, match="mode"):
        search_posthoc(inputs, "GEN", mode="test")


def test_the_choice_is_the_grid_point_of_least_validation_aurc():
    run = make_run(seed=5)
    val = run.splits["val"]
    residuals = (np.argmax(val.logits, axis=1) != val.labels).astype(float)
    score = posthoc_score("ReAct")
    values = {
        p: aurc(residuals, score.compute(PostHocInputs(run), "val", percentile=p))
        for p in score.grid["percentile"]
    }
    best = min(values, key=lambda p: (values[p], score.grid["percentile"].index(p)))
    choice = search_posthoc(PostHocInputs(run), "ReAct")
    assert choice.params == {"percentile": best}
    assert choice.value == values[best]
    assert [v for _, v in choice.tried] == list(values.values())


def test_the_ood_mode_counts_validation_ood_samples_as_failures():
    run = make_run(seed=6)
    run.splits["val_ood"] = run.splits.pop("new_class")
    val = run.splits["val"]
    residuals = np.concatenate(
        [(np.argmax(val.logits, axis=1) != val.labels).astype(float), np.ones(30)]
    )
    inputs = PostHocInputs(run)
    choice = search_posthoc(
        inputs, "GEN", mode="ood", val_ood=["val_ood"], grid={"gamma": (0.1, 1.0)}
    )
    expected = {
        g: aurc(
            residuals,
            np.concatenate(
                [
                    posthoc_score("GEN").compute(inputs, s, gamma=g, m=100)
                    for s in ("val", "val_ood")
                ]
            ),
        )
        for g in (0.1, 1.0)
    }
    assert choice.value == min(expected.values())


def test_posthoc_confidences_are_computed_with_the_chosen_values():
    run = make_run()
    confidences, choices = posthoc_confidences(run, ["iid", "new_class", "val"])
    assert set(choices) == set(posthoc_scores())
    for name, choice in choices.items():
        expected = posthoc_score(name).compute(PostHocInputs(run), "iid", **choice.params)
        np.testing.assert_array_equal(confidences["iid"][name], expected)
        assert choice.params_json().startswith("{")


def test_posthoc_scores_stay_out_of_compute_csfs():
    run = make_run()
    assert not set(posthoc_scores()) & set(compute_csfs(run, "iid"))
    assert all(csf_spec(name).opt_in for name in posthoc_scores())


def test_scores_missing_their_outputs_are_left_out():
    run = make_run()
    del run.meta["fc_weight"]
    _, choices = posthoc_confidences(run, ["iid"])
    assert "ReAct" not in choices and "GEN" in choices and "RMDS" in choices
