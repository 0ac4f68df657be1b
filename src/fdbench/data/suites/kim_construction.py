"""Kim et al.'s benchmark construction on the WordNet tree: overlap filters and ImageNet splits.

Kim, Koo & Hwang, "A Unified Benchmark for the Unknown Detection Capability of Deep Neural
Networks" (Expert Systems with Applications, 2023), Sections 3.1 and 3.2. The authors' code
(github.com/daintlab/unknown-detection-benchmarks: ``dataloader.py``, ``test.py``) only reads
their released image folders; it holds no class lists, WordNet ids or filtering code, so the
rules here follow the paper's text (see ``docs/unknown_detection_data.md``).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from fdbench.data.sources.wordnet import WordNet, normalise_name

_log = logging.getLogger(__name__)

#: A WordNet 3.0 noun synset for every CIFAR-100 fine class (Krizhevsky, 2009). CIFAR-100 has no
#: WordNet ids; Kim et al. assigned them by hand (Section 3.1, giving camel n02437136 and mouse
#: n02330245) but did not release the list, so this assignment is ours: the sense of the word
#: that CIFAR-100's super-class implies (mushroom and orange as food, table and lamp as
#: furniture, keyboard as the device with keys). WordNet has no "aquarium fish"; it is mapped to
#: fish (n02512053), its hypernym.
CIFAR100_WNIDS: dict[str, str] = {
    "apple": "n07739125",
    "aquarium_fish": "n02512053",
    "baby": "n09827683",
    "bear": "n02131653",
    "beaver": "n02363005",
    "bed": "n02818832",
    "bee": "n02206856",
    "beetle": "n02164464",
    "bicycle": "n02834778",
    "bottle": "n02876657",
    "bowl": "n02880940",
    "boy": "n10285313",
    "bridge": "n02898711",
    "bus": "n02924116",
    "butterfly": "n02274259",
    "camel": "n02437136",
    "can": "n02946921",
    "castle": "n02980441",
    "caterpillar": "n02309337",
    "cattle": "n02402425",
    "chair": "n03001627",
    "chimpanzee": "n02481823",
    "clock": "n03046257",
    "cloud": "n09247410",
    "cockroach": "n02233338",
    "couch": "n04256520",
    "crab": "n01976957",
    "crocodile": "n01697178",
    "cup": "n03147509",
    "dinosaur": "n01699831",
    "dolphin": "n02068974",
    "elephant": "n02503517",
    "flatfish": "n02657368",
    "forest": "n09284015",
    "fox": "n02118333",
    "girl": "n10084295",
    "hamster": "n02342885",
    "house": "n03544360",
    "kangaroo": "n01877134",
    "keyboard": "n03614007",
    "lamp": "n03636649",
    "lawn_mower": "n03649909",
    "leopard": "n02128385",
    "lion": "n02129165",
    "lizard": "n01674464",
    "lobster": "n01982650",
    "man": "n10287213",
    "maple_tree": "n12752205",
    "motorcycle": "n03790512",
    "mountain": "n09359803",
    "mouse": "n02330245",
    "mushroom": "n07734744",
    "oak_tree": "n12268246",
    "orange": "n07747607",
    "orchid": "n12041446",
    "otter": "n02444819",
    "palm_tree": "n12582231",
    "pear": "n07767847",
    "pickup_truck": "n03930630",
    "pine_tree": "n11608250",
    "plain": "n09393605",
    "plate": "n03959485",
    "poppy": "n11900569",
    "porcupine": "n02346627",
    "possum": "n01874928",
    "rabbit": "n02324045",
    "raccoon": "n02508021",
    "ray": "n01495701",
    "road": "n04096066",
    "rocket": "n04099429",
    "rose": "n12620196",
    "sea": "n09426788",
    "seal": "n02076196",
    "shark": "n01482330",
    "shrew": "n01891633",
    "skunk": "n02445715",
    "skyscraper": "n04233124",
    "snail": "n01944390",
    "snake": "n01726692",
    "spider": "n01772222",
    "squirrel": "n02355227",
    "streetcar": "n04335435",
    "sunflower": "n11978233",
    "sweet_pepper": "n07720615",
    "table": "n04379243",
    "tank": "n04389033",
    "telephone": "n04401088",
    "television": "n04405907",
    "tiger": "n02129604",
    "tractor": "n04465501",
    "train": "n04468005",
    "trout": "n02537085",
    "tulip": "n12454159",
    "turtle": "n01662784",
    "wardrobe": "n04550184",
    "whale": "n02062744",
    "willow_tree": "n12724942",
    "wolf": "n02114100",
    "woman": "n10787470",
    "worm": "n01922303",
}

#: Number of Tiny ImageNet classes Kim et al. remove with the wnid rule (Section 3.1).
KIM_TINY_IMAGENET_REMOVED = 42
#: Words left out of a class name's keywords (they name no object).
STOP_WORDS = frozenset({"a", "an", "and", "de", "in", "of", "on", "the", "with"})


def tiny_imagenet_wnids() -> tuple[str, ...]:
    """The 200 Tiny ImageNet class ids in the order of the official ``wnids.txt``
    (``tiny-imagenet-200.zip``, Le & Yang 2015), shipped as package data: the first 200 lines of
    ``tiny-imagenet-200/wnids.txt`` in github.com/rangeetpan/IMagenet (commit 6125d8a), a copy of
    the official archive to which that repository appended two classes (n02480855, n10148035)
    that the official validation annotations do not hold."""
    text = resources.files("fdbench.data").joinpath("tiny_imagenet_wnids.txt").read_text()
    return tuple(text.split())


@dataclass(frozen=True)
class FilterResult:
    """Classes kept and removed by an overlap filter; ``removed[c]`` says why ``c`` was removed."""

    rule: str
    kept: tuple[str, ...]
    removed: dict[str, str]

    def to_dict(self) -> dict:
        """JSON-ready record: the rule, the kept classes and every removed class with its reason."""
        return {"rule": self.rule, "kept": list(self.kept), "removed": dict(self.removed)}

    def write(self, path: str | os.PathLike) -> Path:
        """Write :meth:`to_dict` as JSON to ``path`` (parents created); returns the path."""
        from fdbench.core.io import atomic_path

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(self.to_dict(), indent=2))
        return path


def _check_wnids(wordnet: WordNet, reference: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(wordnet, WordNet):
        raise TypeError(f"wordnet must be a WordNet; got {type(wordnet).__name__}")
    if not isinstance(reference, Mapping) or not reference:
        raise TypeError("reference must be a non-empty mapping class name → wnid")
    for key in reference.values():
        wordnet.name(key)  # validates the id
    return dict(reference)


def remove_wnid_overlaps(
    candidates: Sequence[str],
    reference: Mapping[str, str],
    wordnet: WordNet,
) -> FilterResult:
    """Kim et al.'s external-set rule (Section 3.1): a candidate class (a wnid) is removed if it
    is identical to, or a descendant of, a reference class's wnid (hypernym and instance-hypernym
    pointers). ``reference`` maps class names to wnids (default use: :data:`CIFAR100_WNIDS`)."""
    reference = _check_wnids(wordnet, reference)
    by_wnid: dict[str, list[str]] = {}
    for name, key in reference.items():
        by_wnid.setdefault(key, []).append(name)
    kept, removed = [], {}
    for key in candidates:
        hits = sorted(n for a in wordnet.ancestors(key) for n in by_wnid.get(a, ()))
        if hits:
            removed[key] = f"{wordnet.name(key)}: " + ", ".join(
                f"{'identical to' if reference[h] == key else 'descendant of'} {h} ({reference[h]})"
                for h in hits
            )
        else:
            kept.append(key)
    _log.info(
        "WordNet filter removed %d of %d classes: %s",
        len(removed),
        len(candidates),
        ", ".join(removed),
    )
    return FilterResult(
        "wnid identical to or descendant of a reference class", tuple(kept), removed
    )


def keywords(name: str, variations: Iterable[str] = ()) -> tuple[str, ...]:
    """The keywords of a class name (Kim et al., Section 3.2 and Table 4): the whole name, each
    word (without :data:`STOP_WORDS`), the words joined without spaces, and ``variations`` (e.g.
    ``chimpanzee`` for ``chimp``), each also in singular form (``-ies`` → ``-y``; ``-es`` dropped
    after s, x, z, ch, sh; ``-s`` dropped). WordNet's lemmas are singular, so the plural
    variants of Table 4 (``cups``) need no keyword of their own."""
    base = normalise_name(re.sub(r"'s\b", "", name))
    words = [w for w in base.split() if w not in STOP_WORDS]
    forms = [base, *words, "".join(base.split()), *(normalise_name(v) for v in variations)]
    out: list[str] = []
    for form in forms:
        for f in (form, *_singulars(form)):
            if f and f not in out:
                out.append(f)
    return tuple(out)


def _singulars(word: str) -> list[str]:
    out = []
    if word.endswith("ies"):
        out.append(word[:-3] + "y")
    if word.endswith(("ses", "xes", "zes", "ches", "shes")):
        out.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        out.append(word[:-1])
    return out


def remove_name_matches(
    class_names: Sequence[str],
    reference_wnids: Iterable[str],
    wordnet: WordNet,
    *,
    variations: Mapping[str, Sequence[str]] | None = None,
) -> FilterResult:
    """Kim et al.'s far-OoD rule of the CIFAR benchmark (Section 3.1): a class is removed if one
    of its :func:`keywords` names a node of the subtree spanned by ``reference_wnids`` (the
    reference synsets and all their ancestors; default use: all 100 :data:`CIFAR100_WNIDS`)."""
    variations = dict(variations or {})
    subtree = wordnet.subtree(list(reference_wnids))
    kept, removed = [], {}
    for name in class_names:
        hits = [
            (word, key)
            for word in keywords(name, variations.get(name, ()))
            for key in wordnet.synsets(word)
            if key in subtree
        ]
        if hits:
            word, key = hits[0]
            removed[name] = f"keyword {word!r} names subtree node {key} ({wordnet.name(key)})"
        else:
            kept.append(name)
    _log.info(
        "WordNet name filter removed %d of %d classes: %s",
        len(removed),
        len(class_names),
        ", ".join(removed),
    )
    return FilterResult("name matches a node of the reference subtree", tuple(kept), removed)


def remove_imagenet_overlaps(
    class_names: Sequence[str],
    imagenet_wnids: Iterable[str],
    wordnet: WordNet,
    *,
    variations: Mapping[str, Sequence[str]] | None = None,
) -> FilterResult:
    """Kim et al.'s far-OoD rule of the ImageNet benchmark (Section 3.2, Fig. 4b): for every
    synset named by a keyword of the class (:func:`keywords`), the class is removed if (i) the
    synset is an ImageNet class, (ii) a sibling (a synset sharing a parent) is an ImageNet class
    or has one below it, or (iii) an ancestor is an ImageNet class or an ImageNet class lies
    below it."""
    variations = dict(variations or {})
    classes = frozenset(imagenet_wnids)
    covered = wordnet.subtree(classes)  # ImageNet classes and everything above them
    children: dict[str, set[str]] = {}
    for key, parents in wordnet.parents.items():
        for parent in parents:
            children.setdefault(parent, set()).add(key)
    kept, removed = [], {}
    for name in class_names:
        reason = None
        for word in keywords(name, variations.get(name, ())):
            for key in wordnet.synsets(word):
                siblings = {s for p in wordnet.parents.get(key, ()) for s in children[p]} - {key}
                if key in classes:
                    reason = f"(i) {key} ({word!r}) is an ImageNet class"
                elif key in covered:
                    reason = f"(iii) an ImageNet class lies below {key} ({word!r})"
                elif wordnet.ancestors(key) & classes:
                    reason = f"(iii) an ancestor of {key} ({word!r}) is an ImageNet class"
                elif siblings & covered:
                    reason = f"(ii) a sibling of {key} ({word!r}) is or holds an ImageNet class"
                if reason:
                    break
            if reason:
                break
        if reason:
            removed[name] = reason
        else:
            kept.append(name)
    _log.info(
        "ImageNet overlap filter removed %d of %d classes: %s",
        len(removed),
        len(class_names),
        ", ".join(removed),
    )
    return FilterResult("keyword synset overlaps ImageNet (criteria i-iii)", tuple(kept), removed)


@dataclass(frozen=True)
class ImageNetSplit:
    """Kim et al.'s ImageNet benchmark classes (wnids): in-distribution, near-OoD, the
    candidates discarded, and the external classes."""

    in_distribution: tuple[str, ...]
    near_ood: tuple[str, ...]
    discarded: tuple[str, ...]
    external: tuple[str, ...]

    def to_dict(self) -> dict:
        """JSON-ready record of the four class lists."""
        return {k: list(getattr(self, k)) for k in self.__dataclass_fields__}


def imagenet_split(
    imagenet_wnids: Sequence[str],
    wordnet: WordNet,
    *,
    in_distribution: Sequence[str] | None = None,
    n_near: int = 200,
    seed: int | np.random.Generator = 0,
) -> ImageNetSplit:
    """Kim et al.'s ImageNet split (Section 3.2, Fig. 4a).

    In-distribution: ImageNet-200, the 200 Tiny ImageNet classes (default
    :func:`tiny_imagenet_wnids`). Near-OoD candidates: the other ImageNet classes that descend
    from a parent (direct hypernym) of an in-distribution class; ``n_near`` of them drawn with
    ``seed`` form Near ImageNet-200, the other candidates are discarded; every remaining class is
    external (External ImageNet-394 in the paper; 395 with WordNet 3.0 here, see the docs). The
    authors' draw is not published, so the near-OoD classes differ from theirs.
    """
    classes = list(dict.fromkeys(imagenet_wnids))
    if len(classes) != len(imagenet_wnids):
        raise ValueError("imagenet_wnids must not repeat a class")
    ind = list(tiny_imagenet_wnids() if in_distribution is None else in_distribution)
    missing = sorted(set(ind) - set(classes))
    if missing:
        raise ValueError(f"in_distribution classes missing from imagenet_wnids: {missing[:5]}")
    for key in [*ind, *classes]:
        wordnet.name(key)  # a ValueError names an id that is not a WordNet noun synset
    parents = {p for key in ind for p in wordnet.parents[key]}
    inside = set(ind)
    candidates = [k for k in classes if k not in inside and wordnet.ancestors(k) & parents]
    if not isinstance(n_near, int) or not 0 < n_near <= len(candidates):
        raise ValueError(
            f"n_near must be an int in [1, {len(candidates)}] (the near-OoD candidates); "
            f"got {n_near!r}"
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    chosen = set(rng.choice(len(candidates), n_near, replace=False).tolist())
    near = tuple(c for i, c in enumerate(candidates) if i in chosen)
    discarded = tuple(c for i, c in enumerate(candidates) if i not in chosen)
    taken = inside | set(candidates)
    external = tuple(k for k in classes if k not in taken)
    return ImageNetSplit(tuple(ind), near, discarded, external)
