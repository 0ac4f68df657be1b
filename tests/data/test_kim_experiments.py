"""Kim et al.'s benchmark builders and loaders on small files in the real on-disk formats."""

from __future__ import annotations

from importlib.resources import files

import numpy as np
import pytest
from PIL import Image

from fdbench.data.shifts.splits import CIFAR100_CLASSES
from fdbench.data.suites.kim import (
    kim_cifar100_experiments,
    kim_imagenet_experiments,
    kim_released_experiments,
)
from fdbench.data.suites.kim_readers import (
    KIM_CIFAR_SETS,
    read_places365_val,
    read_released_set,
    read_tiny_imagenet_fix,
    resize_center_crop,
)
from fdbench.data.types import StudyKind
from fdbench.jobs.plan import load_config, parse_config
from fdbench.training.experiments import build_experiments
from tests.data.test_fdshifts import _write_cifar100, _write_svhn

CIFAR40 = ["apple", "bear", "beaver", "bed"]


def _png(path, rng, size=(32, 32)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(path)


def _released_cifar(root, rng):
    bench = root / "cifar-bench"
    for mode, n in (("train", 3), ("valid", 2), ("test", 2)):
        for cls in CIFAR40:
            base = bench / mode / "cifar40" / ("" if mode == "train" else "labels") / cls
            for i in range(n):
                _png(base / f"{i}.png", rng)
    for name, size in (
        ("cifar60", (32, 32)),
        ("svhn", (32, 32)),
        ("lsun-fix", (32, 32)),
        ("describable-textures", (57, 60)),
    ):
        for i in range(3):
            _png(bench / "test" / name / "no-labels" / "0" / f"{i}.png", rng, size)


def test_released_cifar_benchmark(tmp_path):
    rng = np.random.default_rng(0)
    _released_cifar(tmp_path, rng)
    (exp,) = kim_released_experiments(data_dir=tmp_path, seed=0)
    assert exp.class_names == tuple(CIFAR40)
    assert exp.train.images.shape == (12, 32, 32, 3) and len(exp.val) == 8
    kinds = {s.name: s.kind for s in exp.studies}
    assert kinds == {
        "iid": StudyKind.IID,
        "near_ood/cifar60": StudyKind.NEAR_OOD,
        "far_ood/svhn": StudyKind.FAR_OOD,
        "far_ood/lsun-fix": StudyKind.FAR_OOD,
        "far_ood/describable-textures": StudyKind.FAR_OOD,
    }
    dtd = next(s for s in exp.studies if s.name == "far_ood/describable-textures")
    assert dtd.images.shape == (3, 32, 32, 3) and (dtd.labels == -1).all()  # resized
    iid = exp.studies[0]
    assert np.bincount(iid.labels).tolist() == [2, 2, 2, 2]
    assert exp.split["external"] == "new-tinyimagenet158"
    (only,) = kim_released_experiments(data_dir=tmp_path, sets=["cifar60"])
    assert [s.name for s in only.studies] == ["iid", "near_ood/cifar60"]


def test_released_benchmark_errors_name_sets_and_missing_folders(tmp_path):
    with pytest.raises(ValueError, match="recognised sets: cifar60, svhn, lsun-fix, describ"):
        kim_released_experiments(data_dir=tmp_path, sets=["lsun"])
    with pytest.raises(FileNotFoundError) as err:
        kim_released_experiments(data_dir=tmp_path, sets=["svhn"])
    message = str(err.value)
    assert "cifar-bench/train/cifar40" in message and "test/svhn/no-labels" in message
    assert "\n" not in message
    with pytest.raises(ValueError, match="unknown cifar set 'x'; recognised sets: cifar40"):
        read_released_set(tmp_path, "cifar", "test", "x")
    assert set(KIM_CIFAR_SETS) >= {"cifar40", "cifar60", "new-tinyimagenet158", "lsun-fix"}


def _official_cifar(root, rng):
    _write_cifar100(root / "cifar-100-python", rng)
    _write_svhn(root / "svhn", rng)
    for cls in ("bedroom", "bridge"):
        for i in range(2):
            _png(root / "LSUN_fix" / cls / f"{i}.png", rng)
    for i in range(2):
        _png(root / "dtd" / "images" / "banded" / f"banded_{i}.jpg", rng, (300, 280))


def test_cifar100_benchmark_from_the_official_files(tmp_path, wordnet):
    rng = np.random.default_rng(1)
    _official_cifar(tmp_path, rng)
    (exp,) = kim_cifar100_experiments(
        data_dir=tmp_path, id_classes=CIFAR40, val_per_class=1, seed=0
    )
    assert exp.class_names == tuple(CIFAR40)
    assert len(exp.train) == 4 and len(exp.val) == 4  # 2 training images per class
    studies = {s.name: s for s in exp.studies}
    assert len(studies["iid"].labels) == 4 * 14 and set(studies["iid"].labels) == {0, 1, 2, 3}
    assert len(studies["near_ood/cifar60"].labels) == 96 * 14
    assert studies["far_ood/lsun_fix"].images.shape == (2, 32, 32, 3)  # bridge removed
    assert studies["far_ood/dtd"].images.shape == (2, 32, 32, 3)
    assert list(exp.split["wordnet_filter/lsun_fix"]["removed"]) == ["bridge"]
    assert len(exp.split["wordnet_filter/tiny_imagenet"]["removed"]) == 38
    assert sorted(exp.split["cifar60"]) == sorted(set(CIFAR100_CLASSES) - set(CIFAR40))


def test_cifar100_class_list_from_the_released_folders(tmp_path, wordnet):
    rng = np.random.default_rng(2)
    _official_cifar(tmp_path, rng)
    with pytest.raises(FileNotFoundError, match="cifar-bench/train/cifar40"):
        kim_cifar100_experiments(data_dir=tmp_path, far_ood=["svhn"], val_per_class=1)
    for cls in ("orchid", "maple_tree"):
        (tmp_path / "cifar-bench" / "train" / "cifar40" / cls).mkdir(parents=True)
    (exp,) = kim_cifar100_experiments(data_dir=tmp_path, far_ood=["svhn"], val_per_class=1)
    assert exp.class_names == ("maple_tree", "orchid")
    with pytest.raises(ValueError, match="unknown far_ood"):
        kim_cifar100_experiments(data_dir=tmp_path, far_ood=["lsun"])
    with pytest.raises(ValueError, match="CIFAR-100 fine class"):
        kim_cifar100_experiments(data_dir=tmp_path, id_classes=["dog"], far_ood=["svhn"])


def test_cifar100_missing_files_are_named_in_one_error(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        kim_cifar100_experiments(data_dir=tmp_path, id_classes=CIFAR40)
    for folder in ("cifar-100-python", "svhn", "LSUN_fix", "dtd"):
        assert folder in str(err.value)


#: Real WordNet ids: lion (in-distribution, parent big cat), tiger and leopard (big cats),
#: tabby (a domestic cat), chimpanzee, hotdog.
IMAGENET = ["n02129165", "n02129604", "n02128385", "n02123045", "n02481823", "n07697537"]


def _imagenet_tree(root, rng):
    for split, n in (("train", 3), ("val", 2)):
        for key in IMAGENET:
            for i in range(n):
                _png(root / "imagenet" / split / key / f"{key}_{i}.JPEG", rng, (40, 30))
    for cls in ("apple_pie", "hot_dog"):
        _png(root / "food-101" / "images" / cls / "1.jpg", rng, (50, 60))
    for cls in ("001.ak47", "038.chimp"):
        _png(root / "256_ObjectCategories" / cls / "1.jpg", rng, (50, 60))
    places = root / "places365"
    (places / "categories_places365.txt").parent.mkdir(parents=True)
    (places / "categories_places365.txt").write_text("/a/airfield 0\n/t/tiger_den 1\n")
    (places / "places365_val.txt").write_text(
        "Places365_val_00000001.jpg 0\nPlaces365_val_00000002.jpg 1\n"
    )
    for i in (1, 2):
        _png(places / "val_256" / f"Places365_val_0000000{i}.jpg", rng, (256, 256))


def test_imagenet_benchmark_on_a_fake_tree_with_real_wnids(tmp_path, wordnet):
    rng = np.random.default_rng(3)
    _imagenet_tree(tmp_path, rng)
    (exp,) = kim_imagenet_experiments(
        data_dir=tmp_path, in_distribution=["n02129165"], n_near=1, val_per_class=1, seed=0
    )
    assert exp.class_names == ("lion",)
    assert exp.train.images.shape == (2, 224, 224, 3) and len(exp.val) == 1
    split = exp.split
    assert len(split["near_ood"]) == 1 and set(split["near_ood"]) < {"n02129604", "n02128385"}
    assert len(split["discarded"]) == 1
    assert split["external"] == ["n02123045", "n02481823", "n07697537"]
    assert list(split["wordnet_filter/food101"]["removed"]) == ["hot_dog"]
    assert list(split["wordnet_filter/caltech256"]["removed"]) == ["chimp"]  # as chimpanzee
    assert list(split["wordnet_filter/places365"]["removed"]) == ["tiger_den"]
    studies = {s.name: s for s in exp.studies}
    assert studies["iid"].images.shape == (2, 224, 224, 3)
    assert studies["near_ood/near_imagenet"].kind == StudyKind.NEAR_OOD
    assert len(studies["near_ood/near_imagenet"].labels) == 2
    for far in ("food101", "caltech256", "places365"):
        assert len(studies[f"far_ood/{far}"].labels) == 1
        assert studies[f"far_ood/{far}"].kind == StudyKind.FAR_OOD
    with pytest.raises(FileNotFoundError, match="food-101"):
        kim_imagenet_experiments(data_dir=tmp_path / "none")


def test_places365_reader_and_imagenet_transform(tmp_path):
    rng = np.random.default_rng(4)
    _imagenet_tree(tmp_path, rng)
    ds = read_places365_val(tmp_path / "places365", resize_center_crop())
    assert ds.class_names == ("airfield", "tiger_den") and ds.labels.tolist() == [0, 1]
    assert ds.images.shape == (2, 224, 224, 3)
    with pytest.raises(FileNotFoundError, match=r"places365_val\.txt"):
        read_places365_val(tmp_path, resize_center_crop())


def test_released_config_builds_through_the_builder_lookup(tmp_path):
    _released_cifar(tmp_path, np.random.default_rng(5))
    shipped = load_config(files("fdbench") / "configs" / "kim_cifar100_released.yaml")
    data = shipped.model_dump(mode="json")
    data["data"]["args"]["data_dir"] = str(tmp_path)
    (exp,) = build_experiments(parse_config(data, source="kim"))
    assert exp.name == "kim_cifar" and len(exp.studies) == 5


def test_tiny_imagenet_fix_external_set_without_the_overlapping_classes(tmp_path, wordnet):
    rng = np.random.default_rng(6)
    for key in ("n02437312", "n01641577", "n02124075"):  # Arabian camel, bullfrog, Egyptian cat
        for i in range(2):
            _png(tmp_path / "fix" / key / f"{i}.png", rng)
    ds, record = read_tiny_imagenet_fix(tmp_path / "fix", wordnet)
    assert ds.class_names == ("n01641577", "n02124075") and ds.images.shape == (4, 32, 32, 3)
    assert list(record.removed) == ["n02437312"]
    _png(tmp_path / "fix" / "n99999999" / "0.png", rng)
    with pytest.raises(ValueError, match="n99999999"):
        read_tiny_imagenet_fix(tmp_path / "fix", wordnet)
