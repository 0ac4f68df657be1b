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
