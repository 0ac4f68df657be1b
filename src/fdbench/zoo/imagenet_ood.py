"""Readers of the ImageNet OOD sets as distributed: ImageNet-21K filtered as Galil et al.
(ICLR 2023, Appendix L.1) describe, and ImageNet-O (Hendrycks et al., CVPR 2021)."""

from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fdbench.data.sources.wordnet import WordNet

__all__ = [
    "TarImage",
    "filter_imagenet21k",
    "imagenet21k_images",
    "imagenet21k_pool",
    "imagenet_o_images",
    "open_image",
]

#: Image files of the ImageNet releases (``.JPEG`` in ImageNet-21K, ``.jpg`` in ImageNet-O).
JPEG_SUFFIXES = (".jpeg", ".jpg")
_WNID = re.compile(r"^n\d{8}$")
#: Why :func:`filter_imagenet21k` removes a class.
REASONS = ("imagenet1k", "hypernym", "hyponym", "not_in_wordnet")


@dataclass(frozen=True)
class TarImage:
    """One image inside an uncompressed per-class tar of ImageNet-21K (``<wnid>.tar`` holding
    ``<wnid>_<n>.JPEG``): the tar file and where the member's bytes are in it."""

    tar: Path
    name: str
    offset: int
    size: int

    def read(self) -> bytes:
        """The image file's bytes, read straight from their place in the tar."""
        with open(self.tar, "rb") as fh:
            fh.seek(self.offset)
            return fh.read(self.size)


def open_image(item: str | Path | TarImage) -> Any:
    """A PIL image of an image file or of a :class:`TarImage`."""
    from PIL import Image

    if isinstance(item, TarImage):
        return Image.open(io.BytesIO(item.read()))
    return Image.open(item)


def _is_image(name: str) -> bool:
    return Path(name).suffix.lower() in JPEG_SUFFIXES


def _folder_images(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and _is_image(p.name))


def _tar_images(path: Path) -> list[TarImage]:
    with tarfile.open(path, "r:") as archive:
        members = [m for m in archive.getmembers() if m.isfile() and _is_image(m.name)]
    items = [TarImage(path, m.name, m.offset_data, m.size) for m in members]
    return sorted(items, key=lambda t: t.name)


def _check_root(root: str | Path, what: str) -> Path:
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{what} folder {root} does not exist")
    return root


def imagenet21k_images(root: str | Path) -> dict[str, list[Path] | list[TarImage]]:
    """The images of every class of an ImageNet-21K copy, by wnid, in file-name order.

    Both layouts of the releases are read: one folder per class (``root/<wnid>/*.JPEG``, as
    the winter-2021 release unpacks) and one uncompressed tar per class (``root/<wnid>.tar``,
    as fall11_whole and the winter-2021 release are distributed); a class present both ways
    is read from its folder. Entries whose name is not a wnid (``n`` and 8 digits) are ignored.
    """
    root = _check_root(root, "ImageNet-21K")
    classes: dict[str, list[Path] | list[TarImage]] = {}
    for path in sorted(root.iterdir()):
        if path.is_dir() and _WNID.match(path.name):
            classes[path.name] = _folder_images(path)
    for path in sorted(root.iterdir()):
        if path.is_file() and path.suffix == ".tar" and _WNID.match(path.stem):
            classes.setdefault(path.stem, _tar_images(path))
    if not classes:
        raise ValueError(
            f"ImageNet-21K folder {root}: expected one <wnid> folder or <wnid>.tar per class"
        )
    return classes


def filter_imagenet21k(
    wnids: Iterable[str], id_wnids: Iterable[str], wordnet: WordNet
) -> tuple[list[str], dict[str, str]]:
    """Galil et al.'s cleaning of ImageNet-21K (Appendix L.1): remove the ImageNet-1K classes
    (``id_wnids``), then the hypernyms and the hyponyms of ImageNet-1K classes in WordNet
    ("bear" is a hypernym of ImageNet-1K's "brown bear"), as unfair OOD classes.

    A class counts as a hypernym when it is an ancestor of an ID class and as a hyponym when an
    ID class is among its ancestors (:meth:`~fdbench.data.sources.wordnet.WordNet.ancestors`,
    through hypernym and instance-hypernym pointers). A wnid WordNet 3.0 does not have cannot be
    checked and is removed too. Returns the kept wnids (sorted) and the reason of each removed one
    (:data:`REASONS`). The authors ship their result as a class list
    (``datasets_metadata/ImageNet_20K_metadata.pkl`` of mdabbah/COOD_benchmarking); this
    rebuilds it from the rule, for any copy and any set of ID classes.
    """
    id_set = set(id_wnids)
    if not id_set:
        raise ValueError("id_wnids: expected the wnids of the in-distribution classes")
    unknown = sorted(w for w in id_set if w not in wordnet.lemmas)
    if unknown:
        raise ValueError(
            f"id_wnids: {unknown[0]!r} is not a WordNet 3.0 noun synset (the ID classes must be "
            "named by wnid, as ImageNet's class folders are)"
        )
    above = set().union(*(wordnet.ancestors(w) for w in id_set)) - id_set
    kept, removed = [], {}
    for key in sorted(set(wnids)):
        if key in id_set:
            removed[key] = "imagenet1k"
        elif key not in wordnet.lemmas:
            removed[key] = "not_in_wordnet"
        elif key in above:
            removed[key] = "hypernym"
        elif wordnet.ancestors(key) & id_set:
            removed[key] = "hyponym"
        else:
            kept.append(key)
    return kept, removed


def imagenet21k_pool(
    root: str | Path,
    id_wnids: Sequence[str],
    wordnet: WordNet,
    *,
    n_samples: int = 200,
    seed: int = 0,
) -> tuple[list[tuple[Path | TarImage, int]], list[str]]:
    """The C-OOD class pool of Galil et al. (Appendix L.1) from an ImageNet-21K copy.

    The classes of ``root`` (:func:`imagenet21k_images`) are cleaned by
    :func:`filter_imagenet21k`; classes with fewer than ``n_samples`` images are removed; of
    every other class ``n_samples`` images are drawn at random without replacement (seeded by
    ``seed`` and the class: the draw of a class does not depend on the others; the paper:
    200, giving 12 563 classes; the zoo then splits each into 150 estimation and 50 test
    samples). Returns ``(item, class id)`` pairs, classes numbered in wnid order, and the wnid
    of each class id.
    """
    if n_samples < 1:
        raise ValueError(f"n_samples: expected an integer >= 1, got {n_samples}")
    images = imagenet21k_images(root)
    kept, _ = filter_imagenet21k(images, id_wnids, wordnet)
    items: list[tuple[Path | TarImage, int]] = []
    names: list[str] = []
    for key in kept:
        files = images[key]
        if len(files) < n_samples:
            continue
        rng = np.random.default_rng([seed, int(key[1:])])
        chosen = np.sort(rng.choice(len(files), size=n_samples, replace=False))
        items += [(files[i], len(names)) for i in chosen]
        names.append(key)
    if not names:
        raise ValueError(
            f"ImageNet-21K folder {root}: no class is left after the filtering of Galil et al. "
            f"(App. L.1) with at least {n_samples} images"
        )
    return items, names


def imagenet_o_images(root: str | Path) -> tuple[list[tuple[Path, int]], list[str]]:
    """ImageNet-O (Hendrycks et al., "Natural Adversarial Examples", CVPR 2021) as released:
    ``imagenet-o/<wnid>/*.jpg``, 200 ImageNet-21K classes outside ImageNet-1K. Returns
    ``(path, class id)`` pairs (classes in wnid order, files in name order) and the wnids; the
    release's README and other non-class entries are ignored."""
    root = _check_root(root, "ImageNet-O")
    names = sorted(p.name for p in root.iterdir() if p.is_dir() and _WNID.match(p.name))
    items = [(path, c) for c, name in enumerate(names) for path in _folder_images(root / name)]
    if not items:
        raise ValueError(f"ImageNet-O folder {root}: expected <wnid>/*.jpg class folders")
    return items, names
