"""Tests for the FIX resize (Tack et al., 2020) and ``fdbench data prepare-fix``."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from fdbench.data.sources.fix import center_crop, fix_resize, prepare_fix, shorter_side_to
from tests.data.test_cli_data import run_cli


def _columns(width: int, height: int) -> np.ndarray:
    """An RGB image whose red channel is the column index (mod 256), green the row."""
    cols = np.broadcast_to(np.arange(width) % 256, (height, width))
    rows = np.broadcast_to((np.arange(height) % 256)[:, None], (height, width))
    return np.stack([cols, rows, np.zeros_like(cols)], axis=-1).astype(np.uint8)


def test_shorter_side_follows_torchvision_resize_int_rule():
    im = Image.fromarray(_columns(300, 200))
    assert shorter_side_to(im, 256).size == (384, 256)
    assert shorter_side_to(Image.fromarray(_columns(200, 333)), 256).size == (256, 426)  # int()
    same = Image.fromarray(_columns(256, 400))
    assert shorter_side_to(same, 256) is same


def test_center_crop_offsets_round_half_to_even():
    im = Image.fromarray(_columns(259, 256))  # (259 − 256) / 2 = 1.5 → 2
    crop = np.asarray(center_crop(im, 256))
    assert crop.shape == (256, 256, 3) and crop[0, 0, 0] == 2 and crop[0, -1, 0] == 257 % 256
    crop = np.asarray(center_crop(Image.fromarray(_columns(261, 256)), 256))  # 2.5 → 2
    assert crop[0, 0, 0] == 2


def test_fix_resize_of_a_constant_and_of_a_two_colour_image():
    flat = np.full((480, 640, 3), 77, np.uint8)
    assert (fix_resize(flat) == 77).all() and fix_resize(flat).shape == (32, 32, 3)
    # 512 × 256: left half red, right half blue; the centre 256 crop keeps columns 128..383,
    # so the 32 × 32 result is half red, half blue with a blend only at the seam.
    two = np.zeros((256, 512, 3), np.uint8)
    two[:, :256, 0] = 255
    two[:, 256:, 2] = 255
    out = fix_resize(two)
    assert (out[:, :15, 0] == 255).all() and (out[:, :15, 2] == 0).all()
    assert (out[:, 17:, 2] == 255).all() and (out[:, 17:, 0] == 0).all()


def test_fix_resize_equals_the_three_steps_with_pillow():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (301, 407, 3), dtype=np.uint8)
    pil = Image.fromarray(img)
    step = pil.resize((int(256 * 407 / 301), 256), Image.BILINEAR)
    left = round((step.size[0] - 256) / 2)
    step = step.crop((left, 0, left + 256, 256)).resize((32, 32), Image.BILINEAR)
    np.testing.assert_array_equal(fix_resize(img), np.asarray(step))
    assert fix_resize(img[..., 0]).shape == (32, 32, 3)  # grey input becomes RGB


def test_fix_resize_rejects_bad_input():
    with pytest.raises(TypeError):
        fix_resize(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match="intermediate"):
        fix_resize(np.zeros((4, 4, 3), np.uint8), size=64, intermediate=32)


def _write_tree(root):
    for cls, (w, h) in {"bedroom": (320, 240), "tower": (200, 300)}.items():
        (root / cls).mkdir(parents=True)
        for i in range(2):
            Image.fromarray(_columns(w + i, h)).save(root / cls / f"img{i}.jpg", quality=95)


def test_prepare_fix_keeps_the_folder_structure(tmp_path):
    _write_tree(tmp_path / "src")
    n = prepare_fix(tmp_path / "src", tmp_path / "dst")
    assert n == 4
    dst = tmp_path / "dst"
    out = sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*.png"))
    assert out == ["bedroom/img0.png", "bedroom/img1.png", "tower/img0.png", "tower/img1.png"]
    with Image.open(tmp_path / "src" / "tower" / "img0.jpg") as im:
        expected = fix_resize(im)
    with Image.open(tmp_path / "dst" / "tower" / "img0.png") as im:
        np.testing.assert_array_equal(np.asarray(im), expected)  # PNG is lossless
    with pytest.raises(FileExistsError):
        prepare_fix(tmp_path / "src", tmp_path / "dst")
    assert prepare_fix(tmp_path / "src", tmp_path / "dst", overwrite=True) == 4
    with pytest.raises(ValueError, match="outside"):
        prepare_fix(tmp_path / "src", tmp_path / "src" / "fix")


def test_prepare_fix_command(tmp_path):
    _write_tree(tmp_path / "src")
    result = run_cli("prepare-fix", str(tmp_path / "src"), str(tmp_path / "dst"), data_dir=tmp_path)
    assert result.returncode == 0 and "wrote 4 images" in result.stdout
    result = run_cli(
        "prepare-fix", str(tmp_path / "nope"), str(tmp_path / "dst"), data_dir=tmp_path
    )
    assert result.returncode == 2 and "nope" in result.stderr and "Traceback" not in result.stderr
