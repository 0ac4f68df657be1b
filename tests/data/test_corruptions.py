"""Tests for the 15 corruptions: shapes, determinism, severity ordering on real images."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fdbench.data.shifts.corruptions import (
    CORRUPTIONS,
    SEVERITIES,
    corrupt,
    corruption_grid,
    show_corruptions,
)

RNG = np.random.default_rng(1)


def test_fifteen_corruptions():
    assert len(CORRUPTIONS) == 15 and len(set(CORRUPTIONS)) == 15


@pytest.mark.parametrize("name", CORRUPTIONS)
@pytest.mark.parametrize("shape", [(3, 28, 28, 1), (2, 20, 33, 3)])
def test_shape_dtype_determinism(name, shape):
    images = RNG.integers(0, 256, shape, dtype=np.uint8)
    before = images.copy()
    out = corrupt(images, name, 3, seed=7)
    np.testing.assert_array_equal(images, before)  # input untouched
    assert out.shape == images.shape and out.dtype == np.uint8
    np.testing.assert_array_equal(out, corrupt(images, name, 3, seed=7))
    assert not np.array_equal(out, images)


@pytest.mark.parametrize(
    "name",
    [
        "gaussian_noise",
        "impulse_noise",
        "motion_blur",
        "frost",
        "fog",
        "elastic_transform",
        "snow",
        "glass_blur",
    ],
)
def test_seed_changes_random_corruptions(name):
    images = RNG.integers(0, 256, (2, 28, 28, 1), dtype=np.uint8)
    assert not np.array_equal(corrupt(images, name, 3, seed=0), corrupt(images, name, 3, seed=1))


def test_batch_independence_of_deterministic_corruptions():
    images = RNG.integers(0, 256, (4, 28, 28, 3), dtype=np.uint8)
    for name in ("contrast", "brightness", "pixelate", "jpeg_compression", "defocus_blur"):
        whole = corrupt(images, name, 2, seed=0)
        np.testing.assert_array_equal(whole[1:2], corrupt(images[1:2], name, 2, seed=0))


def test_severity_strictly_increases_mean_change_on_fashion_mnist(fetched):
    images = fetched("fashion_mnist", "test").images[:200]
    grid = corruption_grid(images, seed=0)
    for name in CORRUPTIONS:
        change = [np.abs(grid[name, s].astype(np.float64) - images).mean() for s in SEVERITIES]
        assert np.all(np.diff(change) > 0), (name, change)


def _natural_images(height: int, width: int) -> np.ndarray:
    """scikit-image's bundled photographs (colour, and the cameraman repeated to RGB)."""
    import skimage.data
    from PIL import Image

    photos = [
        skimage.data.astronaut(),
        skimage.data.chelsea(),
        skimage.data.coffee(),
        skimage.data.rocket(),
        np.repeat(skimage.data.camera()[..., None], 3, axis=-1),
    ]
    return np.stack(
        [np.asarray(Image.fromarray(p).resize((width, height), Image.BILINEAR)) for p in photos]
    )


@pytest.mark.parametrize(
    ("height", "width", "channels"), [(24, 24, 3), (48, 64, 3), (16, 16, 1), (32, 32, 1)]
)
def test_severity_strictly_increases_mean_change_on_photographs(height, width, channels):
    # Colour and grey photographs of several sizes: frost (whose image weight fell with
    # severity) and pixelate (whose pixel counts repeated on 16 and 24 pixels) once failed here.
    images = _natural_images(height, width)[..., :channels]
    grid = corruption_grid(images, seed=0)
    for name in CORRUPTIONS:
        change = [np.abs(grid[name, s].astype(np.float64) - images).mean() for s in SEVERITIES]
        assert np.all(np.diff(change) > 0), (name, change)


def test_pixel_counts_fall_strictly():
    from fdbench.data.shifts.corruptions import _pixel_counts

    assert _pixel_counts(28) == (10, 7, 5, 4, 3)  # ImageNet-C's factors, unchanged
    for n in range(1, 300):
        counts = _pixel_counts(n)
        assert all(a > b for a, b in itertools.pairwise(counts)) and counts[-1] >= 1


def test_contrast_and_brightness_definitions():
    images = np.array([[[[0], [100]], [[200], [255]]]], dtype=np.uint8)
    x = images / 255.0
    expected = np.rint(np.clip((x - x.mean()) * 0.3 + x.mean(), 0, 1) * 255)
    np.testing.assert_array_equal(corrupt(images, "contrast", 3), expected)
    # brightness adds to the HSV value: for grey pixels that is the grey level itself
    np.testing.assert_array_equal(
        corrupt(images, "brightness", 1), np.rint(np.clip(x + 0.1, 0, 1) * 255)
    )
    rgb = np.array([[[[100, 50, 0]]]], dtype=np.uint8)
    out = corrupt(rgb, "brightness", 5)[0, 0, 0]
    assert (
        out[2] == 0 and abs(int(out[0]) - 228) <= 1 and abs(int(out[1]) - 114) <= 1
    )  # hue, saturation kept


def test_input_validation():
    images = np.zeros((1, 8, 8, 1), np.uint8)
    with pytest.raises(ValueError, match="corruption must be one of"):
        corrupt(images, "rain", 1)
    with pytest.raises(ValueError, match=r"severity must be in 1\.\.5"):
        corrupt(images, "fog", 6)
    with pytest.raises(TypeError, match="images must be a uint8"):
        corrupt(images.astype(float), "fog", 1)
    with pytest.raises(ValueError, match="N×H×W×C"):
        corrupt(images[0], "fog", 1)


def test_show_corruptions_writes_png(tmp_path):
    images = RNG.integers(0, 256, (2, 28, 28, 1), dtype=np.uint8)
    out = show_corruptions(images, tmp_path / "grid.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
