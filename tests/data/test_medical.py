"""Readers of the medical testbed on small files written in the official layouts."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from fdbench.data.sources.cache import CorruptedCacheError
from fdbench.data.suites import medical
from fdbench.data.suites.medical import (
    fundus_radius,
    graham_preprocess,
    medical_embedded_experiments,
    medical_experiments,
    read_busi,
    read_eyepacs,
    read_medmnist_file,
    read_rsna_pneumonia,
    stratified_split,
)


def _write_npz(path: Path, n: int = 6, side: int = 28) -> None:
    rng = np.random.default_rng(0)
    arrays = {}
    for split in ("train", "val", "test"):
        arrays[f"{split}_images"] = rng.integers(0, 256, (n, side, side, 3), dtype=np.uint8)
        arrays[f"{split}_labels"] = (np.arange(n) % 3).reshape(-1, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)


def test_medmnist_checksum_verified(tmp_path: Path, monkeypatch) -> None:
    file = tmp_path / "medmnist" / "pathmnist.npz"
    _write_npz(file)
    with pytest.raises(CorruptedCacheError, match="official"):
        read_medmnist_file("pathmnist", "train", data_dir=tmp_path)
    unverified = read_medmnist_file("pathmnist", "val", data_dir=tmp_path, verify=False)
    assert unverified.images.shape == (6, 28, 28, 3)
    np.testing.assert_array_equal(unverified.labels, [0, 1, 2, 0, 1, 2])
    assert unverified.class_names[0] == "adipose"
    digest = hashlib.md5(file.read_bytes()).hexdigest()
    monkeypatch.setitem(medical.MEDMNIST_MD5, "pathmnist", {28: digest})
    assert len(read_medmnist_file("pathmnist", "test", data_dir=tmp_path)) == 6


def test_medmnist_larger_size_and_unknown_name(tmp_path: Path) -> None:
    _write_npz(tmp_path / "medmnist" / "toymnist_64.npz", side=64)
    data = read_medmnist_file("toymnist", "train", size=64, data_dir=tmp_path)
    assert data.images.shape == (6, 64, 64, 3)
    with pytest.raises(FileNotFoundError, match=r"toymnist\.npz"):
        read_medmnist_file("toymnist", "train", data_dir=tmp_path)
    with pytest.raises(ValueError, match="size"):
        read_medmnist_file("toymnist", "train", size=32, data_dir=tmp_path)


def _png(path: Path, value: int, shape=(20, 30)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full(shape, value, np.uint8)).save(path)


def test_busi_class_folders_skip_masks(tmp_path: Path) -> None:
    for cls, value in (("normal", 10), ("benign", 20), ("malignant", 30)):
        for i in range(2):
            _png(tmp_path / cls / f"{cls} ({i}).png", value, shape=(20 + i, 30))
            _png(tmp_path / cls / f"{cls} ({i})_mask.png", 255)
    data = read_busi(tmp_path, size=16)
    assert data.images.shape == (6, 16, 16, 1)
    np.testing.assert_array_equal(data.labels, [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(data.images[:, 8, 8, 0], [10, 10, 20, 20, 30, 30])


def test_rsna_labels_once_per_patient(tmp_path: Path) -> None:
    rows = [
        "patientId,x,y,width,height,Target",
        "p1,,,,,0",
        "p2,10,20,30,40,1",
        "p2,50,60,30,40,1",
        "p3,,,,,0",
    ]
    (tmp_path / "stage_2_train_labels.csv").write_text("\n".join(rows) + "\n")
    for i, p in enumerate(("p1", "p2", "p3")):
        _png(tmp_path / "stage_2_train_images" / f"{p}.png", 50 * i, shape=(32, 32))
    data = read_rsna_pneumonia(tmp_path, size=8)
    np.testing.assert_array_equal(data.labels, [0, 1, 0])
    np.testing.assert_array_equal(data.images[:, 0, 0, 0], [0, 50, 100])


@pytest.mark.skipif(importlib.util.find_spec("pydicom") is not None, reason="pydicom installed")
def test_rsna_dicom_needs_pydicom(tmp_path: Path) -> None:
    (tmp_path / "stage_2_train_labels.csv").write_text("patientId,Target\np1,1\n")
    (tmp_path / "stage_2_train_images").mkdir()
    (tmp_path / "stage_2_train_images" / "p1.dcm").write_bytes(b"DICM")
    with pytest.raises(ImportError, match="pydicom"):
        read_rsna_pneumonia(tmp_path, size=8)


def test_rsna_missing_scan(tmp_path: Path) -> None:
    (tmp_path / "stage_2_train_labels.csv").write_text("patientId,Target\np9,1\n")
    (tmp_path / "stage_2_train_images").mkdir()
    with pytest.raises(FileNotFoundError, match="p9"):
        read_rsna_pneumonia(tmp_path)


def _fundus(side: int = 120, radius: int = 40, value: int = 150) -> np.ndarray:
    yy, xx = np.ogrid[:side, :side]
    disk = (yy - side // 2) ** 2 + (xx - side // 2) ** 2 <= radius**2
    image = np.zeros((side, side, 3), np.uint8)
    image[disk] = value
    return image


def test_fundus_radius_and_graham_preprocess() -> None:
    image = _fundus()
    # The middle row crosses the disk over 2·40 + 1 pixels.
    assert fundus_radius(image) == pytest.approx(40.5)
    assert fundus_radius(np.zeros((10, 12, 3), np.uint8)) == 5.0
    out = graham_preprocess(image, radius=60, size=64)
    assert out.shape == (64, 64, 3) and out.dtype == np.uint8
    # Outside 90 % of the radius: grey 128; the uniform centre minus its local mean: 128.
    assert np.all(out[0, 0] == 128) and np.all(out[-1, -1] == 128)
    assert np.all(np.abs(out[32, 32].astype(int) - 128) <= 1)
    with pytest.raises(TypeError):
        graham_preprocess(image.astype(np.float32))


def test_eyepacs_splits_and_binarisation(tmp_path: Path) -> None:
    (tmp_path / "train").mkdir()
    (tmp_path / "test").mkdir()
    levels = {"10_left": 0, "10_right": 1, "11_left": 2, "11_right": 4}
    lines = ["image,level"] + [f"{k},{v}" for k, v in levels.items()]
    (tmp_path / "trainLabels.csv").write_text("\n".join(lines) + "\n")
    solution = ["image,level,Usage", "1_left,3,Public", "1_right,0,Private", "2_left,2,Private"]
    (tmp_path / "retinopathy_solution.csv").write_text("\n".join(solution) + "\n")
    for name in levels:
        Image.fromarray(_fundus()).save(tmp_path / "train" / f"{name}.jpeg")
    for name in ("1_left", "1_right", "2_left"):
        Image.fromarray(_fundus()).save(tmp_path / "test" / f"{name}.jpeg")
    train = read_eyepacs(tmp_path, "train", size=32, radius=40)
    np.testing.assert_array_equal(train.labels, [0, 0, 1, 1])
    assert train.images.shape == (4, 32, 32, 3)
    np.testing.assert_array_equal(read_eyepacs(tmp_path, "val", size=32, radius=40).labels, [1])
    test = read_eyepacs(tmp_path, "test", size=32, radius=40)
    np.testing.assert_array_equal(test.labels, [0, 1])


def test_stratified_split_70_10_20() -> None:
    labels = np.repeat([0, 1], [100, 50])
    train, val, test = stratified_split(labels, seed=42)
    assert (train.size, val.size, test.size) == (105, 15, 30)
    assert np.sum(labels[test] == 1) == 10
    assert np.unique(np.concatenate([train, val, test])).size == 150
    again = stratified_split(labels, seed=42)
    np.testing.assert_array_equal(again[2], test)
    assert not np.array_equal(stratified_split(labels, seed=0)[2], test)
    with pytest.raises(ValueError, match="fractions"):
        stratified_split(labels, fractions=(0.5, 0.2, 0.2))


def test_medical_experiments_busi(tmp_path: Path) -> None:
    for cls, value in (("normal", 10), ("benign", 20), ("malignant", 30)):
        for i in range(10):
            _png(tmp_path / "busi" / cls / f"{cls} ({i}).png", value)
    (experiment,) = medical_experiments(dataset="busi", data_dir=tmp_path, size=8)
    assert (len(experiment.train), len(experiment.val), len(experiment.studies[0].labels)) == (
        21,
        3,
        6,
    )
    assert experiment.studies[0].name == "iid"
    with pytest.raises(ValueError, match="dataset"):
        medical_experiments(dataset="chestmnist", data_dir=tmp_path)


def test_embedded_experiments_binary_task() -> None:
    multi, binary = medical_embedded_experiments(seed=0, quick=True)
    assert (multi.name, binary.name) == ("embedded_multiclass", "embedded_binary")
    assert len(multi.class_names) == 10 and len(binary.class_names) == 2
    assert len(binary.train) + len(binary.val) == 4000
    assert len(binary.studies[0].labels) == 1000
    np.testing.assert_array_equal(binary.studies[0].images, multi.studies[0].images)
    np.testing.assert_array_equal(
        binary.studies[0].labels, np.isin(multi.studies[0].labels, [0, 2, 4, 6])
    )
