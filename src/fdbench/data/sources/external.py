"""External (auxiliary outlier) data sets for Outlier Exposure and ODIN's hyper-parameter search.

Kim et al. ("A Unified Benchmark for the Unknown Detection Capability of Deep Neural
Networks", Section 3) keep one *external* data set apart from every test set: Outlier
Exposure trains on it and ODIN / OpenMax select their hyper-parameters on it (the authors'
``test.py``: ``out_data['VAL'] = 'new-tinyimagenet158'``), and it must not overlap the
in-distribution, near-OoD or far-OoD classes. For the embedded Fashion-MNIST benchmark,
whose far-OoD sets are MNIST, Animal-MNIST, digits, textures and noise
(:data:`fdbench.data.suites.fashion_mnist.NONSEMANTIC_DATASETS`), the external set is
:func:`shapes`: seeded drawings of filled geometric shapes, a class of images none of those sets
(nor garments) contains, generated here so that no test image can leak into training.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from fdbench.data.sources.catalog import DATASETS
from fdbench.data.types import ImageDataset

if TYPE_CHECKING:
    from fdbench.data.types import Experiment

__all__ = [
    "EXTERNAL_CLASSES",
    "EXTERNAL_SETS",
    "SHAPES_CLASSES",
    "check_external_disjoint",
    "check_external_for_experiment",
    "check_external_name",
    "load_external",
    "shapes",
]

#: Classes of :func:`shapes`: the kind of filled shape drawn in an image.
SHAPES_CLASSES = ("ellipse", "rectangle", "triangle", "star")


def shapes(n: int, *, size: int = 28, channels: int = 1, seed: int = 0) -> ImageDataset:
    """``n`` seeded images of filled geometric shapes on a dark background (label: the kind).

    Each image holds 1–3 shapes of one kind of :data:`SHAPES_CLASSES` (the label, drawn
    uniformly), each at a uniform position with a size of 20–60 % of the side, a uniform
    rotation and a grey level (or colour) in [80, 255] over a background in [0, 40]; drawn
    with Pillow at 4× resolution and box-downsampled (anti-aliased edges). A deterministic
    function of ``(n, size, channels, seed)``.
    """
    from PIL import Image, ImageDraw

    if not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    if not isinstance(size, int | np.integer) or size < 8:
        raise ValueError(f"size must be an int >= 8, got {size!r}")
    if channels not in (1, 3):
        raise ValueError(f"channels must be 1 or 3, got {channels!r}")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), *b"external/shapes"]))
    big = 4 * int(size)
    labels = rng.integers(0, len(SHAPES_CLASSES), size=int(n)).astype(np.int64)
    images = np.empty((int(n), int(size), int(size), channels), dtype=np.uint8)
    mode = "L" if channels == 1 else "RGB"
    for i, label in enumerate(labels):
        background = rng.integers(0, 41, size=channels)
        canvas = Image.new(mode, (big, big), _colour(background))
        draw = ImageDraw.Draw(canvas)
        for _ in range(int(rng.integers(1, 4))):
            radius = rng.uniform(0.1, 0.3) * big
            centre = rng.uniform(radius, big - radius, size=2)
            angle = rng.uniform(0.0, 2.0 * np.pi)
            fill = _colour(rng.integers(80, 256, size=channels))
            draw.polygon(_outline(SHAPES_CLASSES[label], centre, radius, angle, rng), fill=fill)
        small = canvas.resize((int(size), int(size)), Image.BOX)
        images[i] = np.asarray(small).reshape(int(size), int(size), channels)
    return ImageDataset("shapes", images, labels, SHAPES_CLASSES)


def _colour(values: np.ndarray) -> int | tuple[int, ...]:
    return int(values[0]) if values.size == 1 else tuple(int(v) for v in values)


def _outline(
    kind: str, centre: np.ndarray, radius: float, angle: float, rng: np.random.Generator
) -> list[tuple[float, float]]:
    """Vertices of one shape of ``kind`` around ``centre``, rotated by ``angle``."""
    if kind == "ellipse":
        t = np.linspace(0.0, 2.0 * np.pi, 48, endpoint=False)
        points = np.stack([np.cos(t), rng.uniform(0.4, 1.0) * np.sin(t)], axis=1)
    elif kind == "rectangle":
        h = rng.uniform(0.3, 0.8)
        points = np.array([[-1.0, -h], [1.0, -h], [1.0, h], [-1.0, h]]) / np.sqrt(1 + h * h)
    elif kind == "triangle":
        t = np.array([0.0, 2.0, 4.0]) * np.pi / 3 + rng.uniform(-0.3, 0.3, 3)
        points = np.stack([np.cos(t), np.sin(t)], axis=1)
    else:
        t = np.arange(10) * np.pi / 5
        r = np.where(np.arange(10) % 2 == 0, 1.0, 0.45)
        points = np.stack([r * np.cos(t), r * np.sin(t)], axis=1)
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    xy = points @ rot.T * radius + centre
    return [(float(x), float(y)) for x, y in xy]


#: External data sets by name: builder ``(n, size=, channels=, seed=) -> ImageDataset``.
EXTERNAL_SETS = {"shapes": shapes}
#: The class names of each external set.
EXTERNAL_CLASSES = {"shapes": SHAPES_CLASSES}


def check_external_name(name: str) -> str:
    """Return ``name`` if it names an external set of :data:`EXTERNAL_SETS`, else raise
    ``ValueError``: the check of the ``external`` parameter of Outlier Exposure and ODIN."""
    if name not in EXTERNAL_SETS:
        raise ValueError(f"external must be one of {sorted(EXTERNAL_SETS)}, got {name!r}")
    return name


def load_external(name: str, n: int, *, size: int, channels: int, seed: int = 0) -> ImageDataset:
    """``n`` images of the external set ``name`` (one of :data:`EXTERNAL_SETS`) in the
    training format ``size`` × ``size`` × ``channels``."""
    if name not in EXTERNAL_SETS:
        raise ValueError(f"external set must be one of {sorted(EXTERNAL_SETS)}, got {name!r}")
    return EXTERNAL_SETS[name](n, size=size, channels=channels, seed=seed)


def _key(name: str) -> str:
    """A class or set name compared case- and separator-insensitively (``Ankle boot`` =
    ``ankle_boot``)."""
    return re.sub(r"[\s_\-/]+", " ", str(name)).strip().lower()


def check_external_disjoint(
    external: str,
    external_classes: Iterable[str],
    *,
    in_classes: Iterable[str],
    near_ood_classes: Iterable[str],
    far_ood: Mapping[str, Sequence[str] | None],
) -> None:
    """Raise ``ValueError`` unless the external set is disjoint from every test set.

    Kim et al. (Section 3): "samples from the in-distribution dataset should not be
    semantically overlapped with those from far-OoD or from an external dataset", and the
    external set "does not overlap with the near-/far-OoD datasets". Checked by name:
    ``external`` must not be one of the far-OoD sets (``far_ood`` maps each set's name to its
    class names, or ``None`` when they are unknown; a name of
    :data:`fdbench.data.sources.catalog.DATASETS` gets that registry's classes), and no class of
    ``external_classes`` may name an in-distribution, near-OoD or far-OoD class. Names are
    compared ignoring case and separators. The message lists every conflict.
    """
    if not isinstance(external, str) or not external:
        raise TypeError(f"external must be a non-empty str, got {external!r}")
    if not isinstance(far_ood, Mapping):
        raise TypeError(f"far_ood must map set names to class names, got {type(far_ood)}")
    mine = {_key(c): c for c in external_classes}
    problems = []
    for name, classes in far_ood.items():
        if _key(name) == _key(external):
            problems.append(f"it is the far-OoD test set {name!r}")
        known = DATASETS.get(name) if classes is None else classes
        shared = sorted(mine[k] for k in {_key(c) for c in known or ()} & mine.keys())
        if shared:
            problems.append(f"classes {shared} are classes of the far-OoD set {name!r}")
    for role, classes in (("near-OoD", near_ood_classes), ("in-distribution", in_classes)):
        shared = sorted(mine[k] for k in {_key(c) for c in classes} & mine.keys())
        if shared:
            problems.append(f"classes {shared} are {role} classes")
    if problems:
        raise ValueError(
            f"external set {external!r} must be disjoint from the test sets (Kim et al., "
            f"Section 3): {'; '.join(problems)}"
        )


#: Study kinds (values) of far-OoD and near-OoD samples.
_FAR_KINDS = ("new_class_nonsemantic", "far_ood")
_NEAR_KINDS = ("new_class_semantic", "near_ood")


def check_external_for_experiment(
    external: str, experiment: Experiment, *, external_classes: Iterable[str] | None = None
) -> None:
    """:func:`check_external_disjoint` of the external set ``external`` (its classes:
    :data:`EXTERNAL_CLASSES` unless given) against ``experiment``.

    In-distribution classes: ``experiment.class_names``. Far-OoD sets: the studies of a
    far-OoD kind (``new_class_nonsemantic``, ``far_ood``), named ``<prefix>/<set>``, with the
    set's classes where :data:`~fdbench.data.sources.catalog.DATASETS` knows it. Near-OoD classes,
    where the experiment has a near-OoD study (``new_class_semantic``, ``near_ood``): the
    classes of the training data set (``experiment.train.name`` in ``DATASETS``) that are not
    trained on, and ``experiment.split["held_out_names"]`` where recorded.
    """
    if external_classes is None:
        if external not in EXTERNAL_SETS:
            raise ValueError(
                f"external set must be one of {sorted(EXTERNAL_SETS)} or come with "
                f"external_classes, got {external!r}"
            )
        external_classes = EXTERNAL_CLASSES[external]
    kinds = {s.kind.value for s in experiment.studies}
    far = {
        s.name.rsplit("/", 1)[-1]: None for s in experiment.studies if s.kind.value in _FAR_KINDS
    }
    near: list[str] = []
    if kinds & set(_NEAR_KINDS):
        trained = {_key(c) for c in experiment.class_names}
        source = DATASETS.get(experiment.train.name, ())
        near = [c for c in source if _key(c) not in trained]
        near += list((experiment.split or {}).get("held_out_names", []))
    check_external_disjoint(
        external,
        external_classes,
        in_classes=experiment.class_names,
        near_ood_classes=near,
        far_ood=far,
    )
