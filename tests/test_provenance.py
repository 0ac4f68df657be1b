"""Provenance: split fingerprints, the record of data files read, refusing to merge results
evaluated on different splits."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from fdbench.core.provenance import (
    FINGERPRINT_COLUMN,
    check_same_splits,
    combined_fingerprint,
    data_files,
    record_read,
    recording_reads,
    source_version,
    split_fingerprint,
)
from fdbench.data.sources.cache import read_cached_split, write_cached_dataset
from tests._cli import run_cli


def _split(seed: int = 0, n: int = 12) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 4, 4, 1), dtype=np.uint8), rng.integers(0, 3, n)


def test_fingerprint_changes_with_any_sample_and_with_the_order():
    images, labels = _split()
    base = split_fingerprint(images, labels)
    assert base == split_fingerprint(images.copy(), labels.copy())
    assert len(base) == 64 and int(base, 16) >= 0
    changed = images.copy()
    changed[5, 0, 0, 0] ^= 1
    assert split_fingerprint(changed, labels) != base
    relabelled = labels.copy()
    relabelled[0] = (relabelled[0] + 1) % 3
    assert split_fingerprint(images, relabelled) != base
    order = np.r_[1, 0, 2:12]
    assert split_fingerprint(images[order], labels[order]) != base
    assert split_fingerprint(images[:-1], labels[:-1]) != base


def test_fingerprint_is_the_sha256_of_the_layout_and_bytes():
    images, labels = _split(n=3)
    digest = hashlib.sha256()
    for array in (images, labels):
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    assert split_fingerprint(images, labels) == digest.hexdigest()


def test_combined_fingerprint_depends_on_member_order_and_names():
    prints = {"a": "1" * 64, "b": "2" * 64}
    assert combined_fingerprint(prints, ["a", "b"]) != combined_fingerprint(prints, ["b", "a"])
    assert combined_fingerprint(prints, ["a"]) != combined_fingerprint({"c": "1" * 64}, ["c"])


def test_reads_are_recorded_with_their_sha256(tmp_path):
    images, labels = _split()
    folder = tmp_path / "cache"
    write_cached_dataset(folder, {"train": (images, labels)}, ("a", "b", "c"), "test")
    record_read(tmp_path / "outside.npy")  # outside a recording: ignored
    with recording_reads() as reads:
        read_cached_split(folder, "train", "toy")
        with recording_reads() as inner:
            record_read(folder / "manifest.json")
        assert inner is reads
    files = data_files(reads)
    names = ("manifest.json", "train_images.npy", "train_labels.npy")
    assert [f["path"] for f in files] == sorted(str((folder / n).resolve()) for n in names)
    for entry in files:
        with open(entry["path"], "rb") as fh:
            assert entry["sha256"] == hashlib.sha256(fh.read()).hexdigest()


def _results(prints: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": "d",
            "method": ["ce", "dg", "ce", "dg"],
            "seed": 0,
            "csf": "MSR",
            "study": ["iid", "iid", "new_class/x", "new_class/x"],
            "metric": "augrc",
            "value": [0.1, 0.2, 0.3, 0.4],
            FINGERPRINT_COLUMN: prints,
        }
    )


def test_results_on_different_splits_are_refused():
    same = _results(["a", "a", "b", "b"])
    check_same_splits(same)
    check_same_splits(same.drop(columns=FINGERPRINT_COLUMN))
    check_same_splits(_results(["a", None, "b", "b"]))  # an unknown fingerprint is not checked
    with pytest.raises(ValueError, match=r"study 'new_class/x'.*different splits.*refusing"):
        check_same_splits(_results(["a", "a", "b", "c"]))


def test_report_refuses_results_of_different_splits(tmp_path):
    _results(["a", "a", "b", "c"]).assign(n_samples=10).to_csv(
        tmp_path / "results.csv", index=False
    )
    done = run_cli("report", str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "different splits" in done.stderr
    assert not (tmp_path / "report.html").exists()


def test_source_version_names_the_commit_of_a_checkout():
    found = source_version()
    assert set(found) == {"version", "commit"} and found["commit"]
