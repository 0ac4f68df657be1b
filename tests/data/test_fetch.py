"""Tests for fetching, checksums, the cache and the restricted unpickler."""

from __future__ import annotations

import gzip
import os
import pickle
import sys

import numpy as np
import pytest

from fdbench.data import fetch, load_dataset
from fdbench.data.sources import cache as _cache
from fdbench.data.sources import fetching as fetch_module
from fdbench.data.sources._safe_pickle import load_array_pickle
from fdbench.data.sources.idx import parse_idx


def test_parse_idx_roundtrip():
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    data = bytes([0, 0, 0x08, 3]) + np.array([2, 3, 4], ">i4").tobytes() + arr.tobytes()
    np.testing.assert_array_equal(parse_idx(data), arr)
    with pytest.raises(ValueError, match="magic"):
        parse_idx(b"\x01\x00\x08\x01" + data[4:])
    with pytest.raises(ValueError, match="data bytes"):
        parse_idx(data[:-1])


@pytest.mark.parametrize("name", ["fashion_mnist", "mnist", "animal_mnist"])
def test_fetched_datasets_match_official_sizes(fetched, name):
    train, test = fetched(name, "train"), fetched(name, "test")
    n_train, n_test = {"animal_mnist": (8000, 2000)}.get(name, (60000, 10000))
    assert train.images.shape == (n_train, 28, 28, 1) and test.images.shape == (n_test, 28, 28, 1)
    assert train.images.dtype == np.uint8 and train.labels.dtype == np.int64
    assert set(np.unique(test.labels)) == set(range(10))
    assert len(train.class_names) == 10


def test_fashion_mnist_first_labels(fetched):
    # The first official training labels of Fashion-MNIST are 9, 0, 0, 3 (Ankle boot, T-shirt…).
    train = fetched("fashion_mnist", "train")
    assert train.labels[:4].tolist() == [9, 0, 0, 3]
    assert train.class_names[9] == "Ankle boot"


def test_checksum_verification_rejects_modified_file():
    good = fetch_module.SHA256["mnist"]["t10k-labels-idx1-ubyte"]
    assert len(good) == 64
    with pytest.raises(fetch_module.ChecksumError, match="t10k-labels"):
        fetch_module._verify("mnist", "t10k-labels-idx1-ubyte", b"not mnist")


def test_generated_dataset_cache_and_corruption_error(tmp_path):
    folder = fetch("noise", data_dir=tmp_path, progress=False)
    ds = load_dataset("noise", "train", data_dir=tmp_path)
    assert ds.images.shape == (1000, 28, 28, 1) and len(ds.class_names) == 4
    again = load_dataset("noise", "train", data_dir=tmp_path)
    np.testing.assert_array_equal(ds.images, again.images)
    target = folder / "train_images.npy"
    raw = bytearray(target.read_bytes())
    raw[-1] ^= 0xFF
    target.write_bytes(bytes(raw))
    with pytest.raises(_cache.CorruptedCacheError, match=r"train_images\.npy.*re-fetch"):
        load_dataset("noise", "train", data_dir=tmp_path)
    fetch("noise", data_dir=tmp_path, progress=False, force=True)
    np.testing.assert_array_equal(
        load_dataset("noise", "train", data_dir=tmp_path).images, ds.images
    )


def test_env_var_selects_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FDBENCH_DATA", os.fspath(tmp_path))
    assert _cache.data_dir() == tmp_path
    assert _cache.data_dir(tmp_path / "x") == tmp_path / "x"


def test_all_sources_failing_gives_one_error_listing_them(tmp_path, monkeypatch):
    def broken(reporter):
        raise OSError("unreachable")

    monkeypatch.setitem(
        fetch_module._SOURCES, "mnist", [("source A", broken), ("source B", broken)]
    )
    with pytest.raises(fetch_module.FetchError) as info:
        fetch("mnist", data_dir=tmp_path, progress=False)
    message = str(info.value)
    assert "\n" not in message
    assert "source A: OSError: unreachable; [2] source B: OSError: unreachable" in message
    assert not _cache.is_cached(tmp_path / "mnist")


def test_failing_registry_client_reports_its_error(tmp_path):
    with pytest.raises(RuntimeError, match=r"exited with 3: boom"):
        with fetch_module._Reporter(False) as reporter:
            fetch_module._run(
                [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"],
                tmp_path,
                reporter,
            )


def test_missing_cached_file_is_a_clear_error_and_fetch_repairs_it(tmp_path):
    folder = fetch("noise", data_dir=tmp_path, progress=False)
    expected = load_dataset("noise", "test", data_dir=tmp_path)
    (folder / "test_labels.npy").unlink()
    with pytest.raises(_cache.CorruptedCacheError, match=r"test_labels\.npy is missing or corr"):
        load_dataset("noise", "test", data_dir=tmp_path)
    assert _cache.damaged_files(folder) == ["test_labels.npy"]
    fetch("noise", data_dir=tmp_path, progress=False)  # no force: a damaged cache is rebuilt
    assert _cache.damaged_files(folder) == []
    np.testing.assert_array_equal(
        load_dataset("noise", "test", data_dir=tmp_path).labels, expected.labels
    )


def test_unreadable_manifest_is_a_clear_error(tmp_path):
    folder = fetch("noise", data_dir=tmp_path, progress=False)
    (folder / _cache.MANIFEST).write_text('{"files": ')
    with pytest.raises(_cache.CorruptedCacheError, match=r"manifest.*unreadable.*--force"):
        load_dataset("noise", "train", data_dir=tmp_path)
    assert _cache.damaged_files(folder) == [_cache.MANIFEST]


def test_bad_names_and_splits(tmp_path):
    with pytest.raises(ValueError, match="name must be one of"):
        load_dataset("imagenet", data_dir=tmp_path)
    with pytest.raises(ValueError, match="split must be one of"):
        load_dataset("noise", "val", data_dir=tmp_path)


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_restricted_unpickler_loads_arrays_and_refuses_code():
    arr = np.arange(6, dtype=np.int64).reshape(2, 3)
    for protocol in (2, 4, 5):
        out = load_array_pickle(pickle.dumps({"a": arr, "b": [1, 2]}, protocol=protocol))
        np.testing.assert_array_equal(out["a"], arr)
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        load_array_pickle(pickle.dumps(_Evil()))
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        load_array_pickle(gzip.decompress(gzip.compress(pickle.dumps(_Evil()))))


def test_canonical_download_gives_up_quickly():
    import time

    start = time.perf_counter()
    with pytest.raises(OSError):
        with fetch_module._Reporter(False) as reporter:
            fetch_module._download("http://10.255.255.1/unreachable.gz", reporter, timeout=0.5)
    assert time.perf_counter() - start < 5
    assert fetch_module.CANONICAL_TIMEOUT_S <= 5
