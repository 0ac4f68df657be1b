"""End-to-end tests of ``fdbench benchmark`` on a tiny real-data configuration."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")
pytest.importorskip("lightning")

from fdbench.analysis.selection import best_configs
from fdbench.jobs.benchmark import run_benchmark, select_candidates
from fdbench.jobs.plan import SCORES_FILE, load_scores, parse_config
from fdbench.report.tables import report_table

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
        "report_studies": ["iid", "subclass", "new_class/*", "corruption/5"],
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
    pooled = {f"corruption/{s}" for s in range(1, 6)}
    assert pooled <= studies
    assert sum(s.startswith("corruption/") for s in studies) == 75 + 5
    unknown = results[results["protocol"] == "unknown_detection"]
    # the new-class studies and Kim et al.'s pooled study of all of them
    assert set(unknown["study"]) == {s for s in studies if s.startswith("new_class/")} | {"unknown"}
    assert {"auroc_out", "fpr@95tpr_out"} <= set(unknown["metric"])
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
        "run_times.csv",
    ):
        assert (run_dir / name).exists(), name
    run_times = pd.read_csv(run_dir / "run_times.csv")
    trained = results[["dataset", "method", "seed"]].drop_duplicates()
    trained = trained[~trained["method"].str.startswith("ensemble")]
    assert len(run_times) == len(trained)
    assert (run_times[["train_s", "inference_s"]] > 0).all().all()


def test_new_class_failure_detection_drops_inlier_errors(sequential):
    _, results = sequential
    rows = results[(results["study"] == "new_class/semantic") & (results["metric"] == "accuracy")]
    by_protocol = rows.groupby("protocol")["n_samples"].first()
    assert by_protocol["failure_detection"] < by_protocol["unknown_detection"]


def test_pooled_corruption_studies_hold_every_type_of_their_severity(sequential):
    run_dir, results = sequential
    fd = results[results["protocol"] == "failure_detection"]
    per_type = fd[fd["study"].str.match(r"^corruption/[a-z_]+/\d$")]
    for severity in range(1, 6):
        members = per_type[per_type["study"].str.endswith(f"/{severity}")]
        assert members["study"].nunique() == 15
        expected = members.groupby(["method", "seed", "csf", "metric"])["n_samples"].sum()
        pooled = fd[fd["study"] == f"corruption/{severity}"]
        got = pooled.groupby(["method", "seed", "csf", "metric"])["n_samples"].first()
        # every (method, seed, CSF, metric) of the per-type studies has its pooled row
        pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)
    folder = run_dir / "evaluation" / "fashion_mnist" / "ce_dropout" / "seed0"
    scores = {(e.study, e.source): e for e in load_scores(folder / SCORES_FILE)}
    for source in ("logits", "mcd"):
        pooled = scores["corruption/5", source]
        names = [name for name, _ in pooled.parts]
        assert names[:2] == ["corruption/gaussian_noise/5", "corruption/shot_noise/5"]
        assert len(names) == 15
        members = [scores[name, source] for name in names]
        np.testing.assert_array_equal(
            pooled.residuals, np.concatenate([m.residuals for m in members])
        )
        for csf, conf in pooled.confidences.items():
            np.testing.assert_array_equal(
                conf, np.concatenate([m.confidences[csf] for m in members])
            )


def test_report_table_shows_pooled_corruptions_and_their_mean(sequential):
    _, results = sequential
    table = report_table(results)
    corruption = set(table.loc[table["study"].str.startswith("corruption"), "study"])
    assert corruption == {f"corruption/{s}" for s in range(1, 6)}
    assert (table["protocol"] == "failure_detection").all()
    keys = ["dataset", "method", "seed", "csf", "metric"]
    levels = table[table["study"].isin(corruption)].groupby(keys)["value"].mean()
    cor = table[table["study"] == "cor"].set_index(keys)["value"]
    pd.testing.assert_series_equal(cor.sort_index(), levels.sort_index(), check_names=False)


def test_run_folder_records_its_provenance(config, sequential):
    from fdbench.core.io import sha256_file, verify_file

    run_dir, results = sequential
    record = json.loads(verify_file(run_dir / "provenance.json").read_text())
    assert record["schema"] == 1
    assert record["fdbench"]["version"] and record["fdbench"]["commit"]
    assert record["config"] == config.model_dump(mode="json")
    names = [Path(f["path"]).name for f in record["data_files"]]
    assert "train_images.npy" in names and "test_labels.npy" in names
    for entry in record["data_files"]:
        assert entry["sha256"] == sha256_file(entry["path"])
    prints = record["split_fingerprints"]
    assert set(prints) == set(results["dataset"])
    for splits in prints.values():
        assert {"train", "val", "iid"} <= set(splits)
        assert splits["train"] != splits["val"] != splits["iid"]
    # every row carries the fingerprint of its study's splits; one per (dataset, study, seed)
    rows = results[results["study"] == "iid"]
    assert rows["split_fingerprint"].notna().all()
    assert (rows.groupby("dataset")["split_fingerprint"].nunique() == 1).all()
    assert results.groupby(["dataset", "study"])["split_fingerprint"].nunique().max() == 1


def test_unchanged_rerun_skips_the_analysis_and_keeps_the_times(config, sequential, monkeypatch):
    import fdbench.jobs.benchmark as benchmark
    from fdbench.training.experiments import build_experiments

    run_dir, expected = sequential
    times = (run_dir / "times.json").read_bytes()
    page = (run_dir / "report.html").stat().st_mtime_ns

    def no_analysis(*args, **kwargs):
        raise AssertionError("the analysis ran again on unchanged inputs")

    monkeypatch.setattr(benchmark, "_analyse", no_analysis)
    stages = []
    results = run_benchmark(config, run_dir, progress=lambda *call: stages.append(call))
    assert ("analysis", 1, 1) in stages
    pd.testing.assert_frame_equal(_sorted(results), _sorted(expected))
    assert (run_dir / "times.json").read_bytes() == times
    assert (run_dir / "report.html").stat().st_mtime_ns == page
    # any changed input changes the key of the analysis
    plan = benchmark.plan_benchmark(config, build_experiments(config), run_dir)
    key = benchmark.analysis_key(config, plan, True)
    other = config.model_copy(
        update={"analysis": config.analysis.model_copy(update={"n_bootstrap": 21})}
    )
    assert benchmark.analysis_key(other, plan, True) != key
    assert benchmark.analysis_key(config, plan, False) != key
    record = plan.evaluation[0].output.with_name("results.parquet.sha256")
    monkeypatch.setattr(Path, "read_bytes", lambda self: b"x" if self == record else times)
    assert benchmark.analysis_key(config, plan, True) != key


def test_stage_times_keep_the_stages_that_did_no_work(tmp_path):
    from fdbench.jobs.run_folder import write_times

    path = tmp_path / "times.json"
    write_times(
        {"build_studies_s": 1.0, "training_s": 50.0, "analysis_report_s": 9.0},
        tmp_path,
        worked={"training_s", "analysis_report_s"},
    )
    write_times(
        {"build_studies_s": 2.0, "training_s": 0.1, "analysis_report_s": 0.2},
        tmp_path,
        worked=set(),
    )
    assert json.loads(path.read_text())["training_s"] == 50.0
    write_times(
        {"build_studies_s": 3.0, "training_s": 0.1, "analysis_report_s": 7.0},
        tmp_path,
        worked={"analysis_report_s"},
    )
    stages = {k: v for k, v in json.loads(path.read_text()).items() if k.endswith("_s")}
    assert stages == {
        "build_studies_s": 3.0,
        "training_s": 50.0,
        "analysis_report_s": 7.0,
        "total_s": pytest.approx(60.0 + 10.1),  # the first and the third call
    }
    write_times({"build_studies_s": 4.0}, tmp_path)  # without ``worked``: every time
    record = json.loads(path.read_text())
    assert record["build_studies_s"] == 4.0 and "training_s" not in record


def test_stage_times_accumulate_over_resumed_invocations(tmp_path):
    """times.json keeps every invocation that did work (a later write of the same invocation
    replaces its entry) and their total wall time; a no-op invocation adds nothing."""
    from fdbench.jobs.run_folder import write_times

    path = tmp_path / "times.json"
    first = {"build_studies_s": 1.0, "training_s": 30.0, "evaluation_s": 0.0}
    write_times(first, tmp_path, worked={"training_s"}, started="t1")  # interrupted
    second = {"build_studies_s": 2.0, "training_s": 20.0, "evaluation_s": 5.0}
    write_times(second, tmp_path, worked={"training_s", "evaluation_s"}, started="t2")
    # the same invocation writes again when its analysis ends: its entry is replaced
    done = {**second, "analysis_report_s": 4.0}
    write_times(done, tmp_path, worked={"evaluation_s", "analysis_report_s"}, started="t2")
    write_times({**done, "training_s": 0.1}, tmp_path, worked=set(), started="t3")  # no-op
    record = json.loads(path.read_text())
    assert record["invocations"] == [{"started": "t1", **first}, {"started": "t2", **done}]
    assert record["total_s"] == 31.0 + 31.0
    assert record["training_s"] == 20.0 and record["analysis_report_s"] == 4.0


def test_stage_times_of_a_file_from_before_the_invocation_list_count_once(tmp_path):
    from fdbench.core.io import atomic_path
    from fdbench.jobs.run_folder import write_times

    with atomic_path(tmp_path / "times.json") as tmp:  # as fdbench wrote it before the list
        tmp.write_text(json.dumps({"training_s": 10.0, "evaluation_s": 2.0}))
    write_times({"training_s": 0.5, "evaluation_s": 3.0}, tmp_path, worked={"evaluation_s"})
    record = json.loads((tmp_path / "times.json").read_text())
    assert record["invocations"][0] == {"started": None, "training_s": 10.0, "evaluation_s": 2.0}
    assert record["total_s"] == 15.5


def test_ensemble_of_members_on_different_splits_is_refused():
    from fdbench.jobs.benchmark import _shared_fingerprints

    same = {"iid": "a", "train": "b"}
    assert _shared_fingerprints("ens", [same, dict(same)]) == same
    with pytest.raises(ValueError, match=r"ens: .*split 'iid'.*refusing to merge"):
        _shared_fingerprints("ens", [same, {"iid": "c", "train": "b"}])


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


def test_worker_count_is_not_part_of_the_pinned_config(config, sequential, tmp_path):
    import shutil

    # on a copy: an analysis without the report removes the report inputs of the earlier one,
    # which the later tests of this module read from the shared run folder
    run_dir, expected = sequential
    shutil.copytree(run_dir, tmp_path / "run")
    run_dir = tmp_path / "run"
    results = run_benchmark(config.model_copy(update={"workers": 3}), run_dir, report=False)
    pd.testing.assert_frame_equal(_sorted(results), _sorted(expected))
    with pytest.raises(ValueError, match="workers"):
        run_benchmark(config, run_dir, workers=-1, report=False)


def test_other_config_in_same_folder_is_refused(config, sequential):
    run_dir, _ = sequential
    other = parse_config({**TINY, "training": {**TINY["training"], "epochs": 2}}, source="x")
    with pytest.raises(ValueError, match="another configuration"):
        run_benchmark(other, run_dir)


def _rows(method, seed, candidate, csf, study, value, metric="augrc"):
    return {
        "dataset": "d",
        "method": method,
        "seed": seed,
        "candidate": candidate,
        "csf": csf,
        "study": study,
        "metric": metric,
        "value": value,
        "protocol": "failure_detection",
    }


def test_select_candidates_picks_per_csf_by_mean_over_seeds():
    # MSR: candidate 0 has val AUGRC means 0.15 (seeds 0.1, 0.2), candidate 1 has 0.2: 0 wins,
    # although candidate 1 is better on seed 0. MCD-MSR exists on candidate 1 only: it wins
    # there even though candidate 0's MSR is better. One-candidate method "plain" passes through.
    rows = [
        _rows("ce", 0, 0, "MSR", "val", 0.1),
        _rows("ce", 1, 0, "MSR", "val", 0.2),
        _rows("ce", 0, 1, "MSR", "val", 0.05),
        _rows("ce", 1, 1, "MSR", "val", 0.35),
        _rows("ce", 0, 1, "MCD-MSR", "val", 0.9),
        _rows("ce", 1, 1, "MCD-MSR", "val", 0.9),
    ]
    for seed in (0, 1):
        for candidate in (0, 1):
            rows.append(_rows("ce", seed, candidate, "MSR", "iid", 10 * candidate + seed))
        rows.append(_rows("ce", seed, 1, "MCD-MSR", "iid", 100 + seed))
    rows.append(_rows("plain", 0, 0, "MSR", "iid", 7.0))
    table = pd.DataFrame(rows)
    selected = select_candidates(table, "augrc")
    assert not (selected["study"] == "val").any()
    got = {(r.method, r.csf, r.seed): (r.candidate, r.value) for r in selected.itertuples()}
    assert got == {
        ("ce", "MSR", 0): (0, 0.0),
        ("ce", "MSR", 1): (0, 1.0),
        ("ce", "MCD-MSR", 0): (1, 100.0),
        ("ce", "MCD-MSR", 1): (1, 101.0),
        ("plain", "MSR", 0): (0, 7.0),
    }
    # by a metric where higher is better the other MSR candidate wins
    flipped = table.assign(metric="auroc_f")
    chosen = select_candidates(flipped, "auroc_f")
    assert set(chosen.loc[chosen["method"] == "ce", "candidate"]) == {1}
    with pytest.raises(ValueError, match="aurc"):
        select_candidates(table, "aurc")


def test_select_candidates_keeps_a_table_without_val_rows_as_it_is():
    table = pd.DataFrame([_rows("plain", 0, 0, "MSR", "iid", 7.0)])
    assert select_candidates(table, "augrc") is table


GRID = {
    **TINY,
    "name": "tiny-grid",
    "methods": [
        {
            "name": "ce",
            "kind": "ce",
            "seeds": [0, 1],
            "grid": {"dropout": [False, True]},
        },
        {
            "name": "dg",
            "kind": "deepgamblers",
            "seeds": [0],
            "params": {"dropout": True, "pretrain_epochs": 0},
            "grid": {"reward": [1.5, 2.5]},
        },
        {
            "name": "confidnet",
            "kind": "confidnet",
            "seeds": [0],
            "params": {"base": "ce", "epochs": 1, "hidden": 16, "depth": 2},
        },
    ],
    "ensembles": ["ce"],
    "analysis": {"n_bootstrap": 5, "report_studies": ["iid"]},
}


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    config = parse_config(GRID, source="grid")
    run_dir = tmp_path_factory.mktemp("grid")
    return config, run_dir, run_benchmark(config, run_dir)


def _val_rows(run_dir):
    paths = sorted((run_dir / "evaluation").glob("**/candidate*/results.parquet"))
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def test_grid_csfs_select_their_own_candidate(grid):
    config, run_dir, results = grid
    table = _val_rows(run_dir)
    assert set(table.loc[table["study"] == "val", "method"]) == {"ce", "dg", "ensemble(ce)"}
    chosen = best_configs(table, config.selection.metric, config_columns=["candidate"])
    keys = ["dataset", "method", "csf"]
    expected = chosen.set_index(keys)["candidate"].astype(int).sort_index()
    in_grid = results[results["method"].isin(["ce", "dg", "ensemble(ce)"])]
    got = in_grid.groupby(keys)["candidate"].unique()
    assert all(len(c) == 1 for c in got)
    assert got.map(lambda c: int(c[0])).sort_index().equals(expected)
    assert not (results["study"] == "val").any()
    # CSFs of one method choose different candidates: MSR the model without dropout, MCD-MSR
    # (which cannot take it) the one with dropout
    assert expected.loc[("fashion_mnist", "ce", "MSR")] == 0
    assert expected.loc[("fashion_mnist", "ce", "MCD-MSR")] == 1


def test_mcd_rows_come_only_from_dropout_candidates(grid):
    _, _, results = grid
    ce = results[results["method"].isin(["ce", "ensemble(ce)"])]
    mcd = ce[ce["csf"].str.startswith("MCD-")]
    assert not mcd.empty
    assert set(mcd["candidate"]) == {1}
    assert all(json.loads(p)["dropout"] for p in mcd["params"])
    no_dropout = ce[ce["candidate"] == 0]
    assert not no_dropout["csf"].str.startswith("MCD-").any()
    assert all(not json.loads(p)["dropout"] for p in no_dropout["params"])


def test_grid_records_candidate_params_and_layout(grid):
    _, run_dir, results = grid
    for _, row in results.drop_duplicates(["method", "candidate"]).iterrows():
        params = json.loads(row["params"])
        if row["method"] == "dg":
            assert params["reward"] == [1.5, 2.5][row["candidate"]]
        if row["method"] == "confidnet":
            assert row["candidate"] == 0 and params["base"] == "ce"
    runs = run_dir / "runs" / "fashion_mnist"
    assert (runs / "ce" / "seed0" / "candidates" / "1" / "outputs.zarr").exists()
    assert not (runs / "ce" / "seed0" / "outputs.zarr").exists()
    assert (runs / "confidnet" / "seed0" / "outputs.zarr").exists()
    assert (run_dir / "bootstrap.parquet").exists()


def test_deepgamblers_csfs_can_select_different_rewards(grid):
    _, run_dir, results = grid
    table = _val_rows(run_dir)
    dg = table[(table["method"] == "dg") & (table["study"] == "val")]
    chosen = best_configs(dg, "augrc", config_columns=["candidate"])
    chosen = chosen.set_index(["dataset", "csf"])["candidate"]
    picked = results[results["method"] == "dg"].groupby(["dataset", "csf"])["candidate"].first()
    assert picked.to_dict() == chosen.to_dict()
    # on fashion_mnist DG-Res keeps reward 1.5 and PE (DG-PE) reward 2.5
    assert picked[("fashion_mnist", "DG-Res")] == 0
    assert picked[("fashion_mnist", "PE")] == 1


def test_cor_is_the_mean_over_the_pooled_levels_not_over_the_types():
    rows = []
    for severity, pooled_value in ((1, 0.1), (2, 0.4)):
        rows.append((f"corruption/{severity}", pooled_value, 40))
        rows += [(f"corruption/{t}/{severity}", v, 20) for t, v in (("a", 0.9), ("b", 0.8))]
    rows.append(("iid", 0.05, 100))
    results = pd.DataFrame(
        [
            {
                "dataset": "d",
                "method": "ce",
                "seed": 0,
                "csf": "MSR",
                "study": study,
                "metric": "aurc",
                "value": value,
                "n_samples": n,
                "protocol": protocol,
            }
            for study, value, n in rows
            for protocol in ("failure_detection", "unknown_detection")
        ]
    )
    table = report_table(results).set_index("study")
    assert list(table.index) == ["corruption/1", "corruption/2", "iid", "cor"]
    assert table.loc["cor", "value"] == pytest.approx((0.1 + 0.4) / 2, abs=1e-15)
    assert table.loc["cor", "n_samples"] == 80
    assert table.loc["iid", "value"] == 0.05


def _brute_force_ranks(run_dir, dataset, study, kinds, n_resamples, seed):
    """Mean bootstrap AUGRC rank of every scoring method on ``study``, computed from the
    stored scores without the leaderboard code: the unfiltered set is the whole iid split
    (its residuals and confidences from the iid scores) followed by the new-class samples;
    every resample draws it once, then each classifier keeps its correct inliers."""
    from scipy import stats

    from fdbench import metrics as M
    from fdbench.analysis.scoring_methods import scoring_method_name

    values: dict[str, list[np.ndarray]] = {}
    for path in sorted((run_dir / "evaluation" / dataset).rglob(SCORES_FILE)):
        head = pd.read_parquet(path.parent / "results.parquet").iloc[0]
        entries = load_scores(path)
        for iid in (e for e in entries if e.study == "iid"):
            residuals, kept = iid.residuals, np.ones(iid.residuals.size, bool)
            confidences = dict(iid.confidences)
            if study != "iid":
                (other,) = [e for e in entries if e.study == study and e.source == iid.source]
                n_new = other.parts[-1][1].size
                residuals = np.r_[iid.residuals, np.ones(n_new)]
                kept = np.r_[iid.residuals == 0, np.ones(n_new, bool)]
                for csf, conf in confidences.items():
                    filtered = other.confidences[csf]
                    np.testing.assert_array_equal(filtered[:-n_new], conf[iid.residuals == 0])
                    confidences[csf] = np.r_[conf, filtered[-n_new:]]
            counts = M.bootstrap_counts(residuals.size, n_resamples, seed)
            for csf, conf in confidences.items():
                per_resample = []
                for b in range(n_resamples):
                    drawn = np.repeat(np.arange(residuals.size), counts[b])
                    drawn = drawn[kept[drawn]]
                    per_resample.append(M.augrc(residuals[drawn], conf[drawn]))
                name = scoring_method_name(str(head["method"]), csf, kinds)
                values.setdefault(name, []).append(np.array(per_resample))
    names = sorted(values)
    means = np.array([np.mean(values[n], axis=0) for n in names])
    ranks = stats.rankdata(means, axis=0).mean(axis=1)
    return dict(zip(names, ranks, strict=True))


def test_leaderboard_lists_every_pair_and_its_augrc_ranks_match_brute_force(config, sequential):
    from fdbench.analysis.scoring_methods import add_scoring_method

    run_dir, results = sequential
    kinds = {m.name: m.kind for m in config.methods}
    board = pd.read_csv(run_dir / "leaderboard.csv")
    ranks = pd.read_csv(run_dir / "leaderboard_ranks.csv")
    fd = results[(results["protocol"] == "failure_detection") & (results["study"] != "val")]
    for dataset, part in fd.groupby("dataset"):
        pairs = add_scoring_method(part[["method", "csf"]].drop_duplicates(), kinds)
        assert pairs["scoring_method"].is_unique
        assert set(board.loc[board["dataset"] == dataset, "scoring_method"]) == set(
            pairs["scoring_method"]
        )
        assert set(ranks.loc[ranks["dataset"] == dataset, "scoring_method"]) == set(
            pairs["scoring_method"]
        )
    dataset = "fashion_mnist"
    n_resamples, seed = config.analysis.n_bootstrap, config.analysis.bootstrap_seed
    for study, column in (("iid", "iid"), ("new_class/semantic", "new-class semantic")):
        expected = _brute_force_ranks(run_dir, dataset, study, kinds, n_resamples, seed)
        mine = ranks[(ranks["dataset"] == dataset) & (ranks["metric"] == "augrc")]
        got = mine[mine["study"] == column].set_index("scoring_method")["mean_rank"]
        assert set(got.index) == set(expected)
        for name, rank in expected.items():
            assert got[name] == pytest.approx(rank, abs=1e-9), (study, name)


def test_gallery_shows_true_and_predicted_class(sequential):
    from fdbench.report import OVERCONFIDENT_FAILURE, Gallery

    run_dir, _ = sequential
    gallery = Gallery.load(run_dir / "gallery.npz")
    assert gallery.label is not None and len(gallery)
    failure = gallery.kind == OVERCONFIDENT_FAILURE
    new = gallery.label == "new class"
    # a new-class sample is always a failure; an inlier fails where the classes differ
    assert failure[new].all()
    inlier = ~new
    assert (gallery.label[inlier] != gallery.prediction[inlier])[failure[inlier]].all()
    assert (gallery.label[inlier] == gallery.prediction[inlier])[~failure[inlier]].all()
    assert "new class" not in set(gallery.prediction)
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert f"true {gallery.label[0]}<br>pred {gallery.prediction[0]}<br>" in page


def test_a_fresh_page_shows_the_wall_time_of_its_run(sequential):
    """times.json is written before report.html, so the first page already has it."""
    run_dir, _ = sequential
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "<dt>wall time</dt>" in page and "analysis_report" in page


def test_files_the_step_did_not_write_again_are_removed(tmp_path):
    from fdbench.core.io import checksum_path, write_table, write_text
    from fdbench.jobs.benchmark import analysis_files, file_identities, remove_unwritten

    table = pd.DataFrame({"a": [1, 2]})
    for name in ("results.parquet", "leaderboard.csv", "bootstrap.parquet"):
        write_table(table, tmp_path / name)
    write_text(tmp_path / "config.json", "{}")
    earlier = file_identities(tmp_path, analysis_files(tmp_path))
    assert set(earlier) == {"results.parquet", "leaderboard.csv", "bootstrap.parquet"}
    write_table(table, tmp_path / "results.parquet")  # the same content, written again
    write_table(table, tmp_path / "curves.parquet")  # new
    assert remove_unwritten(tmp_path, earlier) == ["bootstrap.parquet", "leaderboard.csv"]
    assert analysis_files(tmp_path) == ["curves.parquet", "results.parquet"]
    assert not checksum_path(tmp_path / "leaderboard.csv").exists()
    assert (tmp_path / "config.json").is_file()
    assert remove_unwritten(tmp_path, file_identities(tmp_path, ["results.parquet"])) == [
        "results.parquet"
    ]


def test_an_analysis_of_other_settings_leaves_no_stale_files(config, sequential, tmp_path):
    """Resumed with ``n_bootstrap: 0``, the analysis writes no bootstrap or leaderboard tables;
    those of the earlier analysis are removed instead of being sealed with the new results."""
    import shutil

    from fdbench.jobs.benchmark import analysis_files
    from fdbench.report import read_run_inputs

    run_dir, _ = sequential
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    before = set(analysis_files(copy))
    assert {"bootstrap.parquet", "leaderboard.csv", "leaderboard_ranks.csv"} <= before
    other = config.model_copy(
        update={"analysis": config.analysis.model_copy(update={"n_bootstrap": 0})}
    )
    run_benchmark(other, copy)
    after = set(analysis_files(copy))
    assert not after & {"bootstrap.parquet", "leaderboard.csv", "leaderboard_ranks.csv"}
    assert {"results.parquet", "results.csv", "curves.parquet"} <= after < before
    assert read_run_inputs(copy).bootstrap is None


def test_the_analysis_files_are_read_only_together(sequential, tmp_path):
    """#34 principle 4: a run's analysis files (results, bootstrap, curves, leaderboard, ...)
    are sealed as one unit once the analysis is complete. ``fdbench report`` re-renders the page
    and still reads them; a bootstrap table of another analysis (one interrupted half-way
    after its inputs changed) beside these results is refused, never rendered."""
    import os
    import shutil
    import subprocess
    import sys

    from fdbench.core.io import IntegrityError, read_table, write_table
    from fdbench.jobs.benchmark import analysis_files
    from fdbench.report import read_run_inputs

    run_dir, _ = sequential
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    names = set(analysis_files(copy))
    assert {"results.parquet", "results.csv", "bootstrap.parquet", "curves.parquet"} <= names
    assert not names & {"report.html", "analysis.json", "config.json", "times.json"}
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "fdbench", "report", str(copy)],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert read_run_inputs(copy).bootstrap is not None
    bootstrap = read_table(copy / "bootstrap.parquet")
    write_table(bootstrap.iloc[:-1], copy / "bootstrap.parquet")
    with pytest.raises(IntegrityError, match="not from the same write"):
        read_run_inputs(copy)
