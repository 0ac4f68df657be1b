"""Tests for the on-disk dataset readers, writing tiny files in each official format."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from PIL import Image

from fdbench.data import readers

RNG = np.random.default_rng(0)


def _cifar_rows(n):
    hwc = RNG.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
    return hwc, hwc.transpose(0, 3, 1, 2).reshape(n, 3072)


def _dump(path, obj):
    with open(path, "wb") as fh:
        pickle.dump(obj, fh, protocol=2)


def test_cifar10(tmp_path):
    expected = []
    for i in range(1, 6):
        hwc, rows = _cifar_rows(2)
        expected.append(hwc)
        _dump(tmp_path / f"data_batch_{i}", {b"data": rows, b"labels": [i, i + 1]})
    hwc, rows = _cifar_rows(3)
    _dump(tmp_path / "test_batch", {b"data": rows, b"labels": [0, 9, 4]})
    _dump(tmp_path / "batches.meta", {b"label_names": [f"c{i}".encode() for i in range(10)]})
    train = readers.read_cifar10(tmp_path, "train")
    np.testing.assert_array_equal(train.images, np.concatenate(expected))
    assert train.labels.tolist() == [1, 2, 2, 3, 3, 4, 4, 5, 5, 6]
    test = readers.read_cifar10(tmp_path, "test")
    np.testing.assert_array_equal(test.images, hwc)
    assert test.class_names[9] == "c9" and test.labels.tolist() == [0, 9, 4]


def test_cifar100_fine_and_coarse(tmp_path):
    hwc, rows = _cifar_rows(4)
    batch = {b"data": rows, b"fine_labels": [0, 99, 5, 7], b"coarse_labels": [4, 19, 0, 1]}
    _dump(tmp_path / "test", batch)
    _dump(
        tmp_path / "meta",
        {
            b"fine_label_names": [f"f{i}".encode() for i in range(100)],
            b"coarse_label_names": [f"s{i}".encode() for i in range(20)],
        },
    )
    fine = readers.read_cifar100(tmp_path, "test")
    coarse = readers.read_cifar100(tmp_path, "test", label="coarse")
    np.testing.assert_array_equal(fine.images, hwc)
    assert fine.labels.tolist() == [0, 99, 5, 7] and coarse.labels.tolist() == [4, 19, 0, 1]
    assert len(fine.class_names) == 100 and coarse.class_names[19] == "s19"


def test_cifar_pickle_with_code_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    _dump(tmp_path / "test_batch", {b"data": Evil()})
    with pytest.raises(pickle.UnpicklingError):
        readers.read_cifar10(tmp_path, "test")


def test_svhn(tmp_path):
    from scipy.io import savemat

    x = RNG.integers(0, 256, (32, 32, 3, 3), dtype=np.uint8)
    savemat(tmp_path / "test_32x32.mat", {"X": x, "y": np.array([[10], [1], [9]], np.uint8)})
    ds = readers.read_svhn(tmp_path, "test")
    assert ds.labels.tolist() == [0, 1, 9]
    np.testing.assert_array_equal(ds.images[2], x[..., 2])


def test_tiny_imagenet(tmp_path):
    wnids = ["n01", "n02"]
    (tmp_path / "wnids.txt").write_text("\n".join(wnids) + "\n")
    (tmp_path / "words.txt").write_text("n01\tgoldfish, fish\nn02\tcat\nn99\tother\n")
    imgs = {}
    for k, w in enumerate(wnids):
        d = tmp_path / "train" / w / "images"
        d.mkdir(parents=True)
        for j in range(2):
            arr = np.full((64, 64, 3), 40 * k + 10 * j, np.uint8)
            Image.fromarray(arr).save(d / f"{w}_{j}.JPEG", format="PNG")
            imgs[w, j] = arr
    (tmp_path / "val" / "images").mkdir(parents=True)
    Image.fromarray(imgs["n02", 1]).save(tmp_path / "val" / "images" / "val_0.JPEG", format="PNG")
    (tmp_path / "val" / "val_annotations.txt").write_text("val_0.JPEG\tn02\t0\t0\t10\t10\n")
    train = readers.read_tiny_imagenet(tmp_path, "train")
    assert train.labels.tolist() == [0, 0, 1, 1]
    assert train.class_names == ("goldfish, fish", "cat")
    np.testing.assert_array_equal(train.images[3], imgs["n02", 1])
    val = readers.read_tiny_imagenet(tmp_path, "val")
    assert val.labels.tolist() == [1] and val.images.shape == (1, 64, 64, 3)


def test_medmnist(tmp_path):
    grey = {
        f"{s}_images": RNG.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        for s, n in (("train", 3), ("val", 2), ("test", 2))
    }
    labels = {
        f"{s}_labels": np.array([[i % 3] for i in range(n)], np.uint8)
        for s, n in (("train", 3), ("val", 2), ("test", 2))
    }
    np.savez(tmp_path / "pneumoniamnist.npz", **grey, **labels)
    ds = readers.read_medmnist(tmp_path / "pneumoniamnist.npz", "train")
    assert ds.images.shape == (3, 28, 28, 1) and ds.labels.tolist() == [0, 1, 2]
    assert ds.name == "pneumoniamnist" and len(ds.class_names) == 3
    np.savez(
        tmp_path / "multi.npz",
        **grey,
        train_labels=np.zeros((3, 4)),
        val_labels=np.zeros((2, 4)),
        test_labels=np.zeros((2, 4)),
    )
    with pytest.raises(ValueError, match="multi-label"):
        readers.read_medmnist(tmp_path / "multi.npz", "train")


def test_cifar_c(tmp_path):
    images = np.repeat(np.arange(5, dtype=np.uint8), 4)[:, None, None, None] * np.ones(
        (1, 32, 32, 3), np.uint8
    )
    np.save(tmp_path / "fog.npy", images)
    np.save(tmp_path / "labels.npy", np.tile(np.arange(4), 5))
    ds = readers.read_cifar_c(tmp_path, "fog", 3, class_names=tuple("abcd"))
    assert ds.images.shape == (4, 32, 32, 3) and np.all(ds.images == 2)
    assert ds.labels.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="severity"):
        readers.read_cifar_c(tmp_path, "fog", 6, class_names=tuple("abcd"))


def test_image_folder(tmp_path):
    for k, cls in enumerate(["dog", "cat"]):
        (tmp_path / cls).mkdir()
        Image.fromarray(np.full((5, 6, 3), 100 + k, np.uint8)).save(tmp_path / cls / "a.png")
    (tmp_path / "cat" / "notes.txt").write_text("ignored")
    ds = readers.read_image_folder(tmp_path)
    assert ds.class_names == ("cat", "dog") and ds.labels.tolist() == [0, 1]
    assert ds.images.shape == (2, 5, 6, 3) and ds.images[0, 0, 0, 0] == 101
    grey = readers.read_image_folder(tmp_path, mode="L")
    assert grey.images.shape == (2, 5, 6, 1)
