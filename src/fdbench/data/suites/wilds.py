"""CAMELYON-17-WILDS and iWildCam-2020-WILDS read from the WILDS on-disk layout (FD-Shifts).

The ``wilds`` package (Koh et al., ICML 2021) extracts its archives into
``<root>/camelyon17_v1.0/`` and ``<root>/iwildcam_v2.0/``; these readers read those folders
without depending on ``wilds``. FD-Shifts (Jaeger et al., ICLR 2023, Appendix E.1 and Table 3)
trains on the official ``train`` split, takes the in-distribution test split (CAMELYON's
``id_val``, iWildCam's ``id_test``) as its i.i.d. test set, the first 1000 of which form the
validation split (``val_split=devries`` in ``fd_shifts/loaders/data_loader.py``), and tests the
official out-of-distribution ``test`` split (new hospitals, new camera traps) as the sub-class
(domain) shift (``wilds_camelyon_query_config``/``wilds_animals_query_config`` in
``fd_shifts/experiments/configs.py``; ``WILDSCamelyon``/``WILDSAnimals`` in
``fd_shifts/loaders/dataset_collection.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fdbench.data.shifts.splits import relabel
from fdbench.data.sources import cache as _cache
from fdbench.data.suites import register_builder
from fdbench.data.suites._fdshifts_args import check_reader_args
from fdbench.data.suites.fashion_mnist import _sub_rng, _take
from fdbench.data.suites.fdshifts import FDSHIFTS_N_VAL, _openset_draw
from fdbench.data.suites.kim_readers import load_images, resize_to
from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind

__all__ = [
    "CAMELYON_FOLDER",
    "CAMELYON_SPLITS",
    "CAMELYON_URL",
    "IWILDCAM_FOLDER",
    "IWILDCAM_SPLITS",
    "IWILDCAM_URL",
    "WildsTable",
    "fdshifts_camelyon_experiments",
    "fdshifts_iwildcam_experiments",
    "read_camelyon17_metadata",
    "read_iwildcam_metadata",
]

CAMELYON_FOLDER = "camelyon17_v1.0"
CAMELYON_URL = (
    "https://wilds.stanford.edu (wilds.get_dataset('camelyon17', download=True), or the archive "
    "https://worksheets.codalab.org/rest/bundles/0xe45e15f39fb54e9d9e919556af67aabe/contents/blob/)"
)
#: CAMELYON-17-WILDS split codes of ``metadata.csv`` (``Camelyon17Dataset._split_dict`` of the
#: ``wilds`` package); ``wilds`` overwrites the codes of hospital 1 with ``val`` and of
#: hospital 2 with ``test`` when it loads the file, as :func:`read_camelyon17_metadata` does.
CAMELYON_SPLITS = {"train": 0, "id_val": 1, "test": 2, "val": 3}
#: The hospitals (``center``) of WILDS' OOD validation and test splits.
CAMELYON_VAL_CENTER, CAMELYON_TEST_CENTER = 1, 2
CAMELYON_CLASSES = ("normal", "tumor")
CAMELYON_COLUMNS = ("patient", "node", "x_coord", "y_coord", "tumor", "center", "split")

IWILDCAM_FOLDER = "iwildcam_v2.0"
IWILDCAM_URL = (
    "https://wilds.stanford.edu (wilds.get_dataset('iwildcam', download=True), or the archive "
    "https://worksheets.codalab.org/rest/bundles/0x6313da2b204647e79a14b468131fcd64/contents/blob/)"
)
#: iWildCam-2020-WILDS split names of ``metadata.csv`` (``IWildCamDataset._split_dict``).
IWILDCAM_SPLITS = ("train", "val", "test", "id_val", "id_test")
IWILDCAM_COLUMNS = ("split", "y", "filename", "location_remapped")

#: FD-Shifts' seed of the shuffle of CAMELYON's ``id_val`` split before the validation carve-out
#: (``WILDSCamelyon.get_subset`` in ``fd_shifts/loaders/dataset_collection.py``).
CAMELYON_SHUFFLE_SEED = 12345


@dataclass(frozen=True)
class WildsTable:
    """The samples of one WILDS data set: image paths, labels, split names and domains.

    ``paths`` are absolute image paths, ``labels`` int64 class indices into ``class_names``,
    ``splits`` the split name of every sample and ``domains`` its hospital (CAMELYON) or
    camera trap (iWildCam), all in ``metadata.csv`` order.
    """

    name: str
    paths: list[Path]
    labels: np.ndarray
    splits: np.ndarray
    domains: np.ndarray
    class_names: tuple[str, ...]

    def indices(self, split: str) -> np.ndarray:
        """Row indices (metadata order) of the samples of ``split``."""
        return np.flatnonzero(self.splits == split)

    def read(self, index: np.ndarray, size: int) -> ImageDataset:
        """The images at ``index`` read as RGB and resized to ``size`` × ``size`` (bilinear,
        torchvision's ``Resize((size, size))``), with their labels."""
        index = np.asarray(index, dtype=np.int64)
        if index.size == 0:
            images = np.zeros((0, size, size, 3), np.uint8)
        else:
            missing = [str(self.paths[i]) for i in index[:1000] if not self.paths[i].is_file()]
            if missing:
                raise FileNotFoundError(
                    f"{self.name}: image files listed in metadata.csv are missing, e.g. "
                    f"{missing[0]} ({len(missing)} of the first {min(index.size, 1000)} checked)"
                )
            images = load_images([self.paths[i] for i in index], resize_to(size))
        return ImageDataset(self.name, images, self.labels[index].copy(), self.class_names)


def _read_csv(path: Path, columns: tuple[str, ...], url: str, **kwargs) -> pd.DataFrame:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing (from {url})")
    try:
        frame = pd.read_csv(path, **kwargs)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not a readable CSV file ({error})") from None
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise ValueError(f"{path}: missing column(s) {absent}; expected at least {list(columns)}")
    return frame


def _integers(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce")
    if values.isna().any() or (values % 1 != 0).any():
        row = int(np.flatnonzero(values.isna() | (values % 1 != 0))[0])
        raise ValueError(
            f"{path}: column {column!r} must hold integers; row {row} holds "
            f"{frame[column].iloc[row]!r}"
        )
    return values.to_numpy().astype(np.int64)


def read_camelyon17_metadata(root: str | os.PathLike) -> WildsTable:
    """The samples of CAMELYON-17-WILDS under ``root/camelyon17_v1.0`` (Koh et al., 2021).

    ``metadata.csv`` (columns ``patient, node, x_coord, y_coord, tumor, center, split``, an
    unnamed index column first) names one 96 × 96 patch per row, stored as
    ``patches/patient_<ppp>_node_<n>/patch_patient_<ppp>_node_<n>_x_<x>_y_<y>.png`` (``ppp``
    the zero-padded patient number); the label is ``tumor`` (0 normal, 1 tumour). As the
    ``wilds`` package does on loading, the split code of every patch from hospital 1 becomes
    ``val`` and from hospital 2 ``test`` (:data:`CAMELYON_SPLITS`); the others keep their
    ``train`` (0) or ``id_val`` (1) code. ``domains`` are the hospitals.
    """
    folder = Path(root) / CAMELYON_FOLDER
    path = folder / "metadata.csv"
    frame = _read_csv(path, CAMELYON_COLUMNS, CAMELYON_URL, index_col=0, dtype=str)
    ints = {c: _integers(frame, c, path) for c in CAMELYON_COLUMNS}
    if not np.isin(ints["tumor"], (0, 1)).all():
        raise ValueError(f"{path}: column 'tumor' must hold 0 or 1")
    codes = ints["split"].copy()
    codes[ints["center"] == CAMELYON_VAL_CENTER] = CAMELYON_SPLITS["val"]
    codes[ints["center"] == CAMELYON_TEST_CENTER] = CAMELYON_SPLITS["test"]
    names = {v: k for k, v in CAMELYON_SPLITS.items()}
    if not np.isin(codes, list(names)).all():
        raise ValueError(f"{path}: column 'split' must hold codes in {sorted(names)}")
    paths = []
    for p, n, x, y in zip(
        ints["patient"], ints["node"], ints["x_coord"], ints["y_coord"], strict=True
    ):
        stem = f"patient_{p:03d}_node_{n}"
        paths.append(folder / "patches" / stem / f"patch_{stem}_x_{x}_y_{y}.png")
    splits = np.asarray([names[c] for c in codes], dtype=object)
    return WildsTable("camelyon17", paths, ints["tumor"], splits, ints["center"], CAMELYON_CLASSES)


def read_iwildcam_metadata(root: str | os.PathLike) -> WildsTable:
    """The samples of iWildCam-2020-WILDS under ``root/iwildcam_v2.0`` (Koh et al., 2021).

    ``metadata.csv`` (columns ``split, y, filename, location_remapped`` among others) names one
    image per row, stored as ``train/<filename>``; ``split`` is one of
    :data:`IWILDCAM_SPLITS`, ``y`` the class and ``location_remapped`` the camera trap (the
    domain). ``categories.csv`` (columns ``y, name``) names the classes; as in the ``wilds``
    package the label space has ``max(y) + 1`` classes (182 in v2.0), some of which never occur
    in training, and FD-Shifts keeps all of them as outputs (``num_classes=182`` in
    ``wilds_animals_data_config``; class names from ``categories.csv`` as ``WILDSAnimals``).
    """
    folder = Path(root) / IWILDCAM_FOLDER
    path = folder / "metadata.csv"
    frame = _read_csv(path, IWILDCAM_COLUMNS, IWILDCAM_URL, dtype=str, keep_default_na=False)
    labels = _integers(frame, "y", path)
    domains = _integers(frame, "location_remapped", path)
    splits = frame["split"].to_numpy(dtype=object)
    bad = sorted(set(splits) - set(IWILDCAM_SPLITS))
    if bad:
        raise ValueError(f"{path}: column 'split' must hold {IWILDCAM_SPLITS}; found {bad[:5]}")
    if labels.size == 0 or labels.min() < 0:
        raise ValueError(f"{path}: column 'y' must hold class indices >= 0 (and one row at least)")
    cat_path = folder / "categories.csv"
    categories = _read_csv(cat_path, ("y", "name"), IWILDCAM_URL, dtype=str, keep_default_na=False)
    ys = _integers(categories, "y", cat_path)
    n_classes = int(labels.max()) + 1
    by_y = dict(zip(ys.tolist(), categories["name"].tolist(), strict=True))
    absent = [y for y in range(n_classes) if y not in by_y]
    if absent:
        raise ValueError(f"{cat_path}: no name for class(es) y = {absent[:5]} of metadata.csv")
    class_names = tuple(by_y[y] for y in range(n_classes))
    paths = [folder / "train" / f for f in frame["filename"]]
    return WildsTable("iwildcam", paths, labels, splits, domains, class_names)


def _val_iid(index: np.ndarray, name: str, n_val: int) -> tuple[np.ndarray, np.ndarray]:
    if index.size <= n_val:
        raise ValueError(
            f"{name}: the in-distribution test split must hold more than {n_val} "
            f"images (the first {n_val} are the validation split); got {index.size}"
        )
    return index[:n_val], index[n_val:]


@register_builder("fdshifts_camelyon_experiments")
def fdshifts_camelyon_experiments(
    *,
    data_dir: str | os.PathLike | None = None,
    seed: int = 0,
    image_size: int = 96,
    max_train: int | None = None,
    max_per_study: int | None = None,
    n_val: int = FDSHIFTS_N_VAL,
) -> list[Experiment]:
    """FD-Shifts' CAMELYON-17-WILDS experiment (Jaeger et al., ICLR 2023), read from disk.

    Data: ``<data_dir>/camelyon17_v1.0`` (:func:`read_camelyon17_metadata`; ``data_dir``
    default ``$FDBENCH_DATA``, else ``~/.cache/fdbench``). Two classes (normal, tumour), images
    96 × 96 (``image_size`` resizes them). Trained on the official ``train`` split (hospitals 0,
    3, 4; 302 436 patches); the in-distribution ``id_val`` split (33 560 patches of the same
    hospitals) is shuffled with ``numpy.random.default_rng(12345).permutation`` as FD-Shifts'
    ``WILDSCamelyon.get_subset`` does, its first 1000 patches are the validation split and the
    remaining 32 560 the ``iid`` study; ``subclass`` is the official OOD ``test`` split
    (hospital 2, 85 054 patches), the domain shift that FD-Shifts' Table 1 reports as "sub".

    ``max_train`` keeps a seeded subset of that many training images (``None``: all, as the
    paper); ``max_per_study`` caps each study at a seeded subset; ``n_val`` is the size of the
    validation split (FD-Shifts: 1000). A missing or malformed file
    raises one ``FileNotFoundError``/``ValueError`` naming it and where to get the data.
    """
    check_reader_args(max_per_study, max_train, image_size, n_val)
    root = _cache.data_dir(data_dir)
    table = read_camelyon17_metadata(root)
    train_idx = table.indices("train")
    train_idx = train_idx[_take(train_idx.size, max_train, _sub_rng(seed, "train"))]
    id_val = np.random.default_rng(CAMELYON_SHUFFLE_SEED).permutation(table.indices("id_val"))
    val_idx, iid_idx = _val_iid(id_val, "camelyon17 id_val", n_val)
    iid_idx = iid_idx[_take(iid_idx.size, max_per_study, _sub_rng(seed, "iid"))]
    ood_idx = table.indices("test")
    ood_idx = ood_idx[_take(ood_idx.size, max_per_study, _sub_rng(seed, "subclass"))]
    train = table.read(train_idx, image_size)
    val = table.read(val_idx, image_size)
    iid, ood = table.read(iid_idx, image_size), table.read(ood_idx, image_size)
    studies = (
        Study("iid", StudyKind.IID, iid.images, iid.labels),
        Study("subclass", StudyKind.SUBCLASS, ood.images, ood.labels),
    )
    return [Experiment("camelyon17", table.class_names, train, val, studies)]


@register_builder("fdshifts_iwildcam_experiments")
def fdshifts_iwildcam_experiments(
    *,
    data_dir: str | os.PathLike | None = None,
    seed: int = 0,
    image_size: int = 448,
    max_train: int | None = None,
    max_per_study: int | None = None,
    n_val: int = FDSHIFTS_N_VAL,
    openset: bool = False,
    run_seed: int | None = None,
) -> list[Experiment]:
    """FD-Shifts' iWildCam-2020-WILDS experiments (Jaeger et al., ICLR 2023), read from disk.

    Data: ``<data_dir>/iwildcam_v2.0`` (:func:`read_iwildcam_metadata`). Images are resized to
    ``image_size`` × ``image_size`` (448, FD-Shifts' ``wilds_animals_data_config``). The
    in-distribution test split ``id_test`` (8 154 images of the training camera traps) gives
    the validation split (its first 1000 images, in metadata order: FD-Shifts' ``devries``
    split does not shuffle it) and the ``iid`` study (the other 7 154).

    - ``openset=False``: experiment ``iwildcam``, all ``max(y) + 1`` classes (182) as outputs,
      trained on the official ``train`` split (129 809 images) with the natural class
      frequencies: FD-Shifts applies no class-imbalance correction here
      (``balanced_sampeling`` defaults to false in ``fd_shifts/configs/__init__.py``; its
      ``WeightedRandomSampler`` branch in ``fd_shifts/loaders/data_loader.py`` is for the
      medical data sets). Studies ``iid`` and ``subclass``: the official OOD ``test`` split
      (new camera traps, 42 791 images), labelled with their class (Table 1's "sub").
    - ``openset=True``: experiment ``iwildcam_openset``, the semantic new-class study (paper,
      Appendix E.1: 40 % of the classes held out, each run its own draw). The held-out classes
      are :func:`~fdbench.data.shifts.splits.semantic_split` of the ``max(y) + 1`` classes, a
      function of ``run_seed`` (``seed`` when None) recorded in ``Experiment.split``; training keeps
      the ``train`` images of the other classes (relabelled 0..K−1), validation and ``iid`` the
      ``id_test`` images of those classes, ``new_class/semantic`` the ``id_test`` images of the
      held-out classes (label −1; Table 1's "s-ncs"). FD-Shifts removes the held-out classes
      from ``train`` only (``WILDSAnimalsOpenSet``) and masks their outputs at evaluation
      (``holdout_classes`` in ``fd_shifts/analysis/__init__.py``); here the network has K
      outputs, which gives the same softmax over the trained classes.

    ``max_train``/``max_per_study``/``n_val`` as in :func:`fdshifts_camelyon_experiments`.
    """
    check_reader_args(max_per_study, max_train, image_size, n_val)
    if not isinstance(openset, bool):
        raise TypeError(f"openset must be a bool; got {type(openset).__name__}")
    if run_seed is not None and (not isinstance(run_seed, int | np.integer) or run_seed < 0):
        raise ValueError(f"run_seed must be None or an int ≥ 0; got {run_seed!r}")
    root = _cache.data_dir(data_dir)
    table = read_iwildcam_metadata(root)
    train_idx, id_test = table.indices("train"), table.indices("id_test")
    if not openset:
        val_idx, iid_idx = _val_iid(id_test, "iwildcam id_test", n_val)
        train_idx = train_idx[_take(train_idx.size, max_train, _sub_rng(seed, "train"))]
        iid_idx = iid_idx[_take(iid_idx.size, max_per_study, _sub_rng(seed, "iid"))]
        ood_idx = table.indices("test")
        ood_idx = ood_idx[_take(ood_idx.size, max_per_study, _sub_rng(seed, "subclass"))]
        train, val = table.read(train_idx, image_size), table.read(val_idx, image_size)
        iid, ood = table.read(iid_idx, image_size), table.read(ood_idx, image_size)
        studies = (
            Study("iid", StudyKind.IID, iid.images, iid.labels),
            Study("subclass", StudyKind.SUBCLASS, ood.images, ood.labels),
        )
        return [Experiment("iwildcam", table.class_names, train, val, studies)]

    known, held_out, class_names, split = _openset_draw(
        "iwildcam", table.class_names, seed, run_seed
    )
    train_idx = train_idx[np.isin(table.labels[train_idx], known)]
    train_idx = train_idx[_take(train_idx.size, max_train, _sub_rng(seed, "train"))]
    inlier = id_test[np.isin(table.labels[id_test], known)]
    val_idx, iid_idx = _val_iid(inlier, "iwildcam id_test (training classes)", n_val)
    iid_idx = iid_idx[_take(iid_idx.size, max_per_study, _sub_rng(seed, "iid"))]
    held = id_test[np.isin(table.labels[id_test], held_out)]
    held = held[_take(held.size, max_per_study, _sub_rng(seed, "new_class/semantic"))]

    def read(index: np.ndarray) -> ImageDataset:
        ds = table.read(index, image_size)
        return ImageDataset("iwildcam", ds.images, relabel(ds.labels, known), class_names)

    train, val, iid = read(train_idx), read(val_idx), read(iid_idx)
    outlier = table.read(held, image_size)
    studies = (
        Study("iid", StudyKind.IID, iid.images, iid.labels),
        Study(
            "new_class/semantic",
            StudyKind.NEW_CLASS_SEMANTIC,
            outlier.images,
            np.full(held.size, -1, np.int64),
        ),
    )
    return [Experiment("iwildcam_openset", class_names, train, val, studies, split)]
