"""Tests of the npz and FD-Shifts importers against arrays written in those layouts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.metrics import roc_auc_score

from fdbench.csf import compute_csfs
from fdbench.outputs import import_fd_shifts, import_npz, read_outputs, write_outputs

K, S, D = 5, 4, 8


def _fd_shifts_dir(tmp_path, rng):
    """Write a test_results directory exactly as FD-Shifts' ConfidMonitor does (float16)."""
    sizes = {0: 30, 1: 40, 2: 25, 3: 20}  # val, iid, corruption set, new-class set
    dataset_idx = np.concatenate([np.full(n, i) for i, n in sizes.items()])
    n = dataset_idx.size
    labels = rng.integers(0, K, n)
    logits = rng.normal(size=(n, K)) * 3
    logits[np.arange(n), labels] += rng.normal(1.0, 1.0, n)
    raw = np.concatenate([logits, labels[:, None], dataset_idx[:, None]], axis=1)
    np.savez_compressed(tmp_path / "raw_logits.npz", raw.astype(np.float16))
    dist = (logits[:, :, None] + rng.normal(size=(n, K, S))).astype(np.float16)
    np.savez_compressed(tmp_path / "raw_logits_dist.npz", dist)
    ext = rng.random(n).astype(np.float16)
    np.savez_compressed(tmp_path / "external_confids.npz", ext)
    ext_dist = rng.random((n, S)).astype(np.float16)
    np.savez_compressed(tmp_path / "external_confids_dist.npz", ext_dist)
    feats = rng.normal(size=(n, D))
    np.savez_compressed(
        tmp_path / "encoded_output.npz",
        np.concatenate([feats, dataset_idx[:, None]], axis=1).astype(np.float16),
    )
    train_labels = np.repeat(np.arange(K), 12)
    train = rng.normal(size=(train_labels.size, D)) + train_labels[:, None]
    np.savez_compressed(
        tmp_path / "train_features.npz",
        np.concatenate([train, train_labels[:, None]], axis=1).astype(np.float16),
    )
    w, b = rng.normal(size=(K, D)), rng.normal(size=K)
    np.savez(tmp_path / "last_layer.npz", w, b)
    return {
        "raw": raw.astype(np.float16),
        "dist": dist,
        "ext": ext,
        "ext_dist": ext_dist,
        "w": w,
        "b": b,
        "train": train.astype(np.float16),
    }


def test_fd_shifts_import_matches_arrays(tmp_path):
    rng = np.random.default_rng(3)
    arrays = _fd_shifts_dir(tmp_path, rng)
    run = import_fd_shifts(
        tmp_path,
        dataset_names=["cifar10_c", "svhn"],
        kinds={"cifar10_c": "corruption", "svhn": "new_class_semantic"},
        ext_confid_name="dg",
        meta={"dataset": "cifar10"},
    )
    assert list(run.splits) == ["val", "iid", "cifar10_c", "svhn", "train"]
    assert [s.kind for s in run.splits.values()] == [
        "val",
        "iid",
        "corruption",
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
    assert {"Mahalanobis", "DKNN", "TrustScore", "ViM", "TEMP-MSR"} <= set(csfs)

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
