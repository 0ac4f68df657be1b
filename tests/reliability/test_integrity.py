"""Point 1 of issue #25: every file fdbench writes and reads back is verified before use.

Each test damages one file the way bit rot or a careless edit would and checks that fdbench
either stops with one line naming the file (exit status 2, the file left as it was) or, on
resume, recomputes the damaged cache bit for bit.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd
import pytest

from fdbench.core.io import (
    DIRECTORY_CHECKSUMS,
    IntegrityError,
    atomic_path,
    checksum_path,
    claim_run_folder,
    read_table,
    record_directory_checksums,
    write_table,
)
from fdbench.core.runner import Job, run_jobs
from fdbench.jobs.benchmark import _evaluation_jobs, _settings, collect_results
from fdbench.jobs.run_folder import pin_config
from fdbench.outputs import read_outputs, write_outputs
from fdbench.report import Gallery

from .conftest import assert_user_error, digest, flip_byte, run_cli, small_run

TABLE = pd.DataFrame(
    {
        "dataset": ["tiny"] * 4,
        "method": ["ce"] * 4,
        "seed": [0] * 4,
        "csf": ["MSR", "MSR", "PE", "PE"],
        "study": ["iid"] * 4,
        "metric": ["aurc", "augrc"] * 2,
        "value": [0.0625, 0.03125, 0.0703125, 0.0390625],
    }
)


def _gallery() -> Gallery:
    return Gallery(
        np.zeros((2, 4, 4, 1), np.uint8),
        np.array([0.5, 0.25]),
        np.array(["iid", "iid"]),
        np.array(["MSR", "MSR"]),
        np.array(["overconfident failure", "underconfident success"]),
    )


def _run_folder(path):
    claim_run_folder(path)
    for name in ("results.parquet", "bootstrap.parquet", "curves.parquet", "sgr.csv"):
        write_table(TABLE, path / name)
    _gallery().save(path / "gallery.npz")
    return path


@pytest.mark.parametrize(
    "name", ["results.parquet", "bootstrap.parquet", "curves.parquet", "sgr.csv", "gallery.npz"]
)
def test_flipped_byte_in_results(tmp_path, name):
    # one flipped byte in any report input stops `fdbench report` before it uses the file
    run = _run_folder(tmp_path / "run")
    flip_byte(run / name)
    before = digest(run / name)
    done = run_cli("report", str(run))
    assert_user_error(done, str(run / name), "damaged")
    assert digest(run / name) == before
    assert not (run / "report.html").exists()


def test_missing_checksum_in_a_run_folder_is_an_error(tmp_path):
    run = _run_folder(tmp_path / "run")
    checksum_path(run / "results.parquet").unlink()
    assert_user_error(run_cli("report", str(run)), "results.parquet", "no checksum")


def test_read_table_names_the_damaged_file(tmp_path):
    path = write_table(TABLE, tmp_path / "results.parquet")
    pd.testing.assert_frame_equal(read_table(path), TABLE)
    flip_byte(path, 0.3)
    with pytest.raises(IntegrityError, match=r"results\.parquet is damaged"):
        read_table(path)


def test_damaged_recorded_config_is_one_error(tmp_path):
    from fdbench.cli.benchmark import _default_config
    from fdbench.jobs.plan import load_config

    run = tmp_path / "run"
    claim_run_folder(run)
    pin_config(_settings(load_config(_default_config(quick=True))), run)
    text = (run / "config.json").read_text()
    (run / "config.json").write_text(text.replace('"seed', '"seeD', 1))
    before = digest(run / "config.json")
    done = run_cli("benchmark", "--quick", "--out", str(run))
    assert_user_error(done, str(run / "config.json"), "damaged")
    assert digest(run / "config.json") == before
    assert sorted(p.name for p in run.iterdir()) == [
        ".fdbench-written.json",
        "config.json",
        "config.json.sha256",
        "fdbench-run.json",
        "fdbench-run.json.sha256",
    ]


@pytest.fixture
def evaluated(tmp_path):
    """An evaluation job of the benchmark (results.parquet and scores.npz of one stored run),
    run once, with the digests of what it wrote."""
    store = tmp_path / "runs" / "outputs.zarr"
    write_outputs(store, small_run())
    jobs = _evaluation_jobs("eval:tiny/ce/0", [[store]], tmp_path / "evaluation")
    assert [job.key for job in run_jobs(jobs)] == ["eval:tiny/ce/0"]
    files = {p.name: digest(p) for p in (tmp_path / "evaluation").iterdir()}
    return jobs, tmp_path / "evaluation", files


@pytest.mark.parametrize(
    "damage",
    [
        ("results.parquet", "flip"),
        ("scores.npz", "flip"),
        ("results.parquet.sha256", "flip"),
        ("scores.npz.sha256", "delete"),
        ("results.parquet", "truncate"),
    ],
)
def test_flipped_byte_in_resume_cache_is_recomputed(evaluated, caplog, damage):
    jobs, folder, files = evaluated
    name, how = damage
    if how == "flip":
        flip_byte(folder / name)
    elif how == "delete":
        (folder / name).unlink()
    else:
        (folder / name).write_bytes((folder / name).read_bytes()[:100])
    culprit = folder / name.removesuffix(".sha256")
    with caplog.at_level(logging.WARNING, logger="fdbench"):
        ran = run_jobs(jobs)
    assert [job.key for job in ran] == ["eval:tiny/ce/0"]
    messages = [r.getMessage() for r in caplog.records]
    assert any(str(culprit) in m and "recomputing" in m for m in messages), messages
    # the recomputed cache is bit for bit the one first written
    assert {p.name: digest(p) for p in folder.iterdir()} == files
    assert run_jobs(jobs) == []


def test_intact_cache_is_reused_and_results_unchanged(evaluated):
    from fdbench.jobs.plan import BenchmarkPlan

    jobs, folder, _ = evaluated
    before = collect_results(BenchmarkPlan([], jobs))
    assert run_jobs(jobs) == []
    pd.testing.assert_frame_equal(collect_results(BenchmarkPlan([], jobs)), before)
    flip_byte(folder / "results.parquet")
    with pytest.raises(IntegrityError, match=r"results\.parquet is damaged"):
        collect_results(BenchmarkPlan([], jobs))


def _write_store(path, seed):
    write_outputs(path, small_run(seed))


def test_damaged_store_of_a_finished_job_is_recomputed(tmp_path, caplog):
    store = tmp_path / "runs" / "outputs.zarr"
    job = Job("train:x", _write_store, (store, 0), store, verified=True)
    run_jobs([job])
    chunk = store / "splits" / "0001" / "logits" / "c" / "0" / "0"
    first = digest(chunk)
    flip_byte(chunk)
    with caplog.at_level(logging.WARNING, logger="fdbench"):
        assert run_jobs([job]) == [job]
    assert str(store) in caplog.text
    assert digest(chunk) == first
    assert run_jobs([job]) == []


def _store(tmp_path):
    path = tmp_path / "outputs.zarr"
    write_outputs(path, small_run())
    return path


def test_flipped_byte_in_store_is_one_error_naming_it(tmp_path):
    store = _store(tmp_path)
    chunk = store / "splits" / "0001" / "logits" / "c" / "0" / "0"
    flip_byte(chunk)
    before = digest(chunk)
    done = run_cli("evaluate", str(store))
    assert_user_error(done, str(store), "corrupted")
    assert digest(chunk) == before


def test_edited_store_metadata_is_detected(tmp_path):
    # a change that keeps zarr.json valid JSON (the run's seed) is caught by the checksum
    store = _store(tmp_path)
    text = (store / "zarr.json").read_text()
    assert '"seed": 0' in text
    (store / "zarr.json").write_text(text.replace('"seed": 0', '"seed": 7'))
    with pytest.raises(ValueError, match=r"zarr\.json.*does not match the SHA-256"):
        read_outputs(store)


def _edit_json(path, edit):
    meta = json.loads(path.read_text())
    edit(meta)
    path.write_text(json.dumps(meta))


def _drop_crc(meta):
    meta["codecs"] = [c for c in meta["codecs"] if c["name"] != "crc32c"]


@pytest.mark.parametrize("rerecord", [False, True])
def test_store_metadata_without_codec_is_refused(tmp_path, rerecord):
    store = _store(tmp_path)
    _edit_json(store / "splits" / "0001" / "logits" / "zarr.json", _drop_crc)
    if rerecord:  # checksums made to match: the missing codec itself is refused
        record_directory_checksums(store)
        match = "array 'splits/0001/logits' has no CRC32C checksum codec"
    else:
        match = "does not match the SHA-256"
    with pytest.raises(ValueError, match=match):
        read_outputs(store)
    with pytest.raises(ValueError, match=match):
        read_outputs(store, lazy=True)


@pytest.mark.parametrize("rerecord", [False, True])
def test_shortened_split_list_is_an_error_not_a_dropped_split(tmp_path, rerecord):
    store = _store(tmp_path)

    def shorten(meta):
        meta["attributes"]["splits"] = meta["attributes"]["splits"][:2]

    _edit_json(store / "zarr.json", shorten)
    if rerecord:
        record_directory_checksums(store)
        match = r"split list names 2 split\(s\) but the store holds"
    else:
        match = "does not match the SHA-256"
    with pytest.raises(ValueError, match=match):
        read_outputs(store)


@pytest.mark.parametrize("rerecord", [False, True])
def test_undeclared_array_is_an_error(tmp_path, rerecord):
    store = _store(tmp_path)

    def forget_features(meta):
        meta["attributes"]["arrays"].remove("features")

    _edit_json(store / "splits" / "0000" / "zarr.json", forget_features)
    if rerecord:
        record_directory_checksums(store)
    with pytest.raises(ValueError, match="corrupted"):
        read_outputs(store)


def test_store_without_checksums_is_refused(tmp_path):
    store = _store(tmp_path)
    (store / DIRECTORY_CHECKSUMS).unlink()
    with pytest.raises(ValueError, match="cannot be verified: its checksum file"):
        read_outputs(store)
    assert_user_error(run_cli("evaluate", str(store)), str(store), DIRECTORY_CHECKSUMS)


def test_checksum_files_are_sha256sum_compatible(tmp_path):
    import shutil
    import subprocess

    if shutil.which("sha256sum") is None:
        pytest.skip("no sha256sum")
    path = write_table(TABLE, tmp_path / "results.csv")
    with atomic_path(tmp_path / "times.json") as tmp:
        tmp.write_text("{}")
    store = _store(tmp_path)
    for folder, record in (
        (tmp_path, checksum_path(path).name),
        (tmp_path, "times.json.sha256"),
        (store, DIRECTORY_CHECKSUMS),
    ):
        done = subprocess.run(["sha256sum", "-c", record], cwd=folder, capture_output=True)
        assert done.returncode == 0, done.stdout


def test_evaluate_verifies_an_input_fdbench_wrote(tmp_path):
    # an input with a checksum beside it (a table fdbench wrote) is verified before use
    frame = pd.DataFrame(
        {
            "label": [0, 1, 1, 0] * 10,
            "prediction": [0, 1, 0, 0] * 10,
            "msr": np.linspace(0.1, 0.9, 40),
        }
    )
    path = write_table(frame, tmp_path / "confidences.csv")
    assert run_cli("evaluate", str(path)).returncode == 0
    path.write_text(path.read_text().replace("0.1", "0.7", 1))
    assert_user_error(run_cli("evaluate", str(path)), str(path), "damaged")


def test_replacement_killed_between_renames_still_verifies(tmp_path, monkeypatch):
    # the process dies after the checksum file names the new content, before the new file is
    # in place: the old file still verifies and fdbench may still replace it
    import os as _os

    path = write_table(TABLE, tmp_path / "results.csv")
    before = digest(path)
    replace = _os.replace

    def killed_before_the_file(src, dst):
        if str(dst) == str(path):
            raise KeyboardInterrupt
        replace(src, dst)

    monkeypatch.setattr(_os, "replace", killed_before_the_file)
    with pytest.raises(KeyboardInterrupt):
        write_table(TABLE.assign(value=1.0), path)
    monkeypatch.undo()
    assert len(checksum_path(path).read_text().splitlines()) == 2
    assert digest(path) == before
    pd.testing.assert_frame_equal(read_table(path), TABLE)
    write_table(TABLE.assign(value=1.0), path)
    assert (read_table(path)["value"] == 1.0).all()
    assert len(checksum_path(path).read_text().splitlines()) == 1
