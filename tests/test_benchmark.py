"""End-to-end tests of ``fdbench benchmark`` on a tiny real-data configuration."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("torch")
pytest.importorskip("lightning")

from fdbench.benchmark import report_table, run_benchmark
from fdbench.config import parse_config

TINY = {
    "name": "tiny",
    "data": {"builder": "fashion_mnist_experiments", "args": {"seed": 0, "tiny": True}},
    "architecture": {"name": "convnet", "dropout": 0.3, "options": {"width": 8, "feature_dim": 16}},
    "training": {"epochs": 1, "batch_size": 128, "threads": 1, "augment": False},
    "inference": {"mc_samples": 3, "batch_size": 256, "max_train_samples": 300},
    "methods": [
        {"name": "ce_dropout", "kind": "ce", "seeds": [0, 1], "params": {"dropout": True}},
        {
            "name": "deepgamblers",
            "kind": "deepgamblers",
            "seeds": [0],
            "params": {"dropout": True, "pretrain_epochs": 0},
        },
        {
            "name": "confidnet",
            "kind": "confidnet",
            "seeds": [0],
            "params": {"base": "ce_dropout", "epochs": 1, "hidden": 16, "depth": 2},
        },
        {"name": "devries", "kind": "devries", "seeds": [0], "params": {"dropout": True}},
    ],
    "ensembles": ["ce_dropout"],
    "analysis": {
        "n_bootstrap": 20,
        "report_studies": ["iid", "subclass", "new_class/*", "corruption/fog/5"],
    },
}


class Interrupt(Exception):
    pass


@pytest.fixture(scope="module")
def config():
    return parse_config(TINY, source="tiny")


@pytest.fixture(scope="module")
def sequential(config, tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("sequential")
    return run_dir, run_benchmark(config, run_dir)


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    keys = ["protocol", "dataset", "method", "seed", "csf", "study", "metric"]
    return table.sort_values(keys).reset_index(drop=True)


def test_results_cover_methods_csfs_and_studies(sequential):
    run_dir, results = sequential
    assert {"ce_dropout", "deepgamblers", "confidnet", "devries", "ensemble(ce_dropout)"} <= set(
        results["method"]
    )
    csfs = set(results["csf"])
    for name in (
        "MSR",
        "MLS",
        "PE",
        "energy",
        "TEMP-MLS",
        "DOCTOR",
        "MCD-MSR",
        "MCD-PE",
        "MCD-EE",
        "MCD-MI",
        "DG-Res",
        "ConfidNet",
        "DeVries",
        "Mahalanobis",
        "DKNN",
        "ENS-MSR",
        "ENS-MI",
    ):
        assert name in csfs, name
    studies = set(results["study"])
    assert {"iid", "subclass", "new_class/semantic", "new_class/mnist"} <= studies
    assert sum(s.startswith("corruption/") for s in studies) == 75
    unknown = results[results["protocol"] == "unknown_detection"]
    assert set(unknown["study"]) == {s for s in studies if s.startswith("new_class/")}
    for name in (
        "results.parquet",
        "results.csv",
        "report.html",
        "bootstrap.parquet",
        "curves.parquet",
        "reliability.parquet",
        "sgr.csv",
        "gallery.npz",
        "rounding.csv",
        "times.json",
    ):
        assert (run_dir / name).exists(), name


def test_new_class_failure_detection_drops_inlier_errors(sequential):
    _, results = sequential
    rows = results[(results["study"] == "new_class/semantic") & (results["metric"] == "accuracy")]
    by_protocol = rows.groupby("protocol")["n_samples"].first()
    assert by_protocol["failure_detection"] < by_protocol["unknown_detection"]


def test_report_table_condenses_corruptions(sequential):
    _, results = sequential
    table = report_table(results)
    assert not table["study"].str.match(r"corruption/[a-z_]+/\d").any() or set(
        table.loc[table["study"].str.startswith("corruption/"), "study"]
    ) == {f"corruption/mean/{s}" for s in range(1, 6)}
    assert (table["protocol"] == "failure_detection").all()


def test_same_config_gives_identical_table_after_interruption(config, sequential, tmp_path):
    _, expected = sequential
    calls = []

    def stop_after_first_job(stage, done, total):
        calls.append((stage, done, total))
        if stage == "training" and done == 2:
            raise Interrupt

    with pytest.raises(Interrupt):
        run_benchmark(config, tmp_path, progress=stop_after_first_job, report=False)
    resumed = []
    results = run_benchmark(
        config, tmp_path, report=False, progress=lambda s, d, t: resumed.append((s, d, t))
    )
    total = calls[-1][2]
    assert total > 2
    first_training = next(call for call in resumed if call[0] == "training")
    assert first_training == ("training", 2, total)
    pd.testing.assert_frame_equal(_sorted(results), _sorted(expected))


def test_dask_workers_give_the_same_table(config, sequential, tmp_path):
    _, expected = sequential
    with_workers = config.model_copy(update={"workers": 2})
    results = run_benchmark(with_workers, tmp_path, report=False)
    pd.testing.assert_frame_equal(_sorted(results), _sorted(expected))


def test_worker_count_is_not_part_of_the_pinned_config(config, sequential):
    run_dir, expected = sequential
    results = run_benchmark(config.model_copy(update={"workers": 3}), run_dir, report=False)
    pd.testing.assert_frame_equal(_sorted(results), _sorted(expected))
    with pytest.raises(ValueError, match="workers"):
        run_benchmark(config, run_dir, workers=-1, report=False)


def test_other_config_in_same_folder_is_refused(config, sequential):
    run_dir, _ = sequential
    other = parse_config({**TINY, "training": {**TINY["training"], "epochs": 2}}, source="x")
    with pytest.raises(ValueError, match="another configuration"):
        run_benchmark(other, run_dir)
