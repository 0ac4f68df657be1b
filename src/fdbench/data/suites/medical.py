"""Readers and experiments of the medical failure-detection testbed (Bernhardt et al., TMLR 2022).

Six data sets, read from the files a user already has under ``$FDBENCH_DATA`` (nothing is
downloaded): PathMNIST, OrganAMNIST and TissueMNIST from MedMNIST v2 (official ``.npz`` files,
official splits, MD5-verified), BUSI (breast ultrasound, three class folders), RSNA Pneumonia
(PNG export or DICOM, with the challenge's ``stage_2_train_labels.csv``) and EyePACS (Kaggle's
diabetic-retinopathy folders and CSVs, binarised and preprocessed as Band et al., 2021).
Authors' code: ``data_handling/`` of melanibe/failure_detection_benchmark.
"""

from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path

import numpy as np

from fdbench.core.provenance import record_read
from fdbench.data.sources import cache as _cache
from fdbench.data.sources.readers import read_medmnist
from fdbench.data.suites import register_builder
from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind

__all__ = [
    "MEDICAL_DATASETS",
    "MEDMNIST_MD5",
    "graham_preprocess",
    "medical_embedded_experiments",
    "medical_experiments",
    "read_busi",
    "read_eyepacs",
    "read_medmnist_file",
    "read_rsna_pneumonia",
    "stratified_split",
]

#: Official MD5s of the single-label 2-D MedMNIST files per image size, from the ``INFO`` dict of
#: the ``medmnist`` package 3.0.2 (``medmnist/info.py``; Zenodo record 10519652, whose 28 × 28
#: files are MedMNIST v2's).
MEDMNIST_MD5: dict[str, dict[int, str]] = {
    "pathmnist": {
        28: "a8b06965200029087d5bd730944a56c1",
        64: "55aa9c1e0525abe5a6b9d8343a507616",
        128: "ac42d08fb904d92c244187169d1fd1d9",
        224: "2c51a510bcdc9cf8ddb2af93af1eadec",
    },
    "dermamnist": {
        28: "0744692d530f8e62ec473284d019b0c7",
        64: "b70a2f5635c6199aeaa28c31d7202e1f",
        128: "2defd784463fa5243564e855ed717de1",
        224: "8974907d8e169bef5f5b96bc506ae45d",
    },
    "octmnist": {
        28: "c68d92d5b585d8d81f7112f81e2d0842",
        64: "e229e9440236b774d9f0dfef9d07bdaf",
        128: "0a97e76651ace45c5d943ee3f65b63ae",
        224: "abc493b6d529d5de7569faaef2773ba3",
    },
    "pneumoniamnist": {
        28: "28209eda62fecd6e6a2d98b1501bb15f",
        64: "8f4eceb4ccffa70c672198ea285246c6",
        128: "05b46931834c231683c68f40c47b2971",
        224: "d6a3c71de1b945ea11211b03746c1fe1",
    },
    "retinamnist": {
        28: "bd4c0672f1bba3e3a89f0e4e876791e4",
        64: "afda852cc34dcda56f86ad2b2457dbcc",
        128: "e48e916a24454daf90583d4e6efb1a18",
        224: "eae7e3b6f3fcbda4ae613ebdcbe35348",
    },
    "breastmnist": {
        28: "750601b1f35ba3300ea97c75c52ff8f6",
        64: "742edef2a1fd1524b2efff4bd7ba9364",
        128: "363e4b3f8d712e9b5de15470a2aaadf1",
        224: "b56378a6eefa9fed602bb16d192d4c8b",
    },
    "bloodmnist": {
        28: "7053d0359d879ad8a5505303e11de1dc",
        64: "2b94928a2ae4916078ca51e05b6b800b",
        128: "adace1e0ed228fccda1f39692059dd4c",
        224: "b718ff6835fcbdb22ba9eacccd7b2601",
    },
    "tissuemnist": {
        28: "ebe78ee8b05294063de985d821c1c34b",
        64: "123ece2eba09d0aa5d698fda57103344",
        128: "61b955355d7425a89687b06cca3ce0c2",
        224: "b077128c4a949f0a4eb01517f9037b9c",
    },
    "organamnist": {
        28: "68e3f8846a6bd62f0c9bf841c0d9eacc",
        64: "2dcccc29b88e6da5a01161ef20cda288",
        128: "eeae80d0a227a8d099027e1b3cfd3b60",
        224: "50747347e05c87dd3aaf92c49f9f3170",
    },
    "organcmnist": {
        28: "b9ceb9546e10131b32923c5bbeaea2b1",
        64: "3ce34a8724ea6f548e6db4744d03b6a9",
        128: "773c1f009daa3fe5d9a2a201b2a7ed94",
        224: "050f5e875dc056f6768abf94ec9995d1",
    },
    "organsmnist": {
        28: "9ab87b696fb54e2a387ebe992d6ed5f1",
        64: "53a6d115339d874c25e309a994ff46d3",
        128: "ded0c5fa01a95dc4978b956f613e9b8e",
        224: "b354719e553fbbb2513d5533f52a4cb1",
    },
}

_MEDMNIST_CLASSES = {
    "pathmnist": (
        "adipose", "background", "debris", "lymphocytes", "mucus", "smooth muscle",
        "normal colon mucosa", "cancer-associated stroma",
        "colorectal adenocarcinoma epithelium",
    ),
    "organamnist": (
        "bladder", "femur-left", "femur-right", "heart", "kidney-left", "kidney-right",
        "liver", "lung-left", "lung-right", "pancreas", "spleen",
    ),
    "tissuemnist": (
        "Collecting Duct, Connecting Tubule", "Distal Convoluted Tubule",
        "Glomerular endothelial cells", "Interstitial endothelial cells", "Leukocytes",
        "Podocytes", "Proximal Tubule Segments", "Thick Ascending Limb",
    ),
}  # fmt: skip

#: The testbed's data sets and where each is looked for under the data folder.
MEDICAL_DATASETS: dict[str, str] = {
    "pathmnist": "medmnist/pathmnist[_<size>].npz",
    "organamnist": "medmnist/organamnist[_<size>].npz",
    "tissuemnist": "medmnist/tissuemnist[_<size>].npz",
    "busi": "busi/{benign,malignant,normal}/*.png",
    "rsna_pneumonia": "rsna_pneumonia/stage_2_train_labels.csv + stage_2_train_images/",
    "eyepacs": "eyepacs/{trainLabels.csv, train/, retinopathy_solution.csv, test/}",
}

BUSI_CLASSES = ("normal", "benign", "malignant")
RSNA_CLASSES = ("no pneumonia", "pneumonia")
EYEPACS_CLASSES = ("non-referable (grade 0-1)", "referable (grade 2-4)")
SPLIT_FRACTIONS = (0.7, 0.1, 0.2)
_VERIFIED: dict[tuple[str, int, int], str] = {}


def _md5(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _VERIFIED:
        digest = hashlib.md5(usedforsecurity=False)
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                digest.update(block)
        _VERIFIED[key] = digest.hexdigest()
    return _VERIFIED[key]


def read_medmnist_file(
    name: str,
    split: str,
    *,
    size: int = 28,
    data_dir: str | os.PathLike | None = None,
    verify: bool = True,
) -> ImageDataset:
    """One official split of MedMNIST v2 file ``<name>.npz`` (size 28) or ``<name>_<size>.npz``.

    Looked for in ``<data_dir>/medmnist/`` (``data_dir`` defaults to ``$FDBENCH_DATA``, else
    ``~/.cache/fdbench``). With ``verify`` a file of :data:`MEDMNIST_MD5` must have its official
    MD5 (a mismatch raises :class:`~fdbench.data.sources.cache.CorruptedCacheError`); other names
    are read unverified. Splits are the official ``train``/``val``/``test`` (Yang et al., 2023).
    """
    if size not in (28, 64, 128, 224):
        raise ValueError(f"size must be 28, 64, 128 or 224; got {size}")
    file = f"{name}.npz" if size == 28 else f"{name}_{size}.npz"
    path = _cache.data_dir(data_dir) / "medmnist" / file
    if not path.is_file():
        raise FileNotFoundError(f"MedMNIST file {path} not found (official name {file})")
    expected = MEDMNIST_MD5.get(name, {}).get(size)
    if verify and expected is not None and _md5(path) != expected:
        raise _cache.CorruptedCacheError(
            f"{path}: MD5 {_md5(path)} differs from the official {expected}"
        )
    return read_medmnist(path, split, class_names=_MEDMNIST_CLASSES.get(name))


def _read_grey(path: Path, size: int) -> np.ndarray:
    from PIL import Image

    record_read(path)
    with Image.open(path) as im:
        grey = im.convert("L").resize((size, size), Image.BILINEAR)
        return np.asarray(grey, dtype=np.uint8)[..., None]


def read_busi(path: str | os.PathLike, *, size: int = 224) -> ImageDataset:
    """BUSI (Al-Dhabyani et al., 2020): ``normal/``, ``benign/``, ``malignant/`` folders of
    PNG scans; the ``*_mask*`` segmentation files are skipped. Labels normal 0, benign 1,
    malignant 2 (the authors' ``data_handling/busi.py``); grey images resized to
    ``size`` × ``size`` (224 in the paper). Files are read in sorted name order per class."""
    folder = Path(path).expanduser()
    images, labels = [], []
    for label, cls in enumerate(BUSI_CLASSES):
        sub = folder / cls
        if not sub.is_dir():
            raise FileNotFoundError(f"BUSI class folder {sub} does not exist")
        for f in sorted(sub.glob("*.png")):
            if "_mask" not in f.stem:
                images.append(_read_grey(f, size))
                labels.append(label)
    if not images:
        raise ValueError(f"no BUSI scans found under {folder}")
    return ImageDataset("busi", np.stack(images), np.asarray(labels, np.int64), BUSI_CLASSES)


def _rsna_labels(csv_path: Path) -> list[tuple[str, int]]:
    """(patientId, Target) once per patient, in the CSV's order (one row per box)."""
    seen: dict[str, int] = {}
    record_read(csv_path)
    with open(csv_path, newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"patientId", "Target"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{csv_path.name}: missing column(s) {sorted(missing)}")
        for row in reader:
            target = int(row["Target"])
            if target not in (0, 1):
                raise ValueError(f"{csv_path.name}: Target must be 0 or 1; got {target}")
            if seen.setdefault(row["patientId"], target) != target:
                raise ValueError(f"{csv_path.name}: patient {row['patientId']} has two Targets")
    return list(seen.items())


def _read_dicom(path: Path, size: int) -> np.ndarray:
    try:
        import pydicom
    except ImportError:
        raise ImportError(
            f"{path.name}: reading DICOM needs pydicom, which is not installed; export the "
            "scans to <patientId>.png (min-max scaled to 0..255) instead"
        ) from None
    from PIL import Image

    pixels = pydicom.dcmread(path).pixel_array.astype(np.float64)
    span = pixels.max() - pixels.min()
    scaled = (pixels - pixels.min()) * (255.0 / span if span else 0.0)
    grey = Image.fromarray(scaled.round().astype(np.uint8)).resize((size, size), Image.BILINEAR)
    return np.asarray(grey, dtype=np.uint8)[..., None]


def read_rsna_pneumonia(path: str | os.PathLike, *, size: int = 224) -> ImageDataset:
    """RSNA Pneumonia Detection (Shih et al., 2019), labels from ``stage_2_train_labels.csv``
    (``patientId,x,y,width,height,Target``; a patient with several boxes counted once) and the
    scans from ``stage_2_train_images/<patientId>.png`` (a PNG export) or ``.dcm`` (needs
    pydicom; min-max scaled to 0..255 as the authors' ``preprocessing_scripts.py``), grey,
    resized to ``size`` × ``size`` (224 in the paper)."""
    folder = Path(path).expanduser()
    labels_csv = folder / "stage_2_train_labels.csv"
    if not labels_csv.is_file():
        raise FileNotFoundError(f"RSNA label file {labels_csv} not found")
    scans = folder / "stage_2_train_images"
    images, labels = [], []
    for patient, target in _rsna_labels(labels_csv):
        png, dcm = scans / f"{patient}.png", scans / f"{patient}.dcm"
        if png.is_file():
            images.append(_read_grey(png, size))
        elif dcm.is_file():
            images.append(_read_dicom(dcm, size))
        else:
            raise FileNotFoundError(f"no scan {png.name} or {dcm.name} under {scans}")
        labels.append(target)
    if not images:
        raise ValueError(f"{labels_csv} lists no patient")
    return ImageDataset(
        "rsna_pneumonia", np.stack(images), np.asarray(labels, np.int64), RSNA_CLASSES
    )


def fundus_radius(image: np.ndarray) -> float:
    """Radius of the eye in a fundus photograph: half the number of pixels of the middle row
    whose channel sum exceeds a tenth of the row's mean; half the height when that is < 1
    (Graham's heuristic, as TensorFlow Datasets' ``_scale_radius_size``)."""
    row = image[image.shape[0] // 2].astype(np.float64).sum(axis=1)
    radius = np.count_nonzero(row > row.mean() / 10.0) / 2.0
    return radius if radius >= 1.0 else image.shape[0] / 2.0


def graham_preprocess(image: np.ndarray, *, radius: int = 300, size: int = 512) -> np.ndarray:
    """The preprocessing of the 2015 Kaggle diabetic-retinopathy winner (B. Graham), as Band et
    al. (2021) use it: scale the image so that the eye has radius ``radius`` px
    (:func:`fundus_radius`), subtract the local average colour (``4·x - 4·blur(x) + 128``, a
    Gaussian blur of σ = radius / 30, clipped to 0..255), set everything outside 90 % of the
    radius to grey 128 and crop to that circle; then resize to ``size`` × ``size`` (512 in
    Bernhardt et al.). Authors' ``data_handling/utils.py`` (after TensorFlow Datasets), with
    Pillow's bilinear resize and SciPy's Gaussian filter in place of OpenCV.
    """
    from PIL import Image
    from scipy.ndimage import gaussian_filter

    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3:
        raise TypeError("image must be a uint8 H×W×3 numpy array")
    scale = radius / fundus_radius(image)
    h, w = image.shape[:2]
    new_size = (max(1, round(w * scale)), max(1, round(h * scale)))
    scaled = np.asarray(Image.fromarray(image).resize(new_size, Image.BILINEAR), np.float64)
    blurred = gaussian_filter(scaled, sigma=(radius / 30, radius / 30, 0), mode="nearest")
    local = np.clip(np.round(4.0 * scaled - 4.0 * blurred + 128.0), 0, 255)
    rows, cols = local.shape[:2]
    cy, cx, r = rows // 2, cols // 2, int(radius * 0.9)
    yy, xx = np.ogrid[:rows, :cols]
    local[(yy - cy) ** 2 + (xx - cx) ** 2 > r**2] = 128.0
    crop = local[max(cy - r, 0) : min(cy + r, rows), max(cx - r, 0) : min(cx + r, cols)]
    out = Image.fromarray(crop.astype(np.uint8)).resize((size, size), Image.BILINEAR)
    return np.asarray(out, dtype=np.uint8)


def read_eyepacs(
    path: str | os.PathLike, split: str = "train", *, size: int = 512, radius: int = 300
) -> ImageDataset:
    """EyePACS (Kaggle diabetic-retinopathy detection) with :func:`graham_preprocess`.

    ``train``: ``train/<image>.jpeg`` with ``trainLabels.csv`` (``image,level``); ``val`` and
    ``test``: ``test/<image>.jpeg`` with ``retinopathy_solution.csv`` (``image,level,Usage``),
    the ``Public`` rows as validation and the ``Private`` rows as test (the authors'
    ``data_handling/diabetic_retino.py``: 35 126 / 10 906 / 42 670 images). Labels binarised
    as Band et al.: grades {2, 3, 4} (referable) → 1, {0, 1} → 0. (The authors' code codes
    the reverse, ``int(level <= 1)``; here the positive class of the binary protocol is the
    referable one.)
    """
    from PIL import Image

    folder = Path(path).expanduser()
    if split == "train":
        table, images_dir, usage = folder / "trainLabels.csv", folder / "train", None
    elif split in ("val", "test"):
        table, images_dir = folder / "retinopathy_solution.csv", folder / "test"
        usage = "Public" if split == "val" else "Private"
    else:
        raise ValueError(f"split must be 'train', 'val' or 'test'; got {split!r}")
    if not table.is_file():
        raise FileNotFoundError(f"EyePACS label file {table} not found")
    images, labels = [], []
    record_read(table)
    with open(table, newline="") as fh:
        for row in csv.DictReader(fh):
            if usage is not None and row.get("Usage") != usage:
                continue
            level = int(row["level"])
            if level not in range(5):
                raise ValueError(f"{table.name}: level must be 0..4; got {level}")
            record_read(images_dir / f"{row['image']}.jpeg")
            with Image.open(images_dir / f"{row['image']}.jpeg") as im:
                rgb = np.asarray(im.convert("RGB"), dtype=np.uint8)
            images.append(graham_preprocess(rgb, radius=radius, size=size))
            labels.append(int(level >= 2))
    if not images:
        raise ValueError(f"{table} lists no image for split {split!r}")
    return ImageDataset("eyepacs", np.stack(images), np.asarray(labels, np.int64), EYEPACS_CLASSES)


def stratified_split(
    labels: np.ndarray, *, seed: int = 42, fractions: tuple[float, float, float] = SPLIT_FRACTIONS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted train/val/test indices, per class a seeded permutation cut at ``fractions``.

    70/10/20 by default, as the paper for RSNA and BUSI. The authors' code differs in detail:
    BUSI cuts each class in file order without shuffling (``busi.py``), RSNA draws 20 % test
    then 10 % of the rest as validation with ``random_state=42`` (``rsna_pneumonia.py``).
    """
    y = np.asarray(labels)
    if len(fractions) != 3 or min(fractions) < 0 or not np.isclose(sum(fractions), 1.0):
        raise ValueError(
            f"fractions must be three non-negative numbers summing to 1; got {fractions}"
        )
    rng = np.random.default_rng(seed)
    parts: tuple[list[np.ndarray], ...] = ([], [], [])
    for cls in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == cls))
        n_train = round(fractions[0] * idx.size)
        n_val = round(fractions[1] * idx.size)
        for part, chunk in zip(parts, np.split(idx, [n_train, n_train + n_val]), strict=True):
            part.append(chunk)
    train, val, test = (np.sort(np.concatenate(p)) for p in parts)
    return train, val, test


def _experiment(
    name: str, train: ImageDataset, val: ImageDataset, test: ImageDataset
) -> Experiment:
    return Experiment(
        name=name,
        class_names=train.class_names,
        train=train,
        val=val,
        studies=(Study("iid", StudyKind.IID, test.images, test.labels),),
    )


@register_builder("medical_experiments")
def medical_experiments(
    *,
    dataset: str,
    data_dir: str | os.PathLike | None = None,
    size: int | None = None,
    seed: int = 42,
) -> list[Experiment]:
    """The testbed experiment on ``dataset`` (one of :data:`MEDICAL_DATASETS`), read from disk.

    In-domain failure detection only: train, validation and one ``iid`` test study. MedMNIST
    and EyePACS use their official splits; BUSI and RSNA :func:`stratified_split` (70/10/20,
    ``seed``). ``size``: MedMNIST's file size (default 28), else the resized side (default 224
    for BUSI and RSNA, 512 for EyePACS, as the paper). Files are looked for under ``data_dir``
    (default ``$FDBENCH_DATA``, else ``~/.cache/fdbench``) in the layouts of
    :data:`MEDICAL_DATASETS`.
    """
    if dataset not in MEDICAL_DATASETS:
        raise ValueError(f"dataset must be one of {sorted(MEDICAL_DATASETS)}; got {dataset!r}")
    root = _cache.data_dir(data_dir)
    if dataset in _MEDMNIST_CLASSES:
        parts = [
            read_medmnist_file(dataset, s, size=size or 28, data_dir=data_dir)
            for s in ("train", "val", "test")
        ]
        return [_experiment(dataset, *parts)]
    if dataset == "eyepacs":
        parts = [
            read_eyepacs(root / "eyepacs", s, size=size or 512) for s in ("train", "val", "test")
        ]
        return [_experiment(dataset, *parts)]
    reader = read_busi if dataset == "busi" else read_rsna_pneumonia
    full = reader(root / dataset, size=size or 224)
    train, val, test = stratified_split(full.labels, seed=seed)
    return [_experiment(dataset, full.subset(train), full.subset(val), full.subset(test))]


#: Fashion-MNIST classes that form the positive class of the embedded binary task.
SHIRT_LIKE = (0, 2, 4, 6)  # T-shirt/top, Pullover, Coat, Shirt
_EMBEDDED_CAPS = {False: (None, None), True: (4_000, 1_000)}


@register_builder("medical_embedded_experiments")
def medical_embedded_experiments(
    *, seed: int = 0, quick: bool = False, data_dir: str | os.PathLike | None = None
) -> list[Experiment]:
    """The embedded stand-in of the testbed, runnable without medical data (Fashion-MNIST).

    ``embedded_multiclass``: the 10 classes; ``embedded_binary``: upper-body garments
    (:data:`SHIRT_LIKE`: T-shirt/top, pullover, coat, shirt) = 1 against the rest = 0, for the
    binary protocol. In-domain only, as the testbed: a seeded 10 % validation split of the
    official training set and one ``iid`` study from the official test set. ``quick`` caps
    training at 4000 images (before the validation split) and the test study at 1000.
    """
    from fdbench.data.sources.datasets import load_dataset
    from fdbench.data.suites.fashion_mnist import _sub_rng, _take, _train_val

    train_set = load_dataset("fashion_mnist", "train", data_dir=data_dir)
    test_set = load_dataset("fashion_mnist", "test", data_dir=data_dir)
    n_train, n_test = _EMBEDDED_CAPS[bool(quick)]
    binary_names = ("other garment", "upper-body garment")
    out = []
    for name, names, relabel in (
        ("embedded_multiclass", train_set.class_names, lambda y: y),
        ("embedded_binary", binary_names, lambda y: np.isin(y, SHIRT_LIKE).astype(np.int64)),
    ):
        train, val = _train_val(
            name,
            train_set.images,
            relabel(train_set.labels),
            tuple(names),
            n_train,
            _sub_rng(seed, "train_val"),
        )
        keep = _take(test_set.labels.size, n_test, _sub_rng(seed, "iid"))
        test = ImageDataset(name, test_set.images[keep], relabel(test_set.labels[keep]), names)
        out.append(_experiment(name, train, val, test))
    return out
