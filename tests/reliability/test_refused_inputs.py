"""Inputs that cannot be interpreted are refused, not coerced (issue #25, point 5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fdbench import analysis as A
from fdbench import csf as C
from fdbench import metrics as M
from fdbench.outputs import FD_SHIFTS_OPTIONAL_FILES

from ._cli import assert_one_line_error, digests, outputs_npz, run_cli

R = np.array([0.0, 1.0, 0.0, 1.0])
C4 = np.array([0.9, 0.2, 0.7, 0.4])

UNINTERPRETABLE = {
    "complex": np.array([0.9 + 1j, 0.2, 0.7, 0.4]),
    "complex-zero-imaginary": np.array([0.9, 0.2, 0.7, 0.4], dtype=complex),
    "date-strings": np.array(["2024-01-02", "2023-05-06", "2024-03-04", "2022-01-01"]),
    "number-strings": np.array(["0.9", "0.2", "0.7", "0.4"]),
    "datetime": np.array(["2024-01-02", "2023-05-06", "2024-03-04", "2022-01-01"], "M8[D]"),
    "timedelta": np.array([9, 2, 7, 4], "m8[s]"),
    "object": np.array([0.9, 0.2, 0.7, 0.4], dtype=object),
    "bytes": np.array([b"a", b"b", b"c", b"d"]),
}


@pytest.mark.parametrize("kind", list(UNINTERPRETABLE))
def test_metrics_refuse_uninterpretable_confidences(kind):
    bad = UNINTERPRETABLE[kind]
    for fn in (M.aurc, M.augrc, M.auroc_f, M.eaurc):
        with pytest.raises(TypeError, match="confidence"):
            fn(R, bad)
    with pytest.raises(TypeError, match="confidence"):
        M.evaluate_all(R, bad)
    with pytest.raises(TypeError, match="confidence"):
        M.bootstrap(R, bad, n_resamples=3)


@pytest.mark.parametrize("kind", list(UNINTERPRETABLE))
def test_metrics_refuse_uninterpretable_residuals_weights_and_logits(kind):
    bad = UNINTERPRETABLE[kind]
    with pytest.raises(TypeError, match="residuals"):
        M.aurc(bad, C4)
    with pytest.raises(TypeError, match="sample_weight"):
        M.aurc(R, C4, sample_weight=bad)
    labels = np.array([0, 1, 1, 0])
    logits = np.stack([bad, bad], axis=1)
    with pytest.raises(TypeError, match="logits"):
        M.evaluate_all(R, C4, labels=labels, logits=logits)
    with pytest.raises(TypeError, match="logits"):
        M.nll(labels, logits)
    with pytest.raises(TypeError, match="labels"):
        M.aurc_ba(R, C4, bad)


@pytest.mark.parametrize("kind", list(UNINTERPRETABLE))
def test_csfs_refuse_uninterpretable_logits(kind):
    logits = np.stack([UNINTERPRETABLE[kind]] * 3, axis=1)
    for fn in (C.msr, C.mls, C.pe, C.energy):
        with pytest.raises(TypeError, match="logits"):
            fn(logits)


def test_analysis_refuses_a_complex_value_column():
    table = pd.DataFrame(
        {
            "csf": ["a", "b"],
            "study": ["iid", "iid"],
            "metric": ["aurc", "aurc"],
            "value": np.array([0.1, 0.2], dtype=complex),
        }
    )
    with pytest.raises(TypeError, match="'value'"):
        A.rank_csfs(table, "aurc")


def test_booleans_are_the_numbers_zero_and_one():
    # documented choice: a bool is an exact 0/1, not a coercion (residuals, confidences, weights)
    failed = R.astype(bool)
    assert M.aurc(failed, C4) == M.aurc(R, C4)
    assert M.aurc(R, C4 > 0.5) == M.aurc(R, (C4 > 0.5).astype(float))


def test_complex_confidences_no_longer_drop_the_imaginary_part():
    # before issue #25 these gave the AURC of the real parts, with a ComplexWarning at most
    with pytest.raises(TypeError, match="complex"):
        M.aurc(R, C4 + 1j * C4[::-1])


def _table(path, confidence, *, n=6):
    frame = pd.DataFrame(
        {
            "label": [0, 1, 1, 0, 2, 2][:n],
            "prediction": [0, 1, 0, 0, 2, 1][:n],
            "MSR": confidence,
            "file": [f"img{i}.png" for i in range(n)],
        }
    )
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    return path


def test_one_bad_cell_in_a_confidence_column_names_column_and_row(tmp_path):
    path = _table(tmp_path / "scores.csv", ["0.9", "0.8", "n/a?", "0.3", "0.5", "0.6"])
    before = digests(path)
    result = run_cli("evaluate", str(path), "--out", str(tmp_path / "results.csv"))
    assert_one_line_error(result, "scores.csv", "'MSR'", "row 2", "line 4", "'n/a?'")
    assert digests(path) == before
    assert not (tmp_path / "results.csv").exists()


def test_a_text_column_of_file_names_is_not_a_confidence(tmp_path):
    path = _table(tmp_path / "scores.csv", [0.9, 0.8, 0.7, 0.3, 0.5, 0.6])
    out = tmp_path / "results.csv"
    result = run_cli("evaluate", str(path), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert set(pd.read_csv(out)["csf"]) == {"MSR"}


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        (np.array([0.9, 0.8, 0.7, 0.3, 0.5, 0.6]) + 0.5j, "complex"),
        (pd.to_datetime([f"2024-01-0{i}" for i in range(1, 7)]), "datetime"),
        (pd.to_timedelta([1, 2, 3, 4, 5, 6], unit="s"), "timedelta"),
    ],
)
def test_parquet_columns_that_are_not_real_numbers_are_refused(tmp_path, values, needle):
    path = tmp_path / "scores.parquet"
    frame = pd.DataFrame({"label": [0, 1, 1, 0, 2, 2], "prediction": [0, 1, 0, 0, 2, 1]})
    frame["MSR"] = values
    try:
        frame.to_parquet(path)
    except Exception as err:  # pyarrow cannot store complex numbers
        pytest.skip(f"parquet cannot hold this column: {err}")
    result = run_cli("evaluate", str(path), "-c", "MSR")
    assert_one_line_error(result, "scores.parquet", "'MSR'", needle)


@pytest.mark.parametrize("key", ["logits", "labels", "mcd_logits", "features", "head_devries"])
def test_npz_arrays_that_are_not_real_numbers_are_refused(tmp_path, key):
    rng = np.random.default_rng(1)
    shapes = {
        "logits": (120, 4),
        "labels": (120,),
        "mcd_logits": (120, 3, 4),
        "features": (120, 8),
        "head_devries": (120,),
    }
    bad = rng.normal(size=shapes[key]) + 1j
    path = outputs_npz(tmp_path / "outputs.npz", **{key: bad})
    result = run_cli("evaluate", str(path))
    assert_one_line_error(result, "outputs.npz", key, "complex")


def _fd_shifts_folder(root, present):
    rng = np.random.default_rng(0)
    n, k, d = 240, 4, 6
    labels = rng.integers(0, k, n)
    index = np.repeat([0, 1, 2], n // 3)
    logits = rng.normal(size=(n, k)) + 2 * np.eye(k)[labels]
    results = root / "test_results"
    results.mkdir(parents=True)
    (root / "hydra").mkdir()
    (root / "hydra" / "config.yaml").write_text(
        "eval:\n  ext_confid_name: devries\n  val_tuning: true\n"
        "  query_studies:\n    iid_study: cifar10\n    new_class_study: [svhn]\n"
    )
    np.savez(results / "raw_logits.npz", np.c_[logits, labels, index])
    arrays = {
        "raw_logits_dist.npz": [rng.normal(size=(n, k, 3))],
        "external_confids.npz": [rng.random(n)],
        "external_confids_dist.npz": [rng.random((n, 3))],
        "encoded_output.npz": [np.c_[rng.normal(size=(n, d)), index]],
        "train_features.npz": [np.c_[rng.normal(size=(50, d)), rng.integers(0, k, 50)]],
        "last_layer.npz": [rng.normal(size=(k, d)), rng.normal(size=k)],
    }
    for name in present:
        np.savez(results / name, *arrays[name])
    return results


SUBSETS = [
    (),
    FD_SHIFTS_OPTIONAL_FILES,
    ("external_confids_dist.npz",),
    ("external_confids.npz", "external_confids_dist.npz"),
    ("encoded_output.npz", "last_layer.npz"),
    ("train_features.npz",),
    ("raw_logits_dist.npz", "external_confids.npz"),
    tuple(f for f in FD_SHIFTS_OPTIONAL_FILES if f != "raw_logits_dist.npz"),
    tuple(f for f in FD_SHIFTS_OPTIONAL_FILES if f != "encoded_output.npz"),
]


@pytest.mark.parametrize("present", SUBSETS, ids=lambda p: "+".join(p) or "raw_only")
def test_fd_shifts_folders_without_optional_files_evaluate(tmp_path, present):
    results = _fd_shifts_folder(tmp_path / "run", present)
    result = run_cli("evaluate", str(results))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


def test_a_folder_that_is_neither_says_what_it_expected(tmp_path):
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "logits.npy").write_bytes(b"\x93NUMPY")
    result = run_cli("evaluate", str(folder))
    assert_one_line_error(
        result, "downloads", "zarr.json", "raw_logits.npz", "external_confids.npz", "logits.npy"
    )
