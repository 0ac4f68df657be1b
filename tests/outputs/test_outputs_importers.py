"""Tests of the npz and FD-Shifts importers against arrays written in those layouts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.metrics import roc_auc_score

from fdbench.csf import compute_csfs
from fdbench.data.shifts.corruptions import CORRUPTIONS
from fdbench.outputs import (
    FD_SHIFTS_CORRUPTIONS,
    import_fd_shifts,
    import_npz,
    read_fd_shifts_config,
    read_outputs,
    write_outputs,
)
from fdbench.protocol import corruption_pools

from .fd_shifts_layout import write_fd_shifts_run


def test_fd_shifts_import_matches_arrays(tmp_path):
    rng = np.random.default_rng(3)
    arrays = write_fd_shifts_run(tmp_path, rng, config=False)
    run = import_fd_shifts(
        tmp_path / "test_results",
        dataset_names=["cifar10_c", "svhn"],
        kinds={"cifar10_c": "corruption", "svhn": "new_class_semantic"},
        ext_confid_name="dg",
        meta={"dataset": "cifar10"},
    )
    noise = [f"corruption/{t}/{s}" for t in FD_SHIFTS_CORRUPTIONS for s in range(1, 6)]
    assert list(run.splits) == ["val", "iid", *noise, "svhn", "train"]
    assert [s.kind for s in run.splits.values()] == [
        "val",
        "iid",
        *["corruption"] * 75,
        "new_class_semantic",
        "train",
    ]
    raw = arrays["raw"].astype(np.float64)
    iid = raw[:, -1] == 1
    split = run.splits["iid"]
    np.testing.assert_array_equal(split.logits, raw[iid, :-2])
    np.testing.assert_array_equal(split.labels, raw[iid, -2].astype(np.int64))
    assert split.logits.dtype == np.float64 and split.labels.dtype == np.int64
    np.testing.assert_array_equal(
        split.mcd_logits, arrays["dist"].astype(np.float64)[iid].transpose(0, 2, 1)
    )
    np.testing.assert_array_equal(
        split.heads["dg_reservation"], 1 - arrays["ext"][iid].astype(np.float64)
    )
    np.testing.assert_allclose(
        split.heads["dg_reservation_mcd"], 1 - arrays["ext_dist"][iid].astype(np.float64).mean(1)
    )
    assert (run.splits["svhn"].labels == -1).all()
    np.testing.assert_array_equal(run.meta["fc_weight"], arrays["w"])
    assert run.meta["dataset"] == "cifar10"
    train = arrays["train"].astype(np.float64)
    np.testing.assert_allclose(run.splits["train"].logits, train @ arrays["w"].T + arrays["b"])

    # metrics from the raw arrays, computed as FD-Shifts does, equal those of the imported run
    csfs = compute_csfs(run, "iid")
    sm = softmax(raw[iid, :-2], axis=1)
    correct = (sm.argmax(1) == raw[iid, -2]).astype(int)
    np.testing.assert_allclose(csfs["MSR"], sm.max(1), rtol=1e-12)
    assert roc_auc_score(correct, csfs["MSR"]) == roc_auc_score(correct, sm.max(1))
    mcd_dist = arrays["dist"].astype(np.float64)[iid]
    np.testing.assert_allclose(csfs["MCD-MLS"], mcd_dist.mean(axis=2).max(axis=1), rtol=1e-12)
    mcd_sm = softmax(mcd_dist, axis=1).mean(axis=2)
    np.testing.assert_allclose(csfs["MCD-MSR"], mcd_sm.max(axis=1), rtol=1e-12)
    np.testing.assert_allclose(csfs["DG-Res"], arrays["ext"][iid].astype(np.float64))
    assert roc_auc_score(correct, csfs["DG-Res"]) == roc_auc_score(correct, arrays["ext"][iid])
    assert {"Mahalanobis", "DKNN", "TrustScore", "ViM", "TEMP-MLS"} <= set(csfs)

    write_outputs(tmp_path / "store", run)
    again = read_outputs(tmp_path / "store")
    np.testing.assert_array_equal(again.splits["svhn"].features, run.splits["svhn"].features)


def test_fd_shifts_without_val_tuning_and_optional_files(tmp_path):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(12, 3))
    raw = np.column_stack([logits, rng.integers(0, 3, 12), np.repeat([0, 1, 2], 4)])
    np.savez_compressed(tmp_path / "raw_logits.npz", raw)
    run = import_fd_shifts(tmp_path, val_tuning=False)
    assert list(run.splits) == ["iid", "dataset_1", "dataset_2"]
    assert run.splits["iid"].mcd_logits is None and run.splits["iid"].heads == {}


def test_fd_shifts_errors(tmp_path):
    with pytest.raises(ValueError, match=r"raw_logits\.npz"):
        import_fd_shifts(tmp_path)
    raw = np.column_stack([np.zeros((3, 2)), [0, 1, 0], [0, 0, 0]])
    np.savez_compressed(tmp_path / "raw_logits.npz", raw)
    np.savez_compressed(tmp_path / "external_confids.npz", np.zeros(3))
    with pytest.raises(ValueError, match="ext_confid_name"):
        import_fd_shifts(tmp_path)
    np.savez_compressed(tmp_path / "external_confids_dist.npz", np.zeros((6, 2)))
    with pytest.raises(ValueError, match=r"external_confids_dist\.npz must have shape \(3, S\)"):
        import_fd_shifts(tmp_path, ext_confid_name="devries")
    np.savez_compressed(tmp_path / "external_confids_dist.npz", np.zeros((3, 2)))
    (tmp_path / "raw_logits_dist.npz").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="cannot read FD-Shifts file"):
        import_fd_shifts(tmp_path, ext_confid_name="devries")


def test_npz_import_groups_by_study(tmp_path):
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(9, 3)).astype(np.float32)
    labels = np.array([0, 1, 2, 0, -1, -1, 1, 2, 0])
    study = np.array(["val", "val", "val", "iid", "ood", "ood", "iid", "iid", "val"])
    mcd = rng.normal(size=(9, 2, 3))
    np.savez(
        tmp_path / "out.npz",
        logits=logits,
        labels=labels,
        study=study,
        mcd_logits=mcd,
        head_devries=rng.random(9),
    )
    run = import_npz(tmp_path / "out.npz", kinds={"ood": "new_class_semantic"})
    assert list(run.splits) == ["val", "iid", "ood"]
    assert run.splits["val"].kind == "val" and run.splits["ood"].kind == "new_class_semantic"
    np.testing.assert_array_equal(run.splits["iid"].logits, logits[[3, 6, 7]].astype(np.float64))
    np.testing.assert_array_equal(run.splits["val"].mcd_logits, mcd[[0, 1, 2, 8]])
    assert set(run.splits["ood"].heads) == {"devries"}


def test_npz_import_errors(tmp_path):
    np.savez(tmp_path / "a.npz", logits=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="'labels'"):
        import_npz(tmp_path / "a.npz")
    np.savez(tmp_path / "b.npz", logits=np.zeros((2, 2)), labels=np.array([0.5, 1]))
    with pytest.raises(ValueError, match="integer"):
        import_npz(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz", logits=np.zeros((2, 2)), labels=np.array([0, 7]))
    with pytest.raises(ValueError, match="labels must lie"):
        import_npz(tmp_path / "c.npz")


def test_npz_integer_labels_are_read_as_they_are(tmp_path):
    logits = np.zeros((3, 2))
    for labels in (np.array([1, 0, 1], dtype=np.uint8), np.array([True, False, True])):
        np.savez(tmp_path / "a.npz", logits=logits, labels=labels)
        got = import_npz(tmp_path / "a.npz").splits["iid"].labels
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, [1, 0, 1])
    np.savez(tmp_path / "b.npz", logits=logits, labels=np.array([0, 1, 2**64 - 1], np.uint64))
    with pytest.raises(ValueError, match="below 2\\*\\*63"):
        import_npz(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz", logits=logits, labels=np.array([0.0, 1.0, -1.0]))
    np.testing.assert_array_equal(import_npz(tmp_path / "c.npz").splits["iid"].labels, [0, 1, -1])


def test_fd_shifts_hydra_config_gives_names_kinds_and_head(tmp_path):
    # FD-Shifts writes its config to <experiment>/hydra/config.yaml; without arguments the
    # importer takes val_tuning, ext_confid_name, dataset names and study kinds from there.
    arrays = write_fd_shifts_run(tmp_path, np.random.default_rng(4))
    run = import_fd_shifts(tmp_path / "test_results")
    noise = [f"corruption/{t}/{s}" for t in FD_SHIFTS_CORRUPTIONS for s in range(1, 6)]
    assert list(run.splits) == ["val", "iid", *noise, "svhn", "train"]
    kinds = {name: split.kind for name, split in run.splits.items()}
    assert kinds == {
        "val": "val",
        "iid": "iid",
        **dict.fromkeys(noise, "corruption"),
        "svhn": "new_class_nonsemantic",
        "train": "train",
    }
    raw = arrays["raw"].astype(np.float64)
    corrupt = raw[:, -1] == 2
    pooled = np.concatenate([run.splits[name].labels for name in noise])
    np.testing.assert_array_equal(pooled, raw[corrupt, -2])
    assert (run.splits["svhn"].labels == -1).all()
    ext = arrays["ext"].astype(np.float64)
    dg = run.splits["iid"].heads["dg_reservation"]
    np.testing.assert_array_equal(dg, 1 - ext[raw[:, -1] == 1])
    # explicit arguments override the config
    other = import_fd_shifts(
        tmp_path / "test_results",
        dataset_names=["c10c", "ood"],
        kinds={"ood": "new_class_semantic"},
        ext_confid_name="devries",
    )
    assert list(other.splits)[2:4] == ["c10c", "ood"]
    assert other.splits["ood"].kind == "new_class_semantic"
    assert other.splits["c10c"].kind == "iid"
    assert set(other.splits["iid"].heads) == {"devries", "devries_mcd"}


def test_fd_shifts_noise_study_splits_per_type_and_intensity(tmp_path):
    # FD-Shifts' noise study: 15 types (CorruptCIFAR's order) x 5 intensities x n images,
    # type-major; filter_noise_study_data evaluates reshape(15, 5, n)[:, level] per level.
    n = 3
    arrays = write_fd_shifts_run(tmp_path, np.random.default_rng(8), noise_size=15 * 5 * n)
    run = import_fd_shifts(tmp_path / "test_results")
    assert sorted(FD_SHIFTS_CORRUPTIONS) == sorted(CORRUPTIONS)
    assert FD_SHIFTS_CORRUPTIONS[:3] == ("brightness", "contrast", "defocus_blur")
    per_type = [name for name in run.splits if name.startswith("corruption/")]
    assert len(per_type) == 75 and "corrupt_cifar10" not in run.splits
    raw = arrays["raw"].astype(np.float64)[arrays["raw"][:, -1] == 2]
    ext = arrays["ext"][arrays["raw"][:, -1] == 2]
    cells = raw.reshape(15, 5, n, raw.shape[1])
    for t, corruption in enumerate(FD_SHIFTS_CORRUPTIONS):
        for level in range(5):
            split = run.splits[f"corruption/{corruption}/{level + 1}"]
            assert split.kind == "corruption"
            np.testing.assert_array_equal(split.logits, cells[t, level, :, :-2])
            np.testing.assert_array_equal(split.labels, cells[t, level, :, -2])
    # e.g. the 2nd type (contrast) at intensity 4 is rows (1 * 5 + 3) * n ... + n of the set
    split = run.splits["corruption/contrast/4"]
    np.testing.assert_array_equal(split.logits, raw[8 * n : 9 * n, :-2])
    np.testing.assert_array_equal(split.heads["dg_reservation"], 1 - ext[8 * n : 9 * n])
    assert split.mcd_logits.shape[0] == split.features.shape[0] == n
    # the pooled studies are FD-Shifts' evaluation sets, one per intensity, types in its order
    pools = corruption_pools(run.splits)
    assert list(pools) == [f"corruption/{level}" for level in range(1, 6)]
    for level in range(5):
        members = pools[f"corruption/{level + 1}"]
        pooled = np.concatenate([run.splits[name].logits for name in members])
        expected = raw.reshape(15, 5, -1, raw.shape[1])[:, level].reshape(-1, raw.shape[1])
        np.testing.assert_array_equal(pooled, expected[:, :-2])


def test_fd_shifts_noise_study_of_wrong_size_is_a_clear_error(tmp_path):
    write_fd_shifts_run(tmp_path, np.random.default_rng(9), noise_size=76)
    with pytest.raises(ValueError, match=r"raw_logits\.npz.*'corrupt_cifar10' has 76 samples"):
        import_fd_shifts(tmp_path / "test_results")
    with pytest.raises(ValueError, match=r"15 corruption types × 5 intensities × N images"):
        import_fd_shifts(tmp_path / "test_results")
    # the error's advice works: the set imported under another kind stays one split
    run = import_fd_shifts(tmp_path / "test_results", kinds={"corrupt_cifar10": "iid"})
    assert run.splits["corrupt_cifar10"].labels.shape == (76,)


def test_read_fd_shifts_config(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(
        "eval:\n"
        "  ext_confid_name: ???\n"
        "  val_tuning: false\n"
        "  query_studies:\n"
        "    iid_study: cifar100\n"
        "    in_class_study: [cifar100_sub]\n"
        "    new_class_study: [cifar10, {dataset: tinyimagenet_resize}]\n"
    )
    assert read_fd_shifts_config(config) == {
        "val_tuning": False,
        "ext_confid_name": None,
        "dataset_names": ["cifar100_sub", "cifar10", "tinyimagenet_resize"],
        "kinds": {
            "cifar100_sub": "subclass",
            "cifar10": "new_class_semantic",
            "tinyimagenet_resize": "new_class_nonsemantic",
        },
    }
    config.write_text("eval:\n  query_studies:\n    iid_study: ${data.dataset}\n")
    with pytest.raises(ValueError, match=r"cannot resolve '\$\{data.dataset\}'"):
        read_fd_shifts_config(config)
    config.write_text("eval: [unclosed\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        read_fd_shifts_config(config)
    with pytest.raises(FileNotFoundError, match="no FD-Shifts config"):
        import_fd_shifts(tmp_path, config=tmp_path / "missing.yaml")


def _truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage", [_truncate, _flip_byte, lambda p: p.write_bytes(b""), lambda p: p.write_text("x")]
)
@pytest.mark.parametrize("name", ["raw_logits.npz", "raw_logits_dist.npz", "last_layer.npz"])
def test_damaged_fd_shifts_file_gives_clear_error(tmp_path, name, damage):
    write_fd_shifts_run(tmp_path, np.random.default_rng(5))
    damage(tmp_path / "test_results" / name)
    with pytest.raises(ValueError, match=f"cannot read FD-Shifts file .*{name}"):
        import_fd_shifts(tmp_path / "test_results")


@pytest.mark.parametrize("damage", [_truncate, _flip_byte, lambda p: p.write_bytes(b"")])
def test_damaged_npz_gives_clear_error(tmp_path, damage):
    path = tmp_path / "out.npz"
    np.savez_compressed(path, logits=np.arange(600.0).reshape(200, 3), labels=np.zeros(200, int))
    damage(path)
    with pytest.raises(ValueError, match="cannot read npz file"):
        import_npz(path)


def test_fd_shifts_shapes_of_last_layer_and_train_features_are_checked(tmp_path):
    arrays = write_fd_shifts_run(tmp_path, np.random.default_rng(6))
    results = tmp_path / "test_results"
    np.savez(results / "last_layer.npz", arrays["w"][:, :-1], arrays["b"])
    with pytest.raises(ValueError, match=r"last_layer\.npz must hold W \(5 × D\)"):
        import_fd_shifts(results)
    np.savez(results / "last_layer.npz", arrays["w"], arrays["b"])
    np.savez_compressed(results / "train_features.npz", arrays["train"][:, :-2])
    with pytest.raises(ValueError, match=r"train_features\.npz must have shape M × 9"):
        import_fd_shifts(results)


def test_fd_shifts_csf_names_map_temp_mls(tmp_path):
    from fdbench.csf import REGISTRY
    from fdbench.outputs import FD_SHIFTS_CSFS, fd_shifts_csf_name, read_fd_shifts_csfs

    assert set(FD_SHIFTS_CSFS.values()) <= set(REGISTRY)
    assert fd_shifts_csf_name("temp_mls") == "TEMP-MLS"
    assert fd_shifts_csf_name("det_mcp") == "MSR"
    assert fd_shifts_csf_name("ext", "dg") == "DG-Res"
    assert fd_shifts_csf_name("ext_mcd", "tcp") == "ConfidNet-MCD"
    assert fd_shifts_csf_name("ext") is None
    assert fd_shifts_csf_name("mcd_sv") is None and fd_shifts_csf_name("react_temp_mls") is None
    config = tmp_path / "config.yaml"
    config.write_text(
        "eval:\n"
        "  ext_confid_name: dg\n"
        "  confidence_measures:\n"
        "    test: [det_mcp, det_pe, ext, temp_mls, mcd_sv, mcd_mcp, ext_mcd, temp_mls]\n"
    )
    expected = ["MSR", "PE", "DG-Res", "TEMP-MLS", "MCD-MSR", "DG-Res-MCD"]
    assert read_fd_shifts_csfs(config) == expected
    config.write_text("eval:\n  confidence_measures:\n    test: det_mcp\n")
    with pytest.raises(ValueError, match="must be a list"):
        read_fd_shifts_csfs(config)
    config.write_text("data: {}\n")
    with pytest.raises(ValueError, match="no 'eval' section"):
        read_fd_shifts_csfs(config)
