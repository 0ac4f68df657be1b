"""Your own data: image-folder trees, MedMNIST-style .npz and 'module:callable' builders."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from fdbench.data.suites.custom import folder_experiments, npz_experiments, read_image_folder
from fdbench.data.types import Experiment, StudyKind
from fdbench.jobs.plan import parse_config
from fdbench.training.experiments import build_experiments


def _png(path, value, size=(4, 4), mode="L"):
    path.parent.mkdir(parents=True, exist_ok=True)
    shape = (size[1], size[0]) if mode == "L" else (size[1], size[0], 3)
    Image.fromarray(np.full(shape, value, dtype=np.uint8), mode=mode).save(path)


def _tree(root, *, val=True, mode="L"):
    """train: cat 0..4, dog 0..4 (pixel value 10·i + class); test: 2 each; two studies."""
    for c, cls in enumerate(("cat", "dog")):
        for i in range(5):
            _png(root / "train" / cls / f"{i}.png", 10 * i + c, mode=mode)
        for i in range(2):
            _png(root / "test" / cls / f"{i}.png", 100 + c, mode=mode)
            _png(root / "blurred" / cls / f"{i}.png", 150 + c, mode=mode)
        if val:
            _png(root / "val" / cls / "0.png", 200 + c, mode=mode)
    for i in range(3):
        _png(root / "ood" / "deep" / f"{i}.jpg", 250, mode=mode)
    return root


STUDIES = {"corruption/blur": {"kind": "corruption", "path": "blurred"},
           "new_class/ood": {"kind": "new_class_semantic", "path": "ood"}}  # fmt: skip


def test_folder_tree_becomes_one_experiment(tmp_path):
    root = _tree(tmp_path / "pets")
    (exp,) = folder_experiments(root=str(root), studies=STUDIES)
    assert exp.name == "pets" and exp.class_names == ("cat", "dog")
    assert exp.train.images.shape == (10, 4, 4, 1) and exp.train.images.dtype == np.uint8
    np.testing.assert_array_equal(exp.train.labels, [0] * 5 + [1] * 5)
    np.testing.assert_array_equal(exp.train.images[:, 0, 0, 0], [0, 10, 20, 30, 40,
                                                                 1, 11, 21, 31, 41])  # fmt: skip
    np.testing.assert_array_equal(exp.val.images[:, 0, 0, 0], [200, 201])
    assert [(s.name, s.kind) for s in exp.studies] == [
        ("iid", StudyKind.IID), ("corruption/blur", StudyKind.CORRUPTION),
        ("new_class/ood", StudyKind.NEW_CLASS_SEMANTIC),
    ]  # fmt: skip
    blur = exp.studies[1]
    np.testing.assert_array_equal(blur.labels, [0, 0, 1, 1])
    np.testing.assert_array_equal(blur.images[:, 0, 0, 0], [150, 150, 151, 151])
    ood = exp.studies[2]
    assert ood.images.shape == (3, 4, 4, 1) and (ood.labels == -1).all()


def test_without_val_a_seeded_fraction_of_train_is_held_out(tmp_path):
    root = _tree(tmp_path / "pets", val=False)
    (a,) = folder_experiments(root=str(root), val_fraction=0.2, seed=3)
    (b,) = folder_experiments(root=str(root), val_fraction=0.2, seed=3)
    assert len(a.val) == 2 and len(a.train) == 8
    np.testing.assert_array_equal(a.val.images, b.val.images)
    seen = np.sort(np.concatenate([a.train.images[:, 0, 0, 0], a.val.images[:, 0, 0, 0]]))
    np.testing.assert_array_equal(seen, [0, 1, 10, 11, 20, 21, 30, 31, 40, 41])


def test_channels_and_size(tmp_path):
    root = _tree(tmp_path / "rgb", mode="RGB")
    (exp,) = folder_experiments(root=str(root), image_size=8)
    assert exp.train.images.shape == (10, 8, 8, 3)
    (grey,) = folder_experiments(root=str(root), channels=1)
    assert grey.train.images.shape == (10, 4, 4, 1)


@pytest.mark.parametrize(
    ("change", "error", "needle"),
    [
        (lambda r: _png(r / "test" / "cow" / "0.png", 1), ValueError,
         r"class folder\(s\) \['cow'\]"),
        (lambda r: _png(r / "train" / "cat" / "9.png", 1, size=(4, 6)), ValueError,
         "must be square and of one size"),
        (lambda r: _png(r / "train" / "cat" / "8.png", 1, size=(6, 6)), ValueError,
         "set image_size"),
    ],
)  # fmt: skip
def test_folder_errors_name_the_problem(tmp_path, change, error, needle):
    root = _tree(tmp_path / "pets")
    change(root)
    with pytest.raises(error, match=needle):
        folder_experiments(root=str(root))


def test_missing_folders_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="needs train/ and test/"):
        folder_experiments(root=str(tmp_path))
    root = _tree(tmp_path / "pets")
    with pytest.raises(ValueError, match=r"study 'new_class/x'.*holds no images"):
        folder_experiments(root=str(root), studies={"new_class/x": {"kind": "far_ood"}})
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_image_folder(root / "nope", None, channels=1, image_size=None)


def _npz(path, rng):
    arrays = {}
    for split, n in (("train", 20), ("val", 6), ("test", 8), ("shifted", 8), ("other", 5)):
        arrays[f"{split}_images"] = rng.integers(0, 256, (n, 5, 5), dtype=np.uint8)
        if split != "other":
            arrays[f"{split}_labels"] = (np.arange(n) % 3).reshape(-1, 1)
    np.savez(path, **arrays)
    return arrays


def test_npz_with_shift_studies(tmp_path):
    arrays = _npz(tmp_path / "organs.npz", np.random.default_rng(0))
    (exp,) = npz_experiments(
        path=str(tmp_path / "organs.npz"),
        class_names=["a", "b", "c"],
        studies={"corruption/shift": {"kind": "corruption", "key": "shifted"},
                 "far": {"kind": "far_ood", "key": "other"}},
    )  # fmt: skip
    assert exp.name == "organs" and exp.class_names == ("a", "b", "c")
    np.testing.assert_array_equal(exp.train.images[..., 0], arrays["train_images"])
    np.testing.assert_array_equal(exp.studies[0].images[..., 0], arrays["test_images"])
    assert [s.name for s in exp.studies] == ["iid", "corruption/shift", "far"]
    np.testing.assert_array_equal(exp.studies[1].labels, arrays["shifted_labels"].ravel())
    assert (exp.studies[2].labels == -1).all() and exp.studies[2].images.shape == (5, 5, 5, 1)
    with pytest.raises(ValueError, match="has no array nope_images"):
        npz_experiments(path=str(tmp_path / "organs.npz"),
                        studies={"x": {"kind": "iid", "key": "nope"}})  # fmt: skip
    with pytest.raises(ValueError, match="needs other_labels"):
        npz_experiments(path=str(tmp_path / "organs.npz"),
                        studies={"x": {"kind": "corruption", "key": "other"}})  # fmt: skip


def my_experiments(*, scale=1):
    """A user's builder, named in a config as 'tests.data.test_custom_data:my_experiments'."""
    from fdbench.data.types import ImageDataset, Study

    images = np.full((4, 2, 2, 1), scale, dtype=np.uint8)
    labels = np.array([0, 1, 0, 1])
    data = ImageDataset("mine", images, labels, ("x", "y"))
    return [Experiment("mine", ("x", "y"), data, data,
                       (Study("iid", StudyKind.IID, images, labels),))]  # fmt: skip


def not_experiments():
    return [1, 2]


def _config(data):
    return parse_config({
        "name": "t", "data": data, "architecture": {"name": "convnet"},
        "methods": [{"name": "ce", "kind": "ce", "seeds": [0]}],
    })  # fmt: skip


def test_builders_from_the_config(tmp_path, monkeypatch):
    monkeypatch.setenv("FDBENCH_TRUST_CONFIG_CODE", "1")
    here = "tests.data.test_custom_data"
    config = _config({"builder": f"{here}:my_experiments", "args": {"scale": 7}})
    (exp,) = build_experiments(config)
    assert exp.name == "mine" and (exp.train.images == 7).all()
    with pytest.raises(TypeError, match=r"must return a non-empty list.*got \['int', 'int'\]"):
        build_experiments(_config({"builder": f"{here}:not_experiments"}))
    with pytest.raises(ValueError, match="cannot import nowhere"):
        build_experiments(_config({"builder": "nowhere.at.all:make"}))
    root = _tree(tmp_path / "pets")
    folder = {"builder": "folder_experiments", "args": {"root": str(root), "studies": STUDIES}}
    (exp,) = build_experiments(_config(folder))
    assert [s.name for s in exp.studies] == ["iid", "corruption/blur", "new_class/ood"]


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"builder": "folder_experiments", "args": {}}, "data: .*args.root: Field required"),
        ({"builder": "folder_experiments",
          "args": {"root": "r", "studies": {"a": {"kind": "x"}}}},
         "args.studies.a.kind: Input should be 'iid'"),
        ({"builder": "folder_experiments",
          "args": {"root": "r", "studies": {"val": {"kind": "iid"}}}},
         "may not be named \\['val'\\]"),
        ({"builder": "npz_experiments", "args": {"path": "p", "bogus": 1}}, "args.bogus"),
        ({"builder": "my data"}, "builder must name a function of fdbench.data"),
    ],
)  # fmt: skip
def test_data_config_errors(data, needle):
    with pytest.raises(ValueError, match=needle):
        _config(data)
