"""BREEDS-ENTITY-13 (Santurkar et al., ICLR 2021) from ImageNet's class folders (FD-Shifts).

The BREEDS hierarchy is read from the three files the ``robustness`` library's BREEDS helpers
read (``robustness/tools/breeds_helpers.py``, MadryLab/robustness, MIT licence), published in
MadryLab/BREEDS-Benchmarks (``imagenet_class_hierarchy/modified/``) and shipped by FD-Shifts in
``fd_shifts/loaders/breeds_hierarchies/``: ``dataset_class_info.json``, ``class_hierarchy.txt``
and ``node_names.txt``. fdbench does not ship them; they are read from the user's disk.
:func:`entity13` re-implements ``make_entity13(info_dir, split="rand")`` draw for draw.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fdbench.data.sources import cache as _cache
from fdbench.data.sources.readers import IMAGE_SUFFIXES
from fdbench.data.suites import register_builder
from fdbench.data.suites._fdshifts_args import check_reader_args
from fdbench.data.suites.fashion_mnist import _sub_rng, _take
from fdbench.data.suites.fdshifts import FDSHIFTS_N_VAL
from fdbench.data.suites.kim_readers import load_images, resize_center_crop
from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind

__all__ = [
    "BREEDS_FILES",
    "BREEDS_URL",
    "BreedsHierarchy",
    "BreedsSplit",
    "entity13",
    "fdshifts_breeds_experiments",
    "read_breeds_hierarchy",
]

#: The hierarchy files (``REQUIRED_FILES`` of ``robustness/tools/breeds_helpers.py``).
BREEDS_FILES = ("dataset_class_info.json", "class_hierarchy.txt", "node_names.txt")
BREEDS_URL = (
    "https://github.com/MadryLab/BREEDS-Benchmarks/tree/master/imagenet_class_hierarchy/modified"
)
IMAGENET_HINT = "ImageNet-1k (ILSVRC2012) training images, https://image-net.org"
#: The root of the WordNet hierarchy (``root_wnid`` of ``ClassHierarchy``).
ROOT_WNID = "n00001740"
#: ENTITY-13: superclasses at depth 3 with at least 20 leaves, 20 sub-classes each, split at
#: random into 10 source and 10 target sub-classes, ``RandomState(2)`` (``make_entity13``).
ENTITY13_LEVEL, ENTITY13_SUBCLASSES, ENTITY13_SEED = 3, 20, 2
#: FD-Shifts' i.i.d. hold-out: the first 10 000 source-sub-class training images after a
#: shuffle by ``numpy.random.default_rng(12345)`` (``BREEDImageNet`` in
#: ``fd_shifts/loaders/dataset_collection.py``), FD-Shifts' i.i.d. test set (paper, App. E.1).
BREEDS_HOLD_OUT, BREEDS_SHUFFLE_SEED = 10_000, 12345


@dataclass(frozen=True)
class BreedsHierarchy:
    """The BREEDS hierarchy: ImageNet leaves (WordNet ids), parent → children edges restricted
    to the ancestors of the leaves, node names, and each node's depth (longest path from
    :data:`ROOT_WNID`), as ``ClassHierarchy`` of the ``robustness`` library builds them."""

    leaves: tuple[str, ...]
    leaf_names: dict[str, str]
    children: dict[str, tuple[str, ...]]
    names: dict[str, str]
    depth: dict[str, int]

    def leaves_below(self, node: str) -> list[str]:
        """Sorted leaves reachable from ``node`` (``leaves_reachable``: the search stops at a
        leaf; ``node`` itself counts if it is a leaf)."""
        leaf_set, found, todo = set(self.leaves), set(), {node}
        while todo:
            nxt = set()
            for w in todo:
                for c in self.children.get(w, ()):
                    (found if c in leaf_set else nxt).add(c)
            todo = nxt
        if node in leaf_set:
            found.add(node)
        return sorted(found)


def read_breeds_hierarchy(folder: str | os.PathLike) -> BreedsHierarchy:
    """Read :data:`BREEDS_FILES` from ``folder``.

    ``dataset_class_info.json``: a list of ``[index, wnid, name]`` (the 1000 ImageNet classes);
    ``class_hierarchy.txt``: one ``parent child`` edge per line; ``node_names.txt``:
    ``wnid<TAB>name`` per line. A missing file raises ``FileNotFoundError`` naming every missing
    file and where to get them; a malformed one ``ValueError`` naming it and the line.
    """
    folder = Path(folder)
    missing = [str(folder / f) for f in BREEDS_FILES if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(
            f"the BREEDS hierarchy files are missing: {', '.join(missing)} (download "
            f"{', '.join(BREEDS_FILES)} from {BREEDS_URL} into {folder})"
        )
    info_path = folder / BREEDS_FILES[0]
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
        leaves = tuple(str(row[1]) for row in info)
        leaf_names = {str(row[1]): str(row[2]) for row in info}
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError, IndexError, KeyError):
        raise ValueError(
            f"{info_path}: expected a JSON list of [index, wnid, name] entries"
        ) from None
    edges = []
    for n, line in enumerate(_lines(folder / BREEDS_FILES[1]), 1):
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{folder / BREEDS_FILES[1]}: line {n} must be 'parent child'")
        edges.append((parts[0], parts[1]))
    names = {}
    for n, line in enumerate(_lines(folder / BREEDS_FILES[2]), 1):
        parts = line.split("\t")
        if len(parts) < 2:
            raise ValueError(f"{folder / BREEDS_FILES[2]}: line {n} must be 'wnid<TAB>name'")
        names[parts[0]] = parts[1]
    children = _ancestor_graph(leaves, edges)
    return BreedsHierarchy(leaves, leaf_names, children, names, _depths(children))


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


def _ancestor_graph(leaves: tuple[str, ...], edges: list[tuple[str, str]]) -> dict:
    """Edges parent → children among the ancestors of ``leaves`` (``_make_parent_graph``)."""
    parents: dict[str, set[str]] = {}
    for p, c in edges:
        parents.setdefault(c, set()).add(p)
    graph: dict[str, set[str]] = {}
    todo = {n for n in leaves if n in parents}
    while todo:
        nxt = set()
        for w in todo:
            for p in parents.get(w, ()):
                graph.setdefault(p, set()).add(w)
                nxt.add(p)
        todo = nxt
    return {p: tuple(sorted(cs)) for p, cs in graph.items()}


def _depths(children: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Longest-path depth of every node reachable from :data:`ROOT_WNID`
    (``_make_level_dict``)."""
    depth: dict[str, int] = {}
    todo = [(ROOT_WNID, 0)]
    while todo:
        nxt = []
        for node, d in todo:
            depth[node] = max(d, depth.get(node, d))
            nxt += [(c, d + 1) for c in children.get(node, ())]
        todo = nxt
    return depth


@dataclass(frozen=True)
class BreedsSplit:
    """A BREEDS data set: superclass WordNet ids and names (label order), and per superclass
    the source (training) and target (shifted) sub-classes as WordNet ids."""

    superclasses: tuple[str, ...]
    names: tuple[str, ...]
    source: tuple[tuple[str, ...], ...]
    target: tuple[tuple[str, ...], ...]


def entity13(hierarchy: BreedsHierarchy) -> BreedsSplit:
    """ENTITY-13 with the random sub-class split, as ``make_entity13(info_dir, split="rand")``
    of ``robustness/tools/breeds_helpers.py`` (which FD-Shifts' ``BREEDImageNet`` calls).

    Superclasses: the nodes at depth 3 with at least 20 reachable leaves, sorted by WordNet id
    (label order). One ``numpy.random.RandomState(2)`` serves all superclasses in that order:
    below each superclass, the first descendant with two or more children is found, the leaves
    of its children are pooled (with repeats) and sorted, 20 are chosen without replacement,
    the first 10 being the source and the last 10 the target sub-classes.
    """
    rng = np.random.RandomState(ENTITY13_SEED)
    nodes = sorted(n for n, d in hierarchy.depth.items() if d == ENTITY13_LEVEL)
    supers = [n for n in nodes if len(hierarchy.leaves_below(n)) >= ENTITY13_SUBCLASSES]
    source, target = [], []
    half = ENTITY13_SUBCLASSES // 2
    for sc in supers:
        node, desc = sc, list(hierarchy.children.get(sc, ()))
        while len(desc) == 1:
            node = desc[0]
            desc = list(hierarchy.children.get(node, ()))
        pool = sorted(leaf for d in desc for leaf in hierarchy.leaves_below(d))
        chosen = rng.choice(pool, ENTITY13_SUBCLASSES, replace=False)
        src, tgt = tuple(str(w) for w in chosen[:half]), tuple(str(w) for w in chosen[half:])
        if set(src) & set(tgt):
            raise ValueError(f"BREEDS superclass {sc}: a sub-class is both source and target")
        source.append(src)
        target.append(tgt)
    if not supers:
        raise ValueError(
            f"the BREEDS hierarchy has no node at depth {ENTITY13_LEVEL} with at least "
            f"{ENTITY13_SUBCLASSES} ImageNet classes below it"
        )
    names = tuple(hierarchy.names.get(s, s) for s in supers)
    return BreedsSplit(tuple(supers), names, tuple(source), tuple(target))


def _check_folders(train_dir: Path, wnids: list[str]) -> None:
    missing = [w for w in sorted(wnids) if not (train_dir / w).is_dir()]
    if missing:
        raise FileNotFoundError(
            f"ImageNet class folders missing under {train_dir}: {', '.join(missing[:5])}"
            f"{' …' if len(missing) > 5 else ''} ({len(missing)} of {len(wnids)}; from "
            f"{IMAGENET_HINT}, one folder per WordNet id)"
        )


def _samples(train_dir: Path, groups: tuple[tuple[str, ...], ...]) -> tuple[list[Path], list]:
    """Image paths and superclass labels of the class folders of ``groups`` in ImageFolder
    order (sorted WordNet ids, then sorted file names), as FD-Shifts' ``BREEDImageNet``."""
    label = {w: i for i, group in enumerate(groups) for w in group}
    _check_folders(train_dir, list(label))
    paths, labels = [], []
    for wnid in sorted(label):
        found = sorted(
            p for p in (train_dir / wnid).rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES
        )
        paths += found
        labels += [label[wnid]] * len(found)
    return paths, labels


@register_builder("fdshifts_breeds_experiments")
def fdshifts_breeds_experiments(
    *,
    data_dir: str | os.PathLike | None = None,
    hierarchy_dir: str | os.PathLike | None = None,
    imagenet_dir: str | os.PathLike | None = None,
    seed: int = 0,
    image_size: int = 224,
    max_train: int | None = None,
    max_per_study: int | None = None,
    hold_out: int = BREEDS_HOLD_OUT,
    n_val: int = FDSHIFTS_N_VAL,
) -> list[Experiment]:
    """FD-Shifts' BREEDS-ENTITY-13 experiment (Jaeger et al., ICLR 2023), read from disk.

    Data: the hierarchy files :data:`BREEDS_FILES` in ``hierarchy_dir`` (default
    ``<data_dir>/breeds``) and ImageNet's training images in ``<imagenet_dir>/train/<wnid>/``
    (default ``<data_dir>/imagenet``; ``data_dir`` default ``$FDBENCH_DATA``, else
    ``~/.cache/fdbench``). The 13 superclasses of :func:`entity13` are the classes. The
    training images of the source sub-classes, in ImageFolder order, are shuffled with
    ``numpy.random.default_rng(12345)``; the first ``hold_out`` (10 000) are FD-Shifts' i.i.d.
    hold-out (its first 1000 the validation split, the other 9000 the ``iid`` study) and the
    rest the training split (157 120 images with all of ImageNet). ``subclass``: the training
    images of the target sub-classes (167 592), labelled with their superclass (Table 1's "sub").
    Images: ``Resize(image_size · 8/7)`` + ``CenterCrop(image_size)`` (256 and 224, FD-Shifts'
    ``breeds_data_config``) for every split; the training augmentation is the config's.

    ``hold_out`` and ``n_val`` (FD-Shifts: 10 000 and 1000) size the i.i.d. hold-out and its
    validation part. ``max_train``/``max_per_study`` keep seeded subsets (of the training split
    / of each study), chosen from the file lists before any image is read. Missing files raise one
    ``FileNotFoundError`` naming them and where to get them.
    """
    check_reader_args(max_per_study, max_train, image_size, n_val)
    if not isinstance(hold_out, int | np.integer) or hold_out <= n_val:
        raise ValueError(f"hold_out must be an int > n_val = {n_val}; got {hold_out!r}")
    root = _cache.data_dir(data_dir)
    hierarchy_dir = root / "breeds" if hierarchy_dir is None else Path(hierarchy_dir)
    imagenet_dir = root / "imagenet" if imagenet_dir is None else Path(imagenet_dir)
    split = entity13(read_breeds_hierarchy(hierarchy_dir))
    train_dir = imagenet_dir / "train"
    if not train_dir.is_dir():
        raise FileNotFoundError(f"folder {train_dir} is missing ({IMAGENET_HINT})")
    _check_folders(train_dir, [w for g in (*split.source, *split.target) for w in g])
    paths, labels = _samples(train_dir, split.source)
    if len(paths) <= hold_out:
        raise ValueError(
            f"BREEDS-ENTITY-13 needs more than {hold_out} source images (the i.i.d. "
            f"hold-out); {train_dir} holds {len(paths)}"
        )
    order = list(range(len(paths)))
    np.random.default_rng(BREEDS_SHUFFLE_SEED).shuffle(order)
    order = np.asarray(order, dtype=np.int64)
    held, train_idx = order[:hold_out], order[hold_out:]
    val_idx, iid_idx = held[:n_val], held[n_val:]
    train_idx = train_idx[_take(train_idx.size, max_train, _sub_rng(seed, "train"))]
    iid_idx = iid_idx[_take(iid_idx.size, max_per_study, _sub_rng(seed, "iid"))]
    t_paths, t_labels = _samples(train_dir, split.target)
    sub_idx = _take(len(t_paths), max_per_study, _sub_rng(seed, "subclass"))
    transform = resize_center_crop(image_size * 8 // 7, image_size)
    labels_arr = np.asarray(labels, np.int64)

    def read(files: list[Path], y: np.ndarray) -> ImageDataset:
        images = (
            load_images(files, transform)
            if files
            else np.zeros((0, image_size, image_size, 3), np.uint8)
        )
        return ImageDataset("breeds", images, y, split.names)

    train = read([paths[i] for i in train_idx], labels_arr[train_idx])
    val = read([paths[i] for i in val_idx], labels_arr[val_idx])
    iid = read([paths[i] for i in iid_idx], labels_arr[iid_idx])
    sub = read([t_paths[i] for i in sub_idx], np.asarray(t_labels, np.int64)[sub_idx])
    studies = (
        Study("iid", StudyKind.IID, iid.images, iid.labels),
        Study("subclass", StudyKind.SUBCLASS, sub.images, sub.labels),
    )
    return [Experiment("breeds_entity13", split.names, train, val, studies)]
