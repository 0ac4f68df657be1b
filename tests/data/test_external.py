"""External data sets: the generated shapes and the disjointness check of Kim et al."""

import numpy as np
import pytest

from fdbench.data.sources.catalog import FASHION_MNIST_CLASSES, content_sha256
from fdbench.data.sources.external import (
    SHAPES_CLASSES,
    check_external_disjoint,
    check_external_name,
    load_external,
    shapes,
)
from fdbench.data.suites.fashion_mnist import NONSEMANTIC_DATASETS


def test_shapes_are_seeded_images_in_the_training_format():
    a = shapes(12, size=28, channels=1, seed=5)
    assert a.images.shape == (12, 28, 28, 1) and a.images.dtype == np.uint8
    assert a.class_names == SHAPES_CLASSES
    assert content_sha256(a) == content_sha256(shapes(12, size=28, channels=1, seed=5))
    assert content_sha256(a) != content_sha256(shapes(12, size=28, channels=1, seed=6))
    # a bright shape on a dark background in every image
    assert (a.images.reshape(12, -1).max(axis=1) >= 60).all()
    assert (np.median(a.images.reshape(12, -1), axis=1) <= 40).all()
    rgb = load_external("shapes", 3, size=32, channels=3, seed=0)
    assert rgb.images.shape == (3, 32, 32, 3)
    with pytest.raises(ValueError, match="external set must be one of"):
        load_external("tiny_imagenet", 3, size=32, channels=3)
    with pytest.raises(ValueError, match="channels"):
        shapes(2, channels=2)


def test_check_external_name_passes_a_known_set_and_names_the_known_ones():
    assert check_external_name("shapes") == "shapes"
    with pytest.raises(ValueError, match=r"^external must be one of \['shapes'\], got 'svhn'$"):
        check_external_name("svhn")


def _check(external, classes, near=("Coat", "Bag")):
    in_classes = [c for c in FASHION_MNIST_CLASSES if c not in near]
    check_external_disjoint(
        external,
        classes,
        in_classes=in_classes,
        near_ood_classes=near,
        far_ood={name: None for name in NONSEMANTIC_DATASETS},
    )


def test_shapes_are_disjoint_from_the_embedded_test_sets():
    _check("shapes", SHAPES_CLASSES)


@pytest.mark.parametrize(
    ("external", "classes", "message"),
    [
        ("mnist", ("0", "1"), "far-OoD test set 'mnist'"),
        ("mine", ("zebra", "star"), r"\['zebra'\] are classes of the far-OoD set 'animal_mnist'"),
        ("mine", ("bag",), r"\['bag'\] are near-OoD classes"),
        ("mine", ("ankle_boot",), r"\['ankle_boot'\] are in-distribution classes"),
        ("mine", ("Salt-and-pepper",), "far-OoD set 'noise'"),
    ],
)
def test_overlap_is_a_clear_error(external, classes, message):
    with pytest.raises(ValueError, match=message):
        _check(external, classes)


def test_far_ood_classes_may_be_given():
    with pytest.raises(ValueError, match="'lsun-fix'"):
        check_external_disjoint("tin", ["tower", "church"], in_classes=[], near_ood_classes=[],
                                far_ood={"lsun-fix": ["church", "bedroom"]})  # fmt: skip
    with pytest.raises(TypeError, match="far_ood"):
        check_external_disjoint("tin", [], in_classes=[], near_ood_classes=[], far_ood=["x"])


def _experiment():
    from fdbench.data.types import Experiment, ImageDataset, Study, StudyKind

    known = tuple(c for c in FASHION_MNIST_CLASSES if c not in ("Coat", "Bag", "Shirt"))
    img = np.zeros((2, 28, 28, 1), dtype=np.uint8)
    train = ImageDataset("fashion_mnist", img, np.zeros(2, dtype=np.int64), known)
    new = np.full(2, -1, dtype=np.int64)
    studies = [Study("iid", StudyKind.IID, img, np.zeros(2, dtype=np.int64)),
               Study("new_class/semantic", StudyKind.NEW_CLASS_SEMANTIC, img, new)]  # fmt: skip
    studies += [
        Study(f"new_class/{name}", StudyKind.NEW_CLASS_NONSEMANTIC, img, new)
        for name in NONSEMANTIC_DATASETS
    ]
    return Experiment("fashion_mnist", known, train, train, tuple(studies))


def test_check_against_an_experiment():
    from fdbench.data.sources.external import check_external_for_experiment

    experiment = _experiment()
    check_external_for_experiment("shapes", experiment)
    with pytest.raises(ValueError, match=r"\['coat'\] are near-OoD classes"):
        check_external_for_experiment("mine", experiment, external_classes=["coat", "star"])
    with pytest.raises(ValueError, match="far-OoD test set 'textures'"):
        check_external_for_experiment("textures", experiment, external_classes=["brick2"])
    with pytest.raises(ValueError, match="external set must be one of"):
        check_external_for_experiment("textures", experiment)
