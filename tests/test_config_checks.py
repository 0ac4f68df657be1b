"""What ``run_benchmark`` checks before it writes into the run folder: the studies the
``analysis.report_studies`` patterns must match, and a folder it may not use."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fdbench.core.io import ForeignFileError
from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind
from fdbench.jobs.report_inputs import check_report_studies, planned_studies
from fdbench.jobs.run_folder import CONFIG_FILE, check_run_folder, open_run_folder


def _study(name: str, kind: StudyKind) -> Study:
    return Study(name, kind, np.zeros((2, 4, 4, 1), np.uint8), np.zeros(2, np.int64))


def _experiment(name: str, *studies: Study) -> Experiment:
    data = ImageDataset("d", np.zeros((2, 4, 4, 1), np.uint8), np.zeros(2, np.int64), ("a",))
    return Experiment(name, ("a",), data, data, studies)


FDSHIFTS = _experiment(
    "fd",
    _study("iid", StudyKind.IID),
    _study("corruption/blur/1", StudyKind.CORRUPTION),
    _study("corruption/noise/1", StudyKind.CORRUPTION),
    _study("new_class/semantic", StudyKind.NEW_CLASS_SEMANTIC),
)
KIM = _experiment(
    "kim",
    _study("iid", StudyKind.IID),
    _study("near_ood/shirts", StudyKind.NEAR_OOD),
    _study("far_ood/mnist", StudyKind.FAR_OOD),
    _study("far_ood/noise", StudyKind.FAR_OOD),
)


def test_planned_studies_add_the_pools_the_evaluation_adds():
    # FD-Shifts: the per-type corruption splits pool per severity; a new-class split pools
    # into Kim's "unknown"; Kim's near/far splits pool into "unknown", "near_ood", "far_ood"
    assert planned_studies([FDSHIFTS]) == [
        "iid",
        "corruption/blur/1",
        "corruption/noise/1",
        "new_class/semantic",
        "corruption/1",
        "unknown",
    ]
    assert planned_studies([KIM, FDSHIFTS])[:7] == [
        "iid",
        "near_ood/shirts",
        "far_ood/mnist",
        "far_ood/noise",
        "unknown",
        "near_ood",
        "far_ood",
    ]
    # a post-hoc search's validation OoD set is no study
    assert "far_ood/noise" not in planned_studies([KIM], held_out=["far_ood/noise"])


def test_a_pattern_that_matches_no_planned_study_offers_the_closest():
    studies = planned_studies([KIM])
    check_report_studies(["iid", "near_ood/*", "far_ood/*", "unknown"], studies, "x")
    with pytest.raises(ValueError, match=r"'far_od/\*' matches no study of the experiments \("):
        check_report_studies(["far_od/*"], studies, "the experiments")
    with pytest.raises(ValueError, match=r"did you mean 'iid'\?$"):
        check_report_studies(["iidd"], studies, "the experiments")


def test_check_run_folder_refuses_what_open_run_folder_would_and_writes_nothing(tmp_path):
    fresh = tmp_path / "fresh"
    check_run_folder(fresh, {"a": 1})
    assert not fresh.exists()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ForeignFileError, match="not a run folder of fdbench"):
        check_run_folder(foreign, {"a": 1})
    run = open_run_folder(tmp_path / "run", {"a": 1})
    check_run_folder(run, {"a": 1})
    with pytest.raises(ValueError, match="another configuration"):
        check_run_folder(run, {"a": 2})
    assert json.loads((run / CONFIG_FILE).read_text()) == {"a": 1}
