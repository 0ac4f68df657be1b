"""Class splits that create shifts: sub-class, semantic and non-semantic new-class, super-class."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: Fashion-MNIST super-classes (class indices of the official label order): tops (upper-body
#: garments: T-shirt/top, Pullover, Coat, Shirt), footwear (Sandal, Sneaker, Ankle boot) and
#: other (Trouser, Dress, Bag: garments and accessories that are neither tops nor shoes). Each
#: super-class has ≥ 3 sub-classes, so holding one out leaves ≥ 2 for training.
FASHION_MNIST_SUPERCLASSES: dict[str, tuple[int, ...]] = {
    "tops": (0, 2, 4, 6),
    "footwear": (5, 7, 9),
    "other": (1, 3, 8),
}

#: CIFAR-100's 20 super-classes and their fine classes (Krizhevsky, 2009).
CIFAR100_SUPERCLASSES: dict[str, tuple[str, ...]] = {
    "aquatic_mammals": ("beaver", "dolphin", "otter", "seal", "whale"),
    "fish": ("aquarium_fish", "flatfish", "ray", "shark", "trout"),
    "flowers": ("orchid", "poppy", "rose", "sunflower", "tulip"),
    "food_containers": ("bottle", "bowl", "can", "cup", "plate"),
    "fruit_and_vegetables": ("apple", "mushroom", "orange", "pear", "sweet_pepper"),
    "household_electrical_devices": ("clock", "keyboard", "lamp", "telephone", "television"),
    "household_furniture": ("bed", "chair", "couch", "table", "wardrobe"),
    "insects": ("bee", "beetle", "butterfly", "caterpillar", "cockroach"),
    "large_carnivores": ("bear", "leopard", "lion", "tiger", "wolf"),
    "large_man-made_outdoor_things": ("bridge", "castle", "house", "road", "skyscraper"),
    "large_natural_outdoor_scenes": ("cloud", "forest", "mountain", "plain", "sea"),
    "large_omnivores_and_herbivores": ("camel", "cattle", "chimpanzee", "elephant", "kangaroo"),
    "medium_mammals": ("fox", "porcupine", "possum", "raccoon", "skunk"),
    "non-insect_invertebrates": ("crab", "lobster", "snail", "spider", "worm"),
    "people": ("baby", "boy", "girl", "man", "woman"),
    "reptiles": ("crocodile", "dinosaur", "lizard", "snake", "turtle"),
    "small_mammals": ("hamster", "mouse", "rabbit", "shrew", "squirrel"),
    "trees": ("maple_tree", "oak_tree", "palm_tree", "pine_tree", "willow_tree"),
    "vehicles_1": ("bicycle", "bus", "motorcycle", "pickup_truck", "train"),
    "vehicles_2": ("lawn_mower", "rocket", "streetcar", "tank", "tractor"),
}
CIFAR100_CLASSES = tuple(sorted(c for fine in CIFAR100_SUPERCLASSES.values() for c in fine))


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def cifar100_superclasses(*, drop: Sequence[str] = ("vehicles_2",)) -> dict[str, tuple[int, ...]]:
    """CIFAR-100 super-class → fine class indices (alphabetical fine label order).

    FD-Shifts (Jaeger et al., ICLR 2023) drops "vehicles 2" for its sub-class shift (19
    super-classes), which is the default here.
    """
    unknown = set(drop) - set(CIFAR100_SUPERCLASSES)
    if unknown:
        raise ValueError(f"drop must name CIFAR-100 super-classes; unknown: {sorted(unknown)}")
    index = {name: i for i, name in enumerate(CIFAR100_CLASSES)}
    return {
        s: tuple(index[c] for c in fine)
        for s, fine in CIFAR100_SUPERCLASSES.items()
        if s not in drop
    }


def _check_superclasses(superclasses: Mapping[str, Sequence[int]]) -> dict[str, tuple[int, ...]]:
    if not isinstance(superclasses, Mapping) or not superclasses:
        raise TypeError("superclasses must be a non-empty mapping super-class → class indices")
    out = {str(k): tuple(int(c) for c in v) for k, v in superclasses.items()}
    flat = [c for v in out.values() for c in v]
    if len(flat) != len(set(flat)) or min(flat) < 0:
        raise ValueError("superclasses must map each non-negative class index to one super-class")
    return out


@dataclass(frozen=True, eq=False)
class SubclassShift:
    """A super-class task with one sub-class per super-class held out of training.

    ``super_names[i]`` is super-class ``i``; ``class_to_super[c]`` is the super-class of class
    ``c`` (−1 for classes outside every super-class); ``held_out`` lists the held-out classes.
    """

    super_names: tuple[str, ...]
    class_to_super: np.ndarray
    held_out: tuple[int, ...]

    def super_labels(self, labels: np.ndarray) -> np.ndarray:
        """Super-class label of every fine label (−1 for classes outside the map)."""
        labels = np.asarray(labels, dtype=np.int64)
        return self.class_to_super[labels]

    def train_mask(self, labels: np.ndarray) -> np.ndarray:
        """Samples of the training task: mapped classes that are not held out."""
        labels = np.asarray(labels, dtype=np.int64)
        return (self.class_to_super[labels] >= 0) & ~np.isin(labels, self.held_out)

    def held_out_mask(self, labels: np.ndarray) -> np.ndarray:
        """Samples of held-out sub-classes (the sub-class shift study)."""
        return np.isin(np.asarray(labels, dtype=np.int64), self.held_out)


def subclass_shift(
    superclasses: Mapping[str, Sequence[int]], n_classes: int, *, seed: int | np.random.Generator
) -> SubclassShift:
    """Hold out one seeded sub-class of every super-class (sub-class shift, FD-Shifts / BREEDS).

    Training uses the super-class labels of the remaining sub-classes; testing on the held-out
    sub-classes, labelled with their super-class, measures a covariate shift within each class.
    """
    superclasses = _check_superclasses(superclasses)
    if max(c for v in superclasses.values() for c in v) >= n_classes:
        raise ValueError(f"superclasses must use class indices below n_classes={n_classes}")
    if any(len(v) < 2 for v in superclasses.values()):
        raise ValueError("every super-class needs at least 2 sub-classes to hold one out")
    rng = _rng(seed)
    class_to_super = np.full(n_classes, -1, dtype=np.int64)
    held_out = []
    for i, classes in enumerate(superclasses.values()):
        class_to_super[list(classes)] = i
        held_out.append(int(rng.choice(classes)))
    return SubclassShift(tuple(superclasses), class_to_super, tuple(held_out))


def semantic_split(
    n_classes: int, *, fraction: float = 0.4, seed: int | np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (known, held_out) sorted class indices; ``round(fraction · n_classes)`` held out.

    Semantic new-class shift (FD-Shifts): held-out classes never appear in training and their
    test samples count as unknown (label −1).
    """
    if not isinstance(n_classes, int | np.integer) or n_classes < 2:
        raise ValueError(f"n_classes must be an int ≥ 2; got {n_classes!r}")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1); got {fraction}")
    n_out = min(max(1, round(fraction * n_classes)), n_classes - 1)
    perm = _rng(seed).permutation(n_classes)
    return np.sort(perm[n_out:]).astype(np.int64), np.sort(perm[:n_out]).astype(np.int64)


def relabel(labels: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Map labels into the training label space: ``known[j]`` → ``j``, every other class → −1."""
    labels = np.asarray(labels, dtype=np.int64)
    known = np.asarray(known, dtype=np.int64)
    lookup = np.full(max(int(labels.max(initial=0)), int(known.max(initial=0))) + 1, -1, np.int64)
    lookup[known] = np.arange(known.size)
    return lookup[labels]


def to_format(images: np.ndarray, height: int, width: int, channels: int) -> np.ndarray:
    """Convert uint8 N×H×W×C images to ``height``×``width``×``channels`` (non-semantic shift).

    Resizing uses Pillow's bilinear filter (with its anti-aliasing when shrinking); grey → RGB
    repeats the channel, RGB → grey uses Pillow's ITU-R 601-2 luma ("L" mode).
    """
    from PIL import Image

    if not isinstance(images, np.ndarray) or images.dtype != np.uint8 or images.ndim != 4:
        raise TypeError("images must be a uint8 numpy array of shape N×H×W×C")
    if images.shape[-1] not in (1, 3) or channels not in (1, 3):
        raise ValueError(f"channels must be 1 or 3; got {images.shape[-1]} → {channels}")
    if height < 1 or width < 1:
        raise ValueError(f"height and width must be ≥ 1; got {height}×{width}")
    same_size = images.shape[1:3] == (height, width)
    out = np.empty((images.shape[0], height, width, channels), dtype=np.uint8)
    for i, img in enumerate(images):
        pil = Image.fromarray(img[..., 0] if img.shape[-1] == 1 else img)
        if not same_size:
            pil = pil.resize((width, height), Image.BILINEAR)
        pil = pil.convert("L" if channels == 1 else "RGB")
        out[i] = np.asarray(pil).reshape(height, width, channels)
    return out


def kim_split(
    superclasses: Mapping[str, Sequence[int]],
    *,
    per_superclass: int = 2,
    seed: int | np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """A seeded super-class split in the style of Kim et al. (2023): (in_distribution, near_ood).

    ``per_superclass`` classes of every super-class, drawn with ``seed``, are in-distribution,
    the rest near-OoD. This is a variant, not Kim et al.'s split: their CIFAR-40 / CIFAR-60 is
    one fixed draw, read from their released folders by
    :func:`fdbench.data.suites.kim.kim_cifar100_experiments`.
    """
    superclasses = _check_superclasses(superclasses)
    if per_superclass < 1 or any(len(v) <= per_superclass for v in superclasses.values()):
        raise ValueError("per_superclass must be ≥ 1 and smaller than every super-class's size")
    rng = _rng(seed)
    inside, outside = [], []
    for classes in superclasses.values():
        perm = rng.permutation(np.asarray(classes, dtype=np.int64))
        inside.extend(perm[:per_superclass])
        outside.extend(perm[per_superclass:])
    return np.sort(np.array(inside, dtype=np.int64)), np.sort(np.array(outside, dtype=np.int64))
