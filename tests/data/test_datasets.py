"""Tests for the dataset container and the locally generated datasets."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.data import ImageDataset, load_dataset


def test_image_dataset_validates():
    imgs = np.zeros((2, 4, 4, 1), np.uint8)
    ImageDataset("x", imgs, np.array([0, 1]), ("a", "b"))
    with pytest.raises(TypeError, match="images must be a uint8"):
        ImageDataset("x", imgs.astype(np.float32), np.array([0, 1]), ("a", "b"))
    with pytest.raises(TypeError, match="labels must be an int64"):
        ImageDataset("x", imgs, np.array([0, 1], np.int32), ("a", "b"))
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 2\)"):
        ImageDataset("x", imgs, np.array([0, 2]), ("a", "b"))
    with pytest.raises(ValueError, match="N×H×W×C"):
        ImageDataset("x", imgs[..., 0], np.array([0, 1]), ("a", "b"))


@pytest.mark.parametrize(
    ("name", "shape", "n_classes"),
    [("digits", (8, 8, 1), 10), ("textures", (32, 32, 1), 5), ("noise", (28, 28, 1), 4)],
)
def test_generated_datasets(tmp_path, name, shape, n_classes):
    train = load_dataset(name, "train", data_dir=tmp_path)
    test = load_dataset(name, "test", data_dir=tmp_path)
    assert train.images.shape[1:] == shape and test.images.shape[1:] == shape
    assert len(train.class_names) == n_classes
    assert set(np.unique(test.labels)) == set(range(n_classes))
    # train and test are different images
    train_rows = {row.tobytes() for row in train.images}
    assert sum(row.tobytes() in train_rows for row in test.images) < 0.05 * len(test)


def test_digits_values_scaled_to_uint8(tmp_path):
    digits = load_dataset("digits", "train", data_dir=tmp_path)
    assert digits.images.max() == 255 and digits.images.min() == 0
    assert len(digits) + len(load_dataset("digits", "test", data_dir=tmp_path)) == 1797


#: The documented table of :func:`fdbench.data.load_dataset`: (train, test) sizes, H×W×C, classes.
DOCUMENTED = {
    "fashion_mnist": ((60_000, 10_000), (28, 28, 1), 10),
    "mnist": ((60_000, 10_000), (28, 28, 1), 10),
    "animal_mnist": ((8_000, 2_000), (28, 28, 1), 10),
    "digits": ((1_347, 450), (8, 8, 1), 10),
    "textures": ((1_500, 1_500), (32, 32, 1), 5),
    "noise": ((1_000, 1_000), (28, 28, 1), 4),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_every_dataset_has_documented_shape_dtype_classes_and_checksum(fetched, name):
    from fdbench.data.sources.catalog import CONTENT_SHA256, DATASETS, content_sha256

    sizes, shape, n_classes = DOCUMENTED[name]
    assert set(DOCUMENTED) == set(DATASETS) == set(CONTENT_SHA256)
    for split, size in zip(("train", "test"), sizes, strict=True):
        ds = fetched(name, split)
        assert ds.images.shape == (size, *shape) and ds.images.dtype == np.uint8
        assert ds.labels.dtype == np.int64 and len(ds.class_names) == n_classes
        assert set(np.unique(ds.labels)) == set(range(n_classes))
        assert content_sha256(ds) == CONTENT_SHA256[name][split], (name, split)


@pytest.mark.parametrize("name", ["fashion_mnist", "mnist"])
def test_cached_idx_datasets_are_the_official_files(fetched, name):
    # Re-encode the loaded arrays as IDX files: their SHA-256 are the pinned official ones.
    import hashlib

    from fdbench.data.sources.fetching import SHA256

    for split, prefix in (("train", "train"), ("test", "t10k")):
        ds = fetched(name, split)
        images = ds.images[..., 0]
        idx_images = bytes([0, 0, 8, 3]) + np.array(images.shape, ">i4").tobytes()
        idx_labels = bytes([0, 0, 8, 1]) + np.array([len(ds)], ">i4").tobytes()
        files = {
            f"{prefix}-images-idx3-ubyte": idx_images + images.tobytes(),
            f"{prefix}-labels-idx1-ubyte": idx_labels + ds.labels.astype(np.uint8).tobytes(),
        }
        for file, data in files.items():
            assert hashlib.sha256(data).hexdigest() == SHA256[name][file], file
