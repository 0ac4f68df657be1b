"""CAMELYON-17-WILDS and iWildCam-2020-WILDS readers and FD-Shifts experiments on small files
written in the WILDS layout."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from fdbench.data.suites.wilds import (
    fdshifts_camelyon_experiments,
    fdshifts_iwildcam_experiments,
    read_camelyon17_metadata,
    read_iwildcam_metadata,
)
from fdbench.data.types import StudyKind
from tests.data._robustness_layouts import (
    IWILDCAM_CLASSES,
    N_VAL,
    SIZE,
    write_camelyon,
    write_iwildcam,
)


@pytest.fixture(scope="module")
def camelyon(tmp_path_factory):
    root = tmp_path_factory.mktemp("wilds_camelyon")
    return root, write_camelyon(root)


@pytest.fixture(scope="module")
def iwildcam(tmp_path_factory):
    root = tmp_path_factory.mktemp("wilds_iwildcam")
    return root, write_iwildcam(root)


def test_camelyon_metadata_splits_and_paths(camelyon):
    root, written = camelyon
    table = read_camelyon17_metadata(root)
    centers = np.array([r[0] for r in written["rows"]])
    codes = np.array([r[1] for r in written["rows"]])
    # wilds re-codes hospital 1 as 'val' and hospital 2 as 'test'; others keep train / id_val
    expected = np.where(centers == 1, "val", np.where(centers == 2, "test",
                        np.where(codes == 1, "id_val", "train")))  # fmt: skip
    np.testing.assert_array_equal(table.splits, expected)
    np.testing.assert_array_equal(table.labels, [r[2] for r in written["rows"]])
    assert table.class_names == ("normal", "tumor")
    first = table.paths[0]
    assert first.parent.name == "patient_000_node_0"
    assert first.name == "patch_patient_000_node_0_x_0_y_0.png" and first.is_file()


def test_camelyon_experiment(camelyon):
    root, _ = camelyon
    (exp,) = fdshifts_camelyon_experiments(data_dir=root, image_size=SIZE, n_val=N_VAL)
    table = read_camelyon17_metadata(root)
    id_val = np.random.default_rng(12345).permutation(table.indices("id_val"))
    assert exp.name == "camelyon17"
    assert len(exp.train) == 50 and len(exp.val) == N_VAL
    np.testing.assert_array_equal(exp.val.labels, table.labels[id_val[:N_VAL]])
    assert [s.name for s in exp.studies] == ["iid", "subclass"]
    iid, sub = exp.studies
    assert iid.kind is StudyKind.IID and sub.kind is StudyKind.SUBCLASS
    np.testing.assert_array_equal(iid.labels, table.labels[id_val[N_VAL:]])
    np.testing.assert_array_equal(sub.labels, table.labels[table.indices("test")])
    assert sub.labels.size == 25 and exp.train.images.shape[1:] == (SIZE, SIZE, 3)
    # the images are the PNG files' pixels
    from PIL import Image

    with Image.open(table.paths[table.indices("test")[0]]) as im:
        np.testing.assert_array_equal(sub.images[0], np.asarray(im.convert("RGB")))


def test_camelyon_caps(camelyon):
    root, _ = camelyon
    (exp,) = fdshifts_camelyon_experiments(
        data_dir=root, image_size=SIZE, n_val=N_VAL, max_train=7, max_per_study=5
    )
    assert len(exp.train) == 7 and len(exp.val) == N_VAL
    assert [s.labels.size for s in exp.studies] == [5, 5]


def test_camelyon_missing_and_malformed(camelyon, tmp_path):
    with pytest.raises(FileNotFoundError, match=r"camelyon17_v1.0/metadata.csv is missing.*wilds"):
        fdshifts_camelyon_experiments(data_dir=tmp_path)
    root, _ = camelyon
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    meta = copy / "camelyon17_v1.0" / "metadata.csv"
    text = meta.read_text()
    meta.write_text(text.replace(",tumor,", ",label,", 1))
    with pytest.raises(ValueError, match=r"metadata.csv: missing column\(s\) \['tumor'\]"):
        read_camelyon17_metadata(copy)
    lines = text.splitlines()
    lines[3] = lines[3].rsplit(",", 1)[0] + ",x"
    meta.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="column 'split' must hold integers; row 2"):
        read_camelyon17_metadata(copy)
    meta.write_text(text)
    next((copy / "camelyon17_v1.0" / "patches").rglob("*.png")).unlink()
    with pytest.raises(FileNotFoundError, match=r"image files listed in metadata\.csv are missing"):
        fdshifts_camelyon_experiments(data_dir=copy, image_size=SIZE, n_val=N_VAL)


def test_iwildcam_metadata(iwildcam):
    root, written = iwildcam
    table = read_iwildcam_metadata(root)
    assert table.class_names == IWILDCAM_CLASSES
    assert list(table.labels[table.indices("test")]) == written["labels"]["test"]
    assert set(table.domains[table.indices("test")]) == {7}
    assert table.paths[0].parent.name == "train" and table.paths[0].is_file()


def test_iwildcam_domain_experiment(iwildcam):
    root, written = iwildcam
    (exp,) = fdshifts_iwildcam_experiments(data_dir=root, image_size=SIZE, n_val=N_VAL)
    id_test = written["labels"]["id_test"]
    assert exp.name == "iwildcam" and exp.class_names == IWILDCAM_CLASSES
    assert exp.split is None
    assert list(exp.train.labels) == written["labels"]["train"]
    assert list(exp.val.labels) == id_test[:N_VAL]
    assert [s.name for s in exp.studies] == ["iid", "subclass"]
    assert list(exp.studies[0].labels) == id_test[N_VAL:]
    assert list(exp.studies[1].labels) == written["labels"]["test"]


def test_iwildcam_openset_draw_per_run(iwildcam):
    root, written = iwildcam
    args = {"data_dir": root, "image_size": SIZE, "n_val": N_VAL, "openset": True}
    (a,) = fdshifts_iwildcam_experiments(**args, run_seed=1)
    (b,) = fdshifts_iwildcam_experiments(**args, run_seed=1)
    assert a.split == b.split and a.name == "iwildcam_openset"
    held = a.split["held_out_classes"]
    assert len(held) == 2 and len(a.class_names) == 3  # 40 % of 5 classes held out
    draws = {
        tuple(fdshifts_iwildcam_experiments(**args, run_seed=s)[0].split["held_out_classes"])
        for s in range(6)
    }
    assert len(draws) > 1
    known = a.split["train_classes"]
    train_y = np.array(written["labels"]["train"])
    assert len(a.train) == int(np.isin(train_y, known).sum())
    id_test = np.array(written["labels"]["id_test"])
    inlier = id_test[np.isin(id_test, known)]
    np.testing.assert_array_equal(np.asarray(known)[a.val.labels], inlier[:N_VAL])
    iid, semantic = a.studies
    assert (iid.name, semantic.name) == ("iid", "new_class/semantic")
    assert semantic.kind is StudyKind.NEW_CLASS_SEMANTIC
    assert (semantic.labels == -1).all()
    assert semantic.labels.size == int(np.isin(id_test, held).sum())


def test_iwildcam_missing_categories(iwildcam, tmp_path):
    root, _ = iwildcam
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    (copy / "iwildcam_v2.0" / "categories.csv").unlink()
    with pytest.raises(FileNotFoundError, match=r"iwildcam_v2\.0/categories\.csv is missing"):
        read_iwildcam_metadata(copy)
    meta = copy / "iwildcam_v2.0" / "metadata.csv"
    meta.write_text(meta.read_text().replace(",id_test,", ",holdout,", 1))
    with pytest.raises(ValueError, match="column 'split' must hold"):
        read_iwildcam_metadata(copy)


def test_bad_arguments(camelyon, iwildcam):
    with pytest.raises(ValueError, match="must hold more than 1000 images"):
        fdshifts_camelyon_experiments(data_dir=camelyon[0])
    with pytest.raises(ValueError, match="max_train"):
        fdshifts_camelyon_experiments(data_dir=camelyon[0], max_train=0)
    with pytest.raises(TypeError, match="openset must be a bool"):
        fdshifts_iwildcam_experiments(data_dir=iwildcam[0], openset="yes")
    with pytest.raises(ValueError, match="run_seed"):
        fdshifts_iwildcam_experiments(data_dir=iwildcam[0], openset=True, run_seed=-1)
