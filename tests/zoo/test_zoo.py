"""The zoo job: member reading, SAC, TS on validation only, C-OOD from saved outputs, CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.csf.softmax import msr
from fdbench.csf.temperature import fit_temperature
from fdbench.data.shifts.cood import cood_estimation_split, cood_group_size, cood_severity_levels
from fdbench.zoo import discover_members, evaluate_member, iter_blocks, parse_zoo_config, sac
from fdbench.zoo.members import declared_val_mask
from fdbench.zoo.synthetic import make_synthetic_zoo
from tests._cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
FAST = {"pnorm": {"t_count": 5}, "n_bootstrap": 50}


def _config(folder: Path, **overrides) -> object:
    return parse_zoo_config({"name": "t", "zoo": str(folder), **FAST, **overrides})


def test_sac_exactly_reachable_unreachable_and_ties():
    # 19 correct above 1 failure: selective accuracy 19/20 = 0.95 at full coverage, exactly
    residuals = np.array([0.0] * 19 + [1.0])
    confidence = np.linspace(1.0, 0.0, 20)
    assert sac(residuals, confidence, 0.95) == 1.0
    # 0.99 is reached only without the failure: coverage 19/20
    assert sac(residuals, confidence, 0.99) == pytest.approx(19 / 20)
    # the most confident sample fails and every larger set stays below 0.95: infeasible
    assert np.isnan(sac(np.array([1.0, 0.0, 0.0]), np.array([0.9, 0.5, 0.1]), 0.95))
    # a tie at the top (one correct, one failure) is accepted or rejected as a whole
    tied = np.array([0.0, 1.0, 0.0, 0.0])
    assert np.isnan(sac(tied, np.array([0.9, 0.9, 0.8, 0.7]), 0.95))
    assert sac(tied, np.array([0.9, 0.8, 0.8, 0.7]), 0.95) == pytest.approx(0.25)
    assert sac(tied, np.array([0.9, 0.9, 0.8, 0.7]), 0.5) == 1.0
    with pytest.raises(ValueError, match="target"):
        sac(tied, tied, 1.0)


def test_iter_blocks_streams_plain_and_compressed_npz(tmp_path):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(103, 7)).astype(np.float32)
    labels = rng.integers(0, 7, 103)
    for save in (np.savez, np.savez_compressed):
        path = tmp_path / f"{save.__name__}.npz"
        save(path, test_logits=logits, test_labels=labels)
        (member,) = [m for m in discover_members(tmp_path) if m.path == path]
        blocks = list(iter_blocks(member, "test", ("logits",), chunk_size=10))
        assert [b["logits"].shape[0] for b in blocks] == [10] * 10 + [3]
        assert all(b["logits"].dtype == np.float64 for b in blocks)
        np.testing.assert_array_equal(np.concatenate([b["logits"] for b in blocks]), logits)


def _member_with_val(folder: Path, test_scale: float) -> Path:
    rng = np.random.default_rng(1)
    k = 5
    val_labels = rng.integers(0, k, 300)
    test_labels = rng.integers(0, k, 400)
    val = rng.normal(size=(300, k)) * 3
    val[np.arange(300), val_labels] += 4
    test = rng.normal(size=(400, k)) * test_scale
    test[np.arange(400), test_labels] += 2
    np.savez(
        folder / "a.npz",
        val_logits=val,
        val_labels=val_labels,
        test_logits=test,
        test_labels=test_labels,
    )
    return folder


def _value(table: pd.DataFrame, csf: str, calibration: str, study: str, metric: str) -> float:
    row = table[
        (table["csf"] == csf)
        & (table["calibration"] == calibration)
        & (table["study"] == study)
        & (table["metric"] == metric)
    ]
    assert len(row) == 1
    return float(row["value"].iloc[0])


def test_temperature_is_fitted_on_validation_only(tmp_path):
    temperatures = []
    for scale in (0.5, 5.0):  # different test logits, same validation split
        folder = tmp_path / f"s{scale}"
        folder.mkdir()
        _member_with_val(folder, scale)
        (member,) = discover_members(folder)
        table, levels = evaluate_member(member, _config(folder))
        assert levels.empty  # no OOD pool: no C-OOD rows
        temperatures.append(_value(table, "", "none", "val", "temperature"))
        with np.load(folder / "a.npz") as data:
            expected_t = fit_temperature(data["val_logits"], data["val_labels"])
            z, y = data["test_logits"], data["test_labels"]
        r = (z.argmax(1) != y).astype(float)
        assert _value(table, "MSR", "ts", "iid", "auroc_f") == pytest.approx(
            M.auroc_f(r, msr(z / expected_t)), abs=1e-12
        )
        assert _value(table, "MSR", "none", "iid", "auroc_f") == pytest.approx(
            M.auroc_f(r, msr(z)), abs=1e-12
        )
    assert temperatures[0] == temperatures[1] == pytest.approx(expected_t, rel=1e-12)


def test_declared_split_keeps_validation_out_of_the_test_metrics(tmp_path):
    make_synthetic_zoo(tmp_path, n_members=1, n_test=300, mcd_members=0)
    (member,) = discover_members(tmp_path)
    config = _config(tmp_path)
    table, _ = evaluate_member(member, config)
    with np.load(member.path) as data:
        z, y = data["test_logits"], data["test_labels"]
    val = declared_val_mask(y, config.val_fraction, config.seed)
    assert _value(table, "", "none", "val", "temperature") == pytest.approx(
        fit_temperature(z[val], y[val]), rel=1e-12
    )
    r = (z[~val].argmax(1) != y[~val]).astype(float)
    assert _value(table, "MSR", "none", "iid", "aurc") == M.aurc(r, msr(z[~val]))
    assert _value(table, "MSR", "none", "iid", "sac@95") == pytest.approx(
        sac(r, msr(z[~val]), 0.95), nan_ok=True
    )
    assert set(table["val_source"]) == {"declared"}


def test_cood_levels_recomputed_from_saved_outputs(tmp_path):
    make_synthetic_zoo(tmp_path, n_members=1, n_test=200, n_ood_classes=30, mcd_members=0)
    (member,) = discover_members(tmp_path)
    config = _config(tmp_path, cood={"n_estimation": 12, "n_test": 4})
    table, levels = evaluate_member(member, config)
    with np.load(member.path) as data:
        z, y = data["test_logits"], data["test_labels"]
        ood, classes = data["ood_logits"], data["ood_classes"]
    val = declared_val_mask(y, config.val_fraction, config.seed)
    est, test = cood_estimation_split(classes, n_estimation=12, n_test=4, seed=config.seed)
    used = est | test
    k = cood_group_size(10, 30)
    found = cood_severity_levels(
        msr(ood)[used], classes[used], k=k, estimation_mask=est[used], test_mask=test[used]
    )
    msr_levels = levels[levels["csf"] == "MSR"].sort_values("level")
    assert [tuple(json.loads(c)) for c in msr_levels["classes"]] == list(found.groups)
    id_conf = msr(z[~val])
    for level, idx in enumerate(found.test_indices):
        conf = np.concatenate([id_conf, msr(ood)[used][idx]])
        is_ood = np.r_[np.zeros(id_conf.size), np.ones(idx.size)]
        p = found.percentiles[level]
        assert _value(table, "MSR", "none", f"cood/{p}", "auroc_cood") == M.auroc_out(is_ood, conf)
    assert (table.loc[table["metric"] == "group_size", "value"] == k).all()


def test_cli_zoo_end_to_end_and_resume(tmp_path):
    zoo = make_synthetic_zoo(tmp_path / "zoo", n_members=4, n_test=200, n_ood_classes=25)
    config = tmp_path / "zoo.yaml"
    config.write_text(
        "name: tiny\nzoo: zoo\npnorm:\n  t_count: 5\nn_bootstrap: 50\n"
        "cood:\n  n_estimation: 12\n  n_test: 4\n"
    )
    out = tmp_path / "run"
    done = run_cli("zoo", str(config), "--out", str(out))
    assert done.returncode == 0, done.stderr
    results = pd.read_parquet(out / "results.parquet")
    assert sorted(results["member"].unique()) == ["m000", "m001", "m002", "m003"]
    for name in ("zoo_report.html", "members.csv", "cood_levels.parquet", "times.json"):
        assert (out / name).is_file()
    assert (out / "tables" / "spearman.csv").is_file()
    assert (out / "figures" / "scatter.png").is_file()
    assert (out / "figures" / "cood_MSR.png").is_file()
    page = (out / "zoo_report.html").read_text()
    body = page[page.index("<main>") :]
    assert body.index("What was run") < body.index("Per member") < body.index("Across the zoo")
    assert str(tmp_path) not in page  # no absolute path in the note
    assert "<th>x</th>" not in page and "<th>y</th>" not in page
    caches = sorted((out / "members").glob("*.results.parquet"))
    stamps = {p: p.stat().st_mtime_ns for p in caches}
    # resume: a new member is evaluated, the others come from their cache files
    make_synthetic_zoo(tmp_path / "extra", n_members=5, n_test=200, n_ood_classes=25)
    os.replace(tmp_path / "extra" / "m004.npz", zoo / "m004.npz")
    done = run_cli("zoo", str(config), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert {p: p.stat().st_mtime_ns for p in caches} == stamps
    again = pd.read_parquet(out / "results.parquet")
    assert again["member"].nunique() == 5
    pd.testing.assert_frame_equal(again[again["member"] != "m004"].reset_index(drop=True), results)
    # another configuration is refused in the same folder
    config.write_text(config.read_text().replace("n_test: 4", "n_test: 3"))
    refused = run_cli("zoo", str(config), "--out", str(out))
    assert refused.returncode == 2
    assert "another configuration" in refused.stderr


def test_outputs_store_member_gives_the_rows_of_the_same_npz_member(tmp_path):
    from fdbench.outputs import RunOutputs, SplitOutputs, write_outputs

    make_synthetic_zoo(tmp_path / "npz", n_members=1, n_test=200, n_val=100, mcd_members=1)
    (member,) = discover_members(tmp_path / "npz")
    with np.load(member.path) as data:
        arrays = {key: data[key] for key in data.files}
    splits = {
        name: SplitOutputs(
            labels=arrays[f"{name}_labels"].astype(np.int64),
            logits=arrays[f"{name}_logits"],
            mcd_logits=arrays[f"{name}_mcd_logits"],
            kind=kind,
        )
        for name, kind in (("test", "iid"), ("val", "val"))
    }
    splits["ood"] = SplitOutputs(
        labels=np.full(arrays["ood_classes"].size, -1, dtype=np.int64),
        logits=arrays["ood_logits"],
        mcd_logits=arrays["ood_mcd_logits"],
        kind="new_class",
    )
    meta = {"ood_classes": arrays["ood_classes"].astype(np.int64)}
    write_outputs(tmp_path / "store" / "m000", RunOutputs(splits=splits, meta=meta))
    (store,) = discover_members(tmp_path / "store")
    assert store.kind == "store"
    config = _config(tmp_path, cood={"n_estimation": 12, "n_test": 4}, chunk_size=64)
    from_npz = evaluate_member(member, config)
    from_store = evaluate_member(store, config)
    pd.testing.assert_frame_equal(from_store[0], from_npz[0])
    pd.testing.assert_frame_equal(from_store[1], from_npz[1])
    assert set(from_npz[0]["val_source"]) == {"val"}
    assert "MCD-PE" in set(from_npz[0]["csf"])


def test_damaged_member_is_one_error_naming_it(tmp_path):
    make_synthetic_zoo(tmp_path, n_members=1, n_test=100, mcd_members=0)
    path = tmp_path / "m000.npz"
    path.write_bytes(path.read_bytes()[:5000])
    (member,) = discover_members(tmp_path)
    with pytest.raises(ValueError, match="m000"):
        evaluate_member(member, _config(tmp_path))


def test_members_without_cood_levels_give_one_warning_and_times_keep_training(tmp_path):
    import warnings

    from fdbench.jobs.zoo import run_zoo

    make_synthetic_zoo(tmp_path / "zoo", n_members=3, n_test=120, n_ood_classes=6, mcd_members=0)
    # every OOD class has fewer than 5,000 + 5,000 samples: App. L.1 removes all of them
    config = _config(tmp_path / "zoo", cood={"n_estimation": 5_000, "n_test": 5_000})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_zoo(config, tmp_path / "run", report=False, earlier_times={"training_s": 12.5})
    found = [str(w.message) for w in caught if "C-OOD levels" in str(w.message)]
    assert len(found) == 1
    assert found[0].startswith("no C-OOD levels for 3 of 3 members (m000, m001, m002)")
    # the caller's earlier stage (the embedded zoo's training) is in times.json with the others
    times = json.loads((tmp_path / "run" / "times.json").read_text())
    assert times["training_s"] == 12.5
    assert times["total_s"] >= 12.5 + times["evaluation_s"]
