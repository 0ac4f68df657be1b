"""Write a small image-folder dataset from scikit-learn's digits (no download).

Digits 0-5 are the training classes; their images are split into ``train/`` (75 %) and
``test/``. Two shift studies: ``shifts/noise`` (the test images with Gaussian pixel noise,
labelled by class folder: a corruption study) and ``new_class/digits_6_9`` (the digits 6-9,
classes never trained on: a new-class study, no class folders needed). Images are 16 × 16
grey PNGs (the 8 × 8 digits upscaled).

    python examples/bring_your_own/make_dataset.py data/digits_folder
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image
from sklearn.datasets import load_digits

KNOWN = (0, 1, 2, 3, 4, 5)


def _save(image: np.ndarray, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.clip(image * 16.0, 0, 255).astype(np.uint8)
    Image.fromarray(pixels).resize((16, 16), Image.NEAREST).save(path)


def make_dataset(root: str | Path, *, seed: int = 0) -> Path:
    """Write the folder tree under ``root`` and return ``root``."""
    root = Path(root)
    rng = np.random.default_rng(seed)
    images, labels = load_digits(return_X_y=True)
    images = images.reshape(-1, 8, 8)
    order = rng.permutation(len(labels))
    n_train = int(0.75 * len(order))
    for rank, i in enumerate(order):
        label = int(labels[i])
        if label not in KNOWN:
            _save(images[i], root / "new_class" / "digits_6_9" / f"{i:04d}.png")
            continue
        split = "train" if rank < n_train else "test"
        _save(images[i], root / split / str(label) / f"{i:04d}.png")
        if split == "test":
            noisy = images[i] + rng.normal(0.0, 4.0, size=images[i].shape)
            _save(noisy, root / "shifts" / "noise" / str(label) / f"{i:04d}.png")
    return root


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    print(make_dataset(parser.parse_args().root))
