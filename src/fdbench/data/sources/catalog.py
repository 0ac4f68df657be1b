"""The catalogue of named image datasets: class names, splits, content checksums and the
generated (local) datasets."""

from __future__ import annotations

import hashlib

import numpy as np

from fdbench.data.types import ImageDataset

FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)


MNIST_CLASSES = tuple(str(d) for d in range(10))
#: Animal-MNIST's classes (label order of the PyPI package ``animal-mnist==0.4``).
ANIMAL_MNIST_CLASSES = (
    "bear",
    "bird",
    "cat",
    "cow",
    "dog",
    "elephant",
    "giraffe",
    "horse",
    "sheep",
    "zebra",
)


DIGITS_CLASSES = MNIST_CLASSES
#: Texture images bundled with scikit-image (no download), one class each.
TEXTURE_IMAGES = ("brick", "grass", "gravel", "moon", "cell")
TEXTURE_PATCH = 32


TEXTURE_PATCHES_PER_CLASS = 300
NOISE_CLASSES = ("gaussian", "uniform", "salt_and_pepper", "smooth")


NOISE_SIZE = 28
NOISE_PER_CLASS = 250


#: Fixed seeds of the generated datasets (the datasets are part of the benchmark definition).
_LOCAL_SEEDS = {"train": 20230101, "test": 20230102}
#: Fraction of scikit-learn's digits that forms the fixed test split (last images of each class).
DIGITS_TEST_FRACTION = 0.25
DATASETS: dict[str, tuple[str, ...]] = {
    "fashion_mnist": FASHION_MNIST_CLASSES,
    "mnist": MNIST_CLASSES,
    "animal_mnist": ANIMAL_MNIST_CLASSES,
    "digits": DIGITS_CLASSES,
    "textures": TEXTURE_IMAGES,
    "noise": NOISE_CLASSES,
}


SPLITS = ("train", "test")
#: Documented content of every dataset split: SHA-256 of the image bytes (uint8, C order)
#: followed by the label bytes (int64, little-endian), as :func:`content_sha256` computes it.
#: The downloaded datasets are the official files (their own SHA-256 are pinned in
#: :data:`fdbench.data.sources.fetching.SHA256`); the generated ones are part of the benchmark
#: definition, so a library update that changed them would show here.
CONTENT_SHA256: dict[str, dict[str, str]] = {
    "fashion_mnist": {
        "train": "1f243a60b4b748a44c48b9a6f6907be2a08bee3e4e226f0e86fbde8e147b745a",
        "test": "9a494dc49efeb996f4076c469b31cd058152067b1594ba6ab85dd739fce3775e",
    },
    "mnist": {
        "train": "d18cfd466eb143ac1097fde604dba9eec4116885869d04cc648b510949f9e88c",
        "test": "a0863a96c44e5666edbb30c4071ee79ca0514c621e6349c5967fc78e7305c891",
    },
    "animal_mnist": {
        "train": "2c07c898772210a85b96c2155252c52ab7b9cc60f7e6b929019d702e9a794004",
        "test": "0a8b55e94c573075c2386a3ec1d09817e1cb8a734a9794d4008798e3032d4772",
    },
    "digits": {
        "train": "0b49c6212b6882b94658116e7f7c21ea63cf976800892043fa8157d431ffbf22",
        "test": "ee376be1b3a3d5c23a4455c1a4cac34006de3a756d0f243645642b12d4ccb552",
    },
    "textures": {
        "train": "8650af411cdc6a6bae6ef84b660c4ba33e5af10c7d1f183ac77db072a534d6ae",
        "test": "cb2530577485ed833086b25130f17c6e9b0c681a4002695c856cff1cb7ed82fb",
    },
    "noise": {
        "train": "b45b1b8de0f0eaaeef738f93c0d289dadcb2ff6b46c42d53e7c83bc2d518a106",
        "test": "b5c7cf31ca361c0b11962da4a0e5e330ce69f3193c32fbd8b33063d3e4902eaf",
    },
}


def content_sha256(dataset: ImageDataset) -> str:
    """Hex SHA-256 of ``dataset``'s image bytes followed by its label bytes (see
    :data:`CONTENT_SHA256`)."""
    digest = hashlib.sha256(np.ascontiguousarray(dataset.images).tobytes())
    digest.update(np.ascontiguousarray(dataset.labels, dtype="<i8").tobytes())
    return digest.hexdigest()


def _split_last_per_class(labels: np.ndarray, fraction: float) -> np.ndarray:
    test = np.zeros(labels.shape[0], dtype=bool)
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        test[idx[len(idx) - round(fraction * len(idx)) :]] = True
    return test


def _digits() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = np.rint(bunch.images * (255.0 / 16.0)).astype(np.uint8)[..., None]
    labels = bunch.target.astype(np.int64)
    test = _split_last_per_class(labels, DIGITS_TEST_FRACTION)
    return {"train": (images[~test], labels[~test]), "test": (images[test], labels[test])}


def _textures() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    import skimage.data

    out = {}
    for split in SPLITS:
        rng = np.random.default_rng(_LOCAL_SEEDS[split])
        images, labels = [], []
        for label, texture in enumerate(TEXTURE_IMAGES):
            img = np.asarray(getattr(skimage.data, texture)(), dtype=np.uint8)
            half = img.shape[0] // 2
            rows = (0, half) if split == "train" else (half, img.shape[0])
            top = rng.integers(rows[0], rows[1] - TEXTURE_PATCH + 1, TEXTURE_PATCHES_PER_CLASS)
            left = rng.integers(0, img.shape[1] - TEXTURE_PATCH + 1, TEXTURE_PATCHES_PER_CLASS)
            win = np.lib.stride_tricks.sliding_window_view(img, (TEXTURE_PATCH, TEXTURE_PATCH))
            images.append(win[top, left])
            labels.append(np.full(TEXTURE_PATCHES_PER_CLASS, label, dtype=np.int64))
        out[split] = (np.concatenate(images)[..., None].copy(), np.concatenate(labels))
    return out


def _noise() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from scipy.ndimage import gaussian_filter

    out = {}
    shape = (NOISE_PER_CLASS, NOISE_SIZE, NOISE_SIZE, 1)
    for split in SPLITS:
        rng = np.random.default_rng(_LOCAL_SEEDS[split])
        gaussian = np.clip(rng.normal(0.5, 0.25, shape), 0, 1)
        uniform = rng.uniform(0, 1, shape)
        salt = (rng.uniform(0, 1, shape) < 0.5).astype(np.float64)
        smooth = gaussian_filter(rng.normal(0, 1, shape), sigma=(0, 2, 2, 0))
        smooth = (smooth - smooth.min(axis=(1, 2, 3), keepdims=True)) / np.ptp(
            smooth, axis=(1, 2, 3), keepdims=True
        )
        stack = np.concatenate([gaussian, uniform, salt, smooth])
        labels = np.repeat(np.arange(len(NOISE_CLASSES), dtype=np.int64), NOISE_PER_CLASS)
        out[split] = (np.rint(stack * 255).astype(np.uint8), labels)
    return out


_LOCAL_BUILDERS = {"digits": _digits, "textures": _textures, "noise": _noise}


def _build_local(name: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return _LOCAL_BUILDERS[name]()
