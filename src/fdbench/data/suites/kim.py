"""Kim et al.'s CIFAR and ImageNet unknown-detection benchmarks as fdbench experiments.

Three builders for data on disk (Kim, Koo & Hwang, Expert Systems with Applications 2023,
Section 3; code github.com/daintlab/unknown-detection-benchmarks):

- :func:`kim_released_experiments`: the authors' released benchmark folders.
- :func:`kim_cifar100_experiments`: the CIFAR benchmark built from the official files.
- :func:`kim_imagenet_experiments`: the ImageNet benchmark built from ImageNet's class folders.

Near-OoD sets become ``near_ood/<set>`` studies of kind ``near_ood`` and far-OoD sets
``far_ood/<set>`` of kind ``far_ood`` (every sample labelled −1). The external
set (Outlier Exposure's outliers, ODIN's and OpenMax's tuning data) is not a study; its classes
and every class a WordNet rule removed are recorded in ``Experiment.split`` (written to each
run's ``split.json``) and logged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from fdbench.data.shifts.splits import relabel
from fdbench.data.sources import cache as _cache
from fdbench.data.sources.readers import read_cifar100, read_svhn
from fdbench.data.sources.wordnet import WordNet, load_wordnet
from fdbench.data.suites import register_builder
from fdbench.data.suites.fashion_mnist import _sub_rng, _take
from fdbench.data.suites.kim_construction import (
    CIFAR100_WNIDS,
    imagenet_split,
    remove_imagenet_overlaps,
    remove_name_matches,
    remove_wnid_overlaps,
    tiny_imagenet_wnids,
)
from fdbench.data.suites.kim_readers import (
    KIM_BENCHMARKS,
    class_folders,
    read_class_folders,
    read_dtd,
    read_places365_val,
    read_released_set,
    released_set_folder,
    resize_center_crop,
    resize_to,
)
from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind

_log = logging.getLogger(__name__)

#: Far-OoD sets of :func:`kim_cifar100_experiments`: folder under the data dir and how to get it.
KIM_CIFAR_FAR_OOD: dict[str, tuple[str, str]] = {
    "svhn": ("svhn", "test_32x32.mat from http://ufldl.stanford.edu/housenumbers/"),
    "lsun_fix": ("LSUN_fix", "`fdbench data prepare-fix` on LSUN images (or CSI's LSUN_fix)"),
    "dtd": ("dtd", "https://www.robots.ox.ac.uk/~vgg/data/dtd/ (dtd/images/<texture>/)"),
}
#: Far-OoD sets of :func:`kim_imagenet_experiments` (official archive layouts).
KIM_IMAGENET_FAR_OOD: dict[str, tuple[str, str]] = {
    "food101": ("food-101", "food-101.tar.gz (food-101/images/<class>/)"),
    "caltech256": ("256_ObjectCategories", "256_ObjectCategories.tar (<nnn.class>/)"),
    "places365": ("places365", "val_256.tar, categories_places365.txt, places365_val.txt"),
}
#: Keyword variations of far-OoD class names that no rule derives (Kim et al., Table 4).
KIM_VARIATIONS: dict[str, tuple[str, ...]] = {
    "chimp": ("chimpanzee",),
    "head-phones": ("headphone", "headphones"),
    "hot_dog": ("hotdog",),
    "dumb-bell": ("dumbbell",),
    "chess-board": ("chessboard",),
    "barndoor": ("barn door",),
    "fishpond": ("fish pond",),
    "shopfront": ("shop front",),
}
#: Validation images per CIFAR-40 class carved from the training images (18 000 + 2000).
KIM_CIFAR_VAL_PER_CLASS = 50


def _ood_study(name: str, role: str, images: np.ndarray, cap: int | None, seed: int) -> Study:
    keep = _take(images.shape[0], cap, _sub_rng(seed, f"{role}/{name}"))
    return Study(f"{role}/{name}", StudyKind(role), images[keep], np.full(keep.size, -1, np.int64))


def _check_cap(max_per_study: int | None) -> None:
    if max_per_study is not None and (not isinstance(max_per_study, int) or max_per_study < 1):
        raise ValueError(f"max_per_study must be None or an int ≥ 1; got {max_per_study!r}")


@register_builder("kim_released_experiments")
def kim_released_experiments(
    *,
    benchmark: str = "cifar",
    data_dir: str | os.PathLike | None = None,
    sets: Sequence[str] | None = None,
    max_per_study: int | None = None,
    max_per_class: int | None = None,
    seed: int = 0,
) -> list[Experiment]:
    """Kim et al.'s benchmark from the authors' released folders under ``data_dir``
    (``cifar-bench/`` or ``imagenet-bench/``, layout of their README and ``dataloader.py``).

    Training: ``train/<in-distribution set>``; validation: ``valid/<…>/labels``; ``iid`` study:
    ``test/<…>/labels``; one study per OoD set in ``sets`` (default: every test set of
    :data:`~fdbench.data.suites.kim_readers.KIM_CIFAR_SETS` / ``KIM_IMAGENET_SETS``), read from
    ``test/<set>/no-labels``. An unknown set name is a ``ValueError`` listing the recognised
    ones; missing folders one ``FileNotFoundError`` naming them all. ``max_per_class`` caps the
    in-distribution images read per class, ``max_per_study`` the OoD studies.
    """
    if benchmark not in KIM_BENCHMARKS:
        raise ValueError(f"benchmark must be one of {sorted(KIM_BENCHMARKS)}; got {benchmark!r}")
    _check_cap(max_per_study)
    known = KIM_BENCHMARKS[benchmark][1]
    ind = next(n for n, (role, _) in known.items() if role == "in_distribution")
    ood = [n for n, (role, modes) in known.items() if role != "in_distribution" and "test" in modes]
    chosen = list(ood if sets is None else sets)
    unknown = [s for s in chosen if s not in ood]
    if unknown:
        raise ValueError(
            f"unknown {benchmark} test set(s) {unknown}; recognised sets: {', '.join(ood)}"
        )
    root = _cache.data_dir(data_dir)
    folders = [released_set_folder(root, benchmark, m, ind) for m in ("train", "valid", "test")]
    folders += [released_set_folder(root, benchmark, "test", s) for s in chosen]
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        raise FileNotFoundError(
            f"Kim et al.'s released {benchmark} benchmark is missing under {root}: "
            + ", ".join(missing)
            + " (download link in github.com/daintlab/unknown-detection-benchmarks README)"
        )
    train = read_released_set(root, benchmark, "train", ind, max_per_class=max_per_class)
    val = read_released_set(root, benchmark, "valid", ind, max_per_class=max_per_class)
    test = read_released_set(root, benchmark, "test", ind, max_per_class=max_per_class)
    for part in (val, test):
        if part.class_names != train.class_names:
            raise ValueError(f"{ind}: valid/test class folders differ from train's")
    studies = [Study("iid", StudyKind.IID, test.images, test.labels)]
    for s in chosen:
        images = read_released_set(root, benchmark, "test", s).images
        studies.append(_ood_study(s, known[s][0], images, max_per_study, seed))
    external = next(n for n, (role, _) in known.items() if role == "external")
    split = {
        "benchmark": f"kim_{benchmark}_released",
        "in_distribution": ind,
        "external": external,
        "test_sets": chosen,
    }
    return [Experiment(f"kim_{benchmark}", train.class_names, train, val, tuple(studies), split)]


def _cifar40_classes(root: Path, id_classes: Sequence[str] | None) -> list[str]:
    if id_classes is not None:
        return list(id_classes)
    folder = released_set_folder(root, "cifar", "train", "cifar40")
    if not folder.is_dir():
        raise FileNotFoundError(
            f"the CIFAR-40 class list is read from the class folders of Kim et al.'s released "
            f"split, {folder}, which does not exist; pass data.args.id_classes instead (the "
            f"authors publish the list only in that archive)"
        )
    return class_folders(folder)


@register_builder("kim_cifar100_experiments")
def kim_cifar100_experiments(
    *,
    data_dir: str | os.PathLike | None = None,
    id_classes: Sequence[str] | None = None,
    far_ood: Sequence[str] = ("svhn", "lsun_fix", "dtd"),
    max_per_study: int | None = None,
    val_per_class: int = KIM_CIFAR_VAL_PER_CLASS,
    seed: int = 0,
    wordnet_path: str | os.PathLike | None = None,
) -> list[Experiment]:
    """Kim et al.'s CIFAR benchmark built from the official CIFAR-100 files (``cifar-100-python``).

    In-distribution CIFAR-40: the 40 classes ``id_classes`` (CIFAR-100 fine names), by default
    the class folders of the authors' released ``cifar-bench/train/cifar40`` (their fixed split;
    the paper's Table 3 marks it only by colour). Training: their 500 training images each, less
    ``val_per_class`` per class drawn with ``seed`` for validation (18 000 + 2000 as in the
    paper); ``iid``: their 4000 test images. Near-OoD ``near_ood/cifar60``: the 6000
    test images of the other 60 classes. Far-OoD ``far_ood/<set>`` for ``far_ood`` in
    :data:`KIM_CIFAR_FAR_OOD`: SVHN's test set, LSUN-FIX (PNG folder made by
    ``fdbench data prepare-fix``; where it has class sub-folders, classes whose name matches the
    CIFAR-100 WordNet subtree are removed,
    :func:`~fdbench.data.suites.kim_construction.remove_name_matches`) and DTD resized to 32 × 32.
    External set: Tiny ImageNet-FIX without the classes the wnid rule removes
    (:func:`~fdbench.data.suites.kim_construction.remove_wnid_overlaps`), recorded in ``split``.
    """
    _check_cap(max_per_study)
    unknown = [s for s in far_ood if s not in KIM_CIFAR_FAR_OOD]
    if unknown:
        raise ValueError(f"unknown far_ood set(s) {unknown}; recognised: {list(KIM_CIFAR_FAR_OOD)}")
    root = _cache.data_dir(data_dir)
    needed = {"cifar-100-python": "cifar-100-python.tar.gz (train, test, meta)"}
    needed.update({KIM_CIFAR_FAR_OOD[s][0]: KIM_CIFAR_FAR_OOD[s][1] for s in far_ood})
    missing = [f"{root / f} ({how})" for f, how in needed.items() if not (root / f).is_dir()]
    if missing:
        raise FileNotFoundError(
            f"kim_cifar100_experiments needs data missing under {root}: " + "; ".join(missing)
        )
    classes = _cifar40_classes(root, id_classes)
    train_all = read_cifar100(root / "cifar-100-python", "train")
    test_all = read_cifar100(root / "cifar-100-python", "test")
    names = train_all.class_names
    bad = [c for c in classes if c not in names]
    if bad or len(set(classes)) != len(classes):
        raise ValueError(f"id_classes must be distinct CIFAR-100 fine class names; unknown: {bad}")
    known = np.array(sorted(names.index(c) for c in classes), np.int64)
    class_names = tuple(names[i] for i in known)
    rng = _sub_rng(seed, "kim_cifar40_val")
    is_val = np.zeros(train_all.labels.size, bool)
    for c in known:
        members = np.flatnonzero(train_all.labels == c)
        if not 0 < val_per_class < members.size:
            raise ValueError(
                f"val_per_class must be in [1, {members.size}) (training images of class "
                f"{names[c]}); got {val_per_class}"
            )
        is_val[rng.choice(members, val_per_class, replace=False)] = True
    inside = np.isin(train_all.labels, known)
    train = ImageDataset(
        "cifar40",
        train_all.images[inside & ~is_val],
        relabel(train_all.labels[inside & ~is_val], known),
        class_names,
    )
    val = ImageDataset(
        "cifar40", train_all.images[is_val], relabel(train_all.labels[is_val], known), class_names
    )
    in_test = np.isin(test_all.labels, known)
    keep = _take(int(in_test.sum()), max_per_study, _sub_rng(seed, "iid"))
    studies = [
        Study(
            "iid",
            StudyKind.IID,
            test_all.images[in_test][keep],
            relabel(test_all.labels[in_test], known)[keep],
        )
    ]
    studies.append(
        _ood_study("cifar60", "near_ood", test_all.images[~in_test], max_per_study, seed)
    )
    wordnet = load_wordnet(wordnet_path)
    split: dict = {
        "benchmark": "kim_cifar100",
        "cifar40": list(class_names),
        "cifar60": [n for n in names if n not in class_names],
    }
    for s in far_ood:
        images, record = _cifar_far_ood(root, s, wordnet)
        if record is not None:
            split[f"wordnet_filter/{s}"] = record
        studies.append(_ood_study(s, "far_ood", images, max_per_study, seed))
    external = remove_wnid_overlaps(tiny_imagenet_wnids(), CIFAR100_WNIDS, wordnet)
    split["wordnet_filter/tiny_imagenet"] = external.to_dict()
    return [Experiment("kim_cifar100", class_names, train, val, tuple(studies), split)]


def _cifar_far_ood(root: Path, name: str, wordnet: WordNet) -> tuple[np.ndarray, dict | None]:
    folder = root / KIM_CIFAR_FAR_OOD[name][0]
    if name == "svhn":
        return read_svhn(folder, "test").images, None
    if name == "dtd":
        return read_dtd(folder).images, None
    subfolders = class_folders(folder)
    if not subfolders:
        ds = read_class_folders(folder.parent, resize_to(32), classes=[folder.name])
        return ds.images, None
    result = remove_name_matches(subfolders, CIFAR100_WNIDS.values(), wordnet)
    ds = read_class_folders(folder, resize_to(32), classes=list(result.kept))
    return ds.images, result.to_dict()


def _far_ood_names(name: str, classes: Sequence[str]) -> list[str]:
    """Class names of a far-OoD set as words (Caltech-256 ``001.ak47`` → ``ak47``)."""
    if name == "caltech256":
        return [c.split(".", 1)[-1].removesuffix("-101") for c in classes]
    return [c.replace("/", " ") for c in classes]


@register_builder("kim_imagenet_experiments")
def kim_imagenet_experiments(
    *,
    data_dir: str | os.PathLike | None = None,
    imagenet: str = "imagenet",
    far_ood: Sequence[str] = ("food101", "caltech256", "places365"),
    in_distribution: Sequence[str] | None = None,
    n_near: int = 200,
    seed: int = 0,
    max_per_class: int | None = None,
    max_per_study: int | None = None,
    val_per_class: int = 50,
    wordnet_path: str | os.PathLike | None = None,
) -> list[Experiment]:
    """Kim et al.'s ImageNet benchmark built from ImageNet's class folders
    (``<data_dir>/<imagenet>/{train,val}/nXXXXXXXX/*.JPEG``, the standard layout).

    Classes from :func:`~fdbench.data.suites.kim_construction.imagenet_split` (ImageNet-200 = Tiny
    ImageNet's classes unless ``in_distribution``; ``n_near`` near-OoD classes drawn with ``seed``).
    Training and validation: the ImageNet training images of the in-distribution classes,
    ``val_per_class`` of each drawn for validation; ``iid``: their ImageNet validation images;
    ``near_ood/near_imagenet``: the validation images of the near-OoD classes; far-OoD
    ``far_ood/<set>`` for ``far_ood`` in :data:`KIM_IMAGENET_FAR_OOD`, without the classes
    :func:`~fdbench.data.suites.kim_construction.remove_imagenet_overlaps` removes (recorded in
    ``split``). Images are ``Resize(256)`` + ``CenterCrop(224)`` (the authors' test transform);
    ``max_per_class`` caps the images read per ImageNet class, ``max_per_study`` the test studies.
    """
    _check_cap(max_per_study)
    unknown = [s for s in far_ood if s not in KIM_IMAGENET_FAR_OOD]
    if unknown:
        raise ValueError(
            f"unknown far_ood set(s) {unknown}; recognised: {list(KIM_IMAGENET_FAR_OOD)}"
        )
    root = _cache.data_dir(data_dir)
    needed = [root / imagenet / "train", root / imagenet / "val"]
    needed += [root / KIM_IMAGENET_FAR_OOD[s][0] for s in far_ood]
    missing = [str(p) for p in needed if not p.is_dir()]
    if missing:
        raise FileNotFoundError(
            f"kim_imagenet_experiments needs data missing under {root}: " + ", ".join(missing)
        )
    wordnet = load_wordnet(wordnet_path)
    classes = class_folders(root / imagenet / "train")
    split = imagenet_split(
        classes,
        wordnet,
        in_distribution=in_distribution,
        n_near=n_near,
        seed=_sub_rng(seed, "kim_imagenet_near"),
    )
    transform = resize_center_crop()
    ind = list(split.in_distribution)
    names = tuple(wordnet.name(k) for k in ind)
    train_all = read_class_folders(
        root / imagenet / "train",
        transform,
        classes=ind,
        max_per_class=max_per_class,
        name="imagenet200",
    )
    rng = _sub_rng(seed, "kim_imagenet_val")
    is_val = np.zeros(train_all.labels.size, bool)
    for c in range(len(ind)):
        members = np.flatnonzero(train_all.labels == c)
        is_val[rng.choice(members, min(val_per_class, members.size - 1), replace=False)] = True
    train = ImageDataset("imagenet200", train_all.images[~is_val], train_all.labels[~is_val], names)
    val = ImageDataset("imagenet200", train_all.images[is_val], train_all.labels[is_val], names)
    test = read_class_folders(
        root / imagenet / "val", transform, classes=ind, max_per_class=max_per_class
    )
    keep = _take(test.labels.size, max_per_study, _sub_rng(seed, "iid"))
    studies = [Study("iid", StudyKind.IID, test.images[keep], test.labels[keep])]
    near = read_class_folders(
        root / imagenet / "val",
        transform,
        classes=list(split.near_ood),
        max_per_class=max_per_class,
    )
    studies.append(_ood_study("near_imagenet", "near_ood", near.images, max_per_study, seed))
    record: dict = {"benchmark": "kim_imagenet", **split.to_dict()}
    for s in far_ood:
        folder = root / KIM_IMAGENET_FAR_OOD[s][0]
        if s == "places365":
            ds = read_places365_val(folder, transform)
            all_classes = list(ds.class_names)
        else:
            folder = folder / "images" if s == "food101" else folder
            all_classes = class_folders(folder)
        words = _far_ood_names(s, all_classes)
        result = remove_imagenet_overlaps(words, classes, wordnet, variations=KIM_VARIATIONS)
        record[f"wordnet_filter/{s}"] = result.to_dict()
        kept = [c for c, w in zip(all_classes, words, strict=True) if w in result.kept]
        if s == "places365":
            images = ds.images[np.isin(ds.labels, [all_classes.index(c) for c in kept])]
        else:
            images = read_class_folders(
                folder, transform, classes=kept, max_per_class=max_per_class
            ).images
        studies.append(_ood_study(s, "far_ood", images, max_per_study, seed))
    return [Experiment("kim_imagenet", names, train, val, tuple(studies), record)]
