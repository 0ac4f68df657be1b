"""The search's mode ``ood`` in a whole ``fdbench benchmark`` run: selected from the config, the
validation OOD split read by the search and by no evaluation, no test split read by the search
(an instrumented reader), and a ``val_ood`` that is no study refused before training."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fdbench.analysis.scoring_methods import ensemble_method
from fdbench.csf.posthoc import posthoc_scores
from fdbench.csf.posthoc import search as search_module
from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind
from fdbench.jobs.benchmark import check_validation_ood
from fdbench.jobs.plan import parse_config

VAL_OOD = "new_class/noise"
CONFIG = {
    "name": "tiny-posthoc-ood",
    "data": {
        "builder": "fashion_mnist_experiments",
        "args": {"seed": 0, "tiny": True},
        "experiments": ["fashion_mnist"],
    },
    "architecture": {"name": "convnet", "options": {"width": 4, "feature_dim": 16}},
    "training": {"epochs": 1, "batch_size": 128, "threads": 1, "augment": False},
    "inference": {"mc_samples": 0, "batch_size": 256, "max_train_samples": 300},
    "methods": [{"name": "ce", "kind": "ce", "seeds": [0, 1]}],
    "ensembles": ["ce"],
    "posthoc": {"mode": "ood", "val_ood": [VAL_OOD], "scores": ["GEN", "ReAct", "Relation"]},
    "analysis": {"n_bootstrap": 0, "report_studies": ["iid", "new_class/*", "corruption/5"]},
}


@pytest.mark.slow
def test_mode_ood_in_a_benchmark_run(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("lightning")
    from fdbench.jobs.benchmark import run_benchmark

    from .test_posthoc_search import RecordingSplits

    read: list[set[str]] = []
    search = search_module.search_posthoc

    def recording_search(inputs, name, **kwargs):
        splits = inputs.run.splits
        inputs.run.splits = RecordingSplits(splits)
        try:
            return search(inputs, name, **kwargs)
        finally:
            read.append(inputs.run.splits.read)
            inputs.run.splits = splits

    monkeypatch.setattr(search_module, "search_posthoc", recording_search)
    results = run_benchmark(parse_config(CONFIG), tmp_path / "run", report=False)
    # every search of both seeds read val and the validation OOD split, and no test split
    assert len(read) == 2 * 3
    assert all(r <= {"train", "val", VAL_OOD} and {"val", VAL_OOD} <= r for r in read)
    # the validation OOD split is no study of any evaluation (the seeds' nor the ensemble's)
    assert VAL_OOD not in set(results["study"])
    assert {"iid", "new_class/semantic", "new_class/mnist"} <= set(results["study"])
    ensemble = results[results["method"] == ensemble_method("ce")]
    assert len(ensemble) and "iid" in set(ensemble["study"])
    posthoc = results[results["csf"].isin(["GEN", "ReAct", "Relation"])]
    assert set(posthoc["csf"]) == {"GEN", "ReAct", "Relation"}
    assert set(posthoc["seed"]) == {0, 1}
    relation = posthoc.loc[posthoc["csf"] == "Relation", "csf_params"].unique()
    assert all(set(json.loads(p)) == {"power"} for p in relation)
    hyper = (tmp_path / "run" / "comparison" / "hyperparameters.csv").read_text()
    assert "Relation" in hyper


def _experiment(studies: list[str]) -> Experiment:
    images = np.zeros((2, 4, 4, 1), np.uint8)
    data = ImageDataset("d", images, np.zeros(2, np.int64), ("a",))
    return Experiment(
        "toy",
        ("a",),
        data,
        data,
        tuple(Study(s, StudyKind.IID, images, np.zeros(2, np.int64)) for s in studies),
    )


def test_a_validation_ood_split_that_is_no_study_is_refused():
    check_validation_ood(["new_class/noise"], _experiment(["iid", "new_class/noise"]))
    with pytest.raises(ValueError, match=r"no study of experiment 'toy'.*data\.experiments"):
        check_validation_ood(["new_class/noise"], _experiment(["iid", "subclass"]))


def test_the_planner_refuses_it_before_any_training(tmp_path):
    from fdbench.jobs.benchmark import plan_benchmark

    config = parse_config({**CONFIG, "data": {**CONFIG["data"], "experiments": None}})
    experiments = [_experiment(["iid", VAL_OOD]), _experiment(["iid", "subclass"])]
    with pytest.raises(ValueError, match="val_ood"):
        plan_benchmark(config, experiments, tmp_path)
    assert not (tmp_path / "runs").exists()
    assert posthoc_scores()  # the scores the config names are registered
