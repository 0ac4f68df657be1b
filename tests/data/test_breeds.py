"""BREEDS hierarchy reader, ENTITY-13 construction and FD-Shifts' BREEDS experiment on small
files written in the robustness library's and ImageNet's layouts."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench.data.suites.breeds import (
    BREEDS_FILES,
    entity13,
    fdshifts_breeds_experiments,
    read_breeds_hierarchy,
)
from fdbench.data.types import StudyKind
from tests.data._robustness_layouts import (
    BREEDS_SUPERS,
    SIZE,
    breeds_leaves,
    write_breeds,
    write_breeds_hierarchy,
)


@pytest.fixture(scope="module")
def breeds(tmp_path_factory):
    root = tmp_path_factory.mktemp("breeds")
    write_breeds(root)
    return root


def test_hierarchy_depths_and_leaves(tmp_path):
    write_breeds_hierarchy(tmp_path)
    h = read_breeds_hierarchy(tmp_path)
    assert h.depth["n00001740"] == 0 and h.depth["n10000001"] == 3
    assert h.leaves_below("n10000002") == breeds_leaves(1)
    assert h.leaves_below("n00000002") == sorted(
        breeds_leaves(0) + breeds_leaves(1) + [f"n29{k:06d}" for k in range(3)]
    )


def test_entity13_rule(tmp_path):
    # depth-3 nodes with >= 20 leaves, sorted; one RandomState(2) for all of them in that order;
    # 20 of the sorted leaves drawn without replacement: first 10 source, last 10 target
    write_breeds_hierarchy(tmp_path)
    split = entity13(read_breeds_hierarchy(tmp_path))
    assert split.superclasses == BREEDS_SUPERS  # the 3-leaf node is too small
    assert split.names == ("garment", "bird")
    rng = np.random.RandomState(2)
    for i in range(2):
        pool = np.array(breeds_leaves(i))
        drawn = pool[rng.permutation(20)]
        assert split.source[i] == tuple(drawn[:10]) and split.target[i] == tuple(drawn[10:])


def test_missing_hierarchy_files_named(tmp_path):
    write_breeds_hierarchy(tmp_path)
    (tmp_path / "node_names.txt").unlink()
    (tmp_path / "class_hierarchy.txt").unlink()
    with pytest.raises(FileNotFoundError) as info:
        read_breeds_hierarchy(tmp_path)
    message = str(info.value)
    assert "class_hierarchy.txt" in message and "node_names.txt" in message
    assert "dataset_class_info.json," not in message.split("download")[0]
    assert "MadryLab/BREEDS-Benchmarks" in message and set(BREEDS_FILES) <= set(
        message.replace(",", " ").split()
    )


def test_malformed_hierarchy(tmp_path):
    write_breeds_hierarchy(tmp_path)
    (tmp_path / "class_hierarchy.txt").write_text("n00001740 n00000001\nbroken\n")
    with pytest.raises(ValueError, match=r"class_hierarchy\.txt: line 2 must be 'parent child'"):
        read_breeds_hierarchy(tmp_path)
    write_breeds_hierarchy(tmp_path)
    (tmp_path / "dataset_class_info.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"dataset_class_info\.json: expected a JSON list"):
        read_breeds_hierarchy(tmp_path)


def test_experiment(breeds):
    (exp,) = fdshifts_breeds_experiments(data_dir=breeds, image_size=SIZE, hold_out=30, n_val=10)
    split = entity13(read_breeds_hierarchy(breeds / "breeds"))
    assert exp.name == "breeds_entity13" and exp.class_names == ("garment", "bird")
    # 2 superclasses x 10 source classes x 4 images = 80 source images: 30 held out
    assert len(exp.train) == 50 and len(exp.val) == 10
    iid, sub = exp.studies
    assert (iid.name, iid.kind, iid.labels.size) == ("iid", StudyKind.IID, 20)
    assert (sub.name, sub.kind) == ("subclass", StudyKind.SUBCLASS)
    # every target image, labelled with its superclass, in ImageFolder order
    expected = [i for w in sorted(split.target[0] + split.target[1])
                for i in [int(w in split.target[1])] * 4]  # fmt: skip
    assert list(sub.labels) == expected
    # the hold-out is the start of the default_rng(12345) shuffle of the source images
    source = sorted(split.source[0] + split.source[1])
    labels = np.repeat([int(w in split.source[1]) for w in source], 4)
    order = list(range(80))
    np.random.default_rng(12345).shuffle(order)
    np.testing.assert_array_equal(exp.val.labels, labels[order[:10]])
    np.testing.assert_array_equal(exp.train.labels, labels[order[30:]])
    assert exp.train.images.shape[1:] == (SIZE, SIZE, 3)


def test_missing_imagenet(breeds, tmp_path):
    with pytest.raises(FileNotFoundError, match=r"imagenet/train is missing \(ImageNet-1k"):
        fdshifts_breeds_experiments(data_dir=tmp_path, hierarchy_dir=breeds / "breeds")
    (tmp_path / "imagenet" / "train" / breeds_leaves(0)[0]).mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"ImageNet class folders missing .* \(39 of 40"):
        fdshifts_breeds_experiments(data_dir=tmp_path, hierarchy_dir=breeds / "breeds")
    with pytest.raises(FileNotFoundError, match="BREEDS hierarchy files are missing"):
        fdshifts_breeds_experiments(data_dir=tmp_path)


@pytest.mark.parametrize(
    ("name", "value"), [("max_per_study", 0), ("max_train", 1.5), ("image_size", 4), ("n_val", 0)]
)
def test_bad_arguments_are_named(breeds, name, value):
    with pytest.raises(ValueError, match=f"^{name} must be"):
        fdshifts_breeds_experiments(data_dir=breeds, **{name: value})


def test_hold_out_larger_than_source(breeds):
    with pytest.raises(ValueError, match="needs more than 10000 source images"):
        fdshifts_breeds_experiments(data_dir=breeds)
    with pytest.raises(ValueError, match="hold_out must be an int > n_val"):
        fdshifts_breeds_experiments(data_dir=breeds, hold_out=5, n_val=10)
