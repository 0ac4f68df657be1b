"""End-to-end tests of ``fdbench evaluate`` on files the tests write, good and bad."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.outputs import FD_SHIFTS_CORRUPTIONS as _FD_SHIFTS_TYPES
from tests._cli import run_cli

ROOT = Path(__file__).resolve().parents[2]


def synthetic_npz(path: Path, *, n: int = 400, k: int = 5, seed: int = 0, **overrides) -> Path:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 3.0 * np.eye(k)[labels] * rng.random((n, 1))
    study = np.where(np.arange(n) < n // 2, "iid", "corruption/noise")
    new = rng.normal(size=(n // 4, k))
    arrays = {
        "logits": np.vstack([logits, new]),
        "labels": np.concatenate([labels, np.full(n // 4, -1)]),
        "study": np.concatenate([study, np.full(n // 4, "new_class/synthetic")]),
    }
    arrays.update(overrides)
    np.savez(path, **arrays)
    return path


def test_evaluate_npz_end_to_end(tmp_path):
    path = synthetic_npz(tmp_path / "outputs.npz")
    out = tmp_path / "results.parquet"
    result = run_cli("evaluate", str(path), "--out", str(out))
    assert result.returncode == 0, result.stderr
    for study in ("iid", "corruption/noise", "new_class/synthetic"):
        assert study in result.stdout
    table = pd.read_parquet(out)
    assert {"MSR", "MLS", "PE", "energy"} <= set(table["csf"])
    # The MSR AURC of the iid study equals the metric computed straight from the arrays.
    data = np.load(path)
    iid = data["study"] == "iid"
    logits, labels = data["logits"][iid], data["labels"][iid]
    z = logits - logits.max(axis=1, keepdims=True)
    msr = np.exp(z).max(axis=1) / np.exp(z).sum(axis=1)
    expected = M.aurc((logits.argmax(axis=1) != labels).astype(float), msr)
    row = table[(table.study == "iid") & (table.csf == "MSR") & (table.metric == "aurc")]
    assert row["value"].item() == pytest.approx(expected, abs=1e-12)


def test_evaluate_npz_with_bootstrap_to_parquet(tmp_path):
    path = synthetic_npz(tmp_path / "outputs.npz", n=200)
    out = tmp_path / "x.parquet"
    result = run_cli("evaluate", str(path), "--bootstrap", "50", "--seed", "0", "--out", str(out))
    assert result.returncode == 0, result.stderr
    table = pd.read_parquet(out)
    assert {"std", "ci_lower", "ci_upper"} <= set(table.columns)
    # The interval of the iid MSR AURC is the bootstrap of the arrays themselves (same seed).
    data = np.load(path)
    iid = data["study"] == "iid"
    logits, labels = data["logits"][iid], data["labels"][iid]
    residuals = (logits.argmax(axis=1) != labels).astype(float)
    msr = np.exp(M.log_softmax(logits)).max(axis=1)
    draws = M.bootstrap(residuals, msr, metrics=["aurc"], n_resamples=50, seed=0)
    summary = M.bootstrap_summary(draws)
    row = table[(table.study == "iid") & (table.csf == "MSR") & (table.metric == "aurc")]
    assert row["ci_lower"].item() == pytest.approx(summary.loc["aurc", "lower"], abs=1e-12)
    assert row["ci_upper"].item() == pytest.approx(summary.loc["aurc", "upper"], abs=1e-12)
    assert row["std"].item() == pytest.approx(summary.loc["aurc", "std"], abs=1e-12)


@pytest.mark.parametrize("protocol", ["failure_detection", "unknown_detection"])
def test_evaluate_pools_per_type_corruption_splits_per_severity(tmp_path, protocol):
    rng = np.random.default_rng(4)
    k, sizes = (
        4,
        {
            "iid": 80,
            "corruption/fog/1": 50,
            "corruption/noise/1": 70,
            "corruption/fog/2": 50,
            "corruption/noise/2": 70,
        },
    )
    study = np.concatenate([np.full(n, name) for name, n in sizes.items()])
    n = study.size
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 2.0 * np.eye(k)[labels] * rng.random((n, 1))
    path = tmp_path / "outputs.npz"
    np.savez(path, logits=logits, labels=labels, study=study)
    out = tmp_path / "results.parquet"
    result = run_cli("evaluate", str(path), "--protocol", protocol, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "corruption/1  (n = 120" in result.stdout
    table = pd.read_parquet(out)
    assert list(dict.fromkeys(table.study)) == [*sizes, "corruption/1", "corruption/2"]
    pooled = table[table.study == "corruption/2"]
    assert (pooled.n_samples == 120).all()
    members = np.isin(study, ["corruption/fog/2", "corruption/noise/2"])
    residuals = (logits[members].argmax(axis=1) != labels[members]).astype(float)
    msr = np.exp(M.log_softmax(logits[members])).max(axis=1)
    row = pooled[(pooled.csf == "MSR") & (pooled.metric == "aurc")]
    assert row["value"].item() == pytest.approx(M.aurc(residuals, msr), abs=1e-12)


def test_evaluate_table_with_bootstrap_intervals(tmp_path):
    rng = np.random.default_rng(1)
    n = 300
    label = rng.integers(0, 3, n)
    correct = rng.random(n) < 0.8
    prediction = np.where(correct, label, (label + 1) % 3)
    table = pd.DataFrame(
        {
            "label": label,
            "prediction": prediction,
            "good": correct + rng.random(n),
            "bad": rng.random(n),
        }
    )
    path = tmp_path / "conf.csv"
    table.to_csv(path, index=False)
    out = tmp_path / "res.csv"
    result = run_cli("evaluate", str(path), "--bootstrap", "50", "--seed", "3", "--out", str(out))
    assert result.returncode == 0, result.stderr
    res = pd.read_csv(out)
    aurc = res[res.metric == "aurc"].set_index("csf")
    assert aurc.loc["good", "value"] < aurc.loc["bad", "value"]
    assert (aurc["ci_lower"] <= aurc["ci_upper"]).all()
    again = tmp_path / "res2.csv"
    assert (
        run_cli(
            "evaluate", str(path), "--bootstrap", "50", "--seed", "3", "-o", str(again)
        ).returncode
        == 0
    )
    pd.testing.assert_frame_equal(pd.read_csv(again), res)


def test_evaluate_real_example_model(tmp_path):
    path = tmp_path / "digits.npz"
    made = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "make_outputs.py"), str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    result = run_cli("evaluate", str(path), "--protocol", "unknown_detection")
    assert result.returncode == 0, result.stderr
    assert "new_class/held_out_digits" in result.stdout


def _bad_npz(tmp_path: Path, **overrides) -> Path:
    return synthetic_npz(tmp_path / "bad.npz", **overrides)


def _truncated(path: Path) -> Path:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return path


def _truncated_fd_shifts_run(tmp_path: Path) -> Path:
    from ..outputs.fd_shifts_layout import write_fd_shifts_run

    write_fd_shifts_run(tmp_path / "exp", np.random.default_rng(0))
    _truncated(tmp_path / "exp" / "test_results" / "raw_logits.npz")
    return tmp_path / "exp" / "test_results"


def _npz_without(tmp_path: Path, key: str) -> Path:
    data = dict(np.load(synthetic_npz(tmp_path / "full.npz")))
    del data[key]
    np.savez(tmp_path / "bad.npz", **data)
    return tmp_path / "bad.npz"


def _garbage(path: Path) -> Path:
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 2000, dtype=np.uint8).tobytes())
    return path


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda p: p / "missing.npz", "not found"),
        (lambda p: _bad_npz(p, labels=np.zeros(3, dtype=int)), "labels"),
        (lambda p: _bad_npz(p, logits=np.full((500, 5), np.nan)), "logits"),
        (lambda p: _bad_npz(p, labels=np.full(500, 9)), "label"),
        (lambda p: _bad_npz(p, logits=np.zeros(500)), "logits"),
        (lambda p: _truncated(_bad_npz(p)), "cannot read npz file"),
        (lambda p: _truncated_fd_shifts_run(p), "cannot read FD-Shifts file"),
        (lambda p: _bad_npz(p, logits=np.zeros((500, 5, 2))), "logits"),
        (lambda p: _bad_npz(p, labels=np.full(500, -2)), "label"),
        (lambda p: _bad_npz(p, labels=np.full(500, 0.5)), "labels"),
        (lambda p: _bad_npz(p, labels=np.full(500, "a")), "labels"),
        (lambda p: _bad_npz(p, study=np.full(10, "iid")), "study"),
        (lambda p: _npz_without(p, "logits"), "logits"),
        (lambda p: _npz_without(p, "labels"), "labels"),
        (
            lambda p: _bad_npz(
                p, logits=np.zeros((0, 5)), labels=np.zeros(0, int), study=np.zeros(0, str)
            ),
            "no samples",
        ),
        (lambda p: _bad_npz(p, labels=np.full(500, -1)), "iid"),
        (lambda p: _garbage(p / "garbage.npz"), "garbage.npz"),
    ],
    ids=[
        "missing-file",
        "wrong-length",
        "nan-logits",
        "label-out-of-range",
        "1d-logits",
        "truncated-npz",
        "truncated-fd-shifts",
        "3d-logits",
        "label-below-minus-one",
        "fractional-labels",
        "text-labels",
        "study-wrong-length",
        "missing-logits-key",
        "missing-labels-key",
        "empty",
        "new-class-only-study-without-iid",
        "unreadable",
    ],
)
def test_bad_npz_is_one_clear_line(tmp_path, make, needle):
    result = run_cli("evaluate", str(make(tmp_path)))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert needle in lines[0]


@pytest.mark.parametrize(
    ("frame", "args", "needle"),
    [
        (pd.DataFrame({"label": [0, 1], "msr": [0.5, 0.6]}), [], "prediction"),
        (
            pd.DataFrame({"label": [0, 1], "prediction": [0, 0], "msr": [np.nan, 0.6]}),
            [],
            "non-finite",
        ),
        (pd.DataFrame({"label": [-1, -1], "prediction": [0, 0], "msr": [0.1, 0.6]}), [], "iid"),
        (
            pd.DataFrame({"label": [0, 1], "prediction": [0, 0], "msr": [0.1, 0.6]}),
            ["-c", "nope"],
            "nope",
        ),
        (pd.DataFrame({"label": [], "prediction": [], "msr": []}), [], "no rows"),
        (pd.DataFrame({"prediction": [0, 1], "msr": [0.5, 0.6]}), [".parquet"], "label"),
        (
            pd.DataFrame({"label": [0, 1], "prediction": [0, 0], "msr": [0.1, np.inf]}),
            [".parquet"],
            "non-finite",
        ),
        (
            pd.DataFrame({"label": ["a", "b"], "prediction": [0, 0], "msr": [0.1, 0.6]}),
            [],
            "label",
        ),
        (
            pd.DataFrame({"label": [0, 1], "prediction": [0.5, 0], "msr": [0.1, 0.6]}),
            [],
            "prediction",
        ),
        (
            pd.DataFrame({"label": [0, 1], "prediction": [0, 0], "msr": ["x", "y"]}),
            ["-c", "msr"],
            "is not a number",
        ),
        (
            pd.DataFrame({"label": [0, 1], "prediction": [0, 0], "msr": [0.1, 0.6]}),
            ["-c", "label"],
            "cannot be confidence",
        ),
        (
            pd.DataFrame({"label": [0, 1], "prediction": [0, 0], "msr": [0.1, 0.6]}),
            ["--bootstrap", "3", "--seed", "-1"],
            "seed",
        ),
    ],
    ids=[
        "missing-column",
        "nan-confidence",
        "new-class-without-iid",
        "unknown-column",
        "empty",
        "parquet-missing-column",
        "parquet-inf-confidence",
        "text-labels",
        "fractional-prediction",
        "text-confidence-column",
        "label-as-confidence",
        "negative-seed",
    ],
)
def test_bad_table_is_one_clear_line(tmp_path, frame, args, needle):
    suffix = ".parquet" if ".parquet" in args else ".csv"
    args = [a for a in args if a != ".parquet"]
    path = tmp_path / f"bad{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    result = run_cli("evaluate", str(path), *args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert needle in lines[0]


def test_precision_report_prints_each_precision(tmp_path):
    path = synthetic_npz(tmp_path / "outputs.npz", n=200)
    result = run_cli("evaluate", str(path), "--precision-report")
    assert result.returncode == 0, result.stderr
    assert "float precision of the softmax on iid" in result.stdout
    for precision in ("float16", "float32", "float64"):
        assert precision in result.stdout


def _aurc_from_definition(residuals: np.ndarray, confidence: np.ndarray) -> float:
    """AURC as METRICS.md defines it: one point per distinct threshold, then coverage 0."""
    coverage, risk = [], []
    for tau in np.unique(confidence):
        accepted = confidence >= tau
        coverage.append(accepted.mean())
        risk.append(residuals[accepted].mean())
    coverage.append(0.0)
    risk.append(risk[-1])
    steps = zip(risk, risk[1:], coverage, coverage[1:], strict=False)
    return float(sum((r0 + r1) / 2 * (c0 - c1) for r0, r1, c0, c1 in steps))


def _noise_level(dataset_idx: np.ndarray, level: int) -> np.ndarray:
    """Mask of FD-Shifts' noise-study samples (dataset_idx 2) at intensity ``level`` (1..5): the
    set is 15 types × 5 intensities × N, type-major (fd_shifts/analysis/studies.py)."""
    noise = np.flatnonzero(dataset_idx == 2)
    cells = np.arange(noise.size).reshape(15, 5, -1)
    mask = np.zeros(dataset_idx.size, dtype=bool)
    mask[noise[cells[:, level - 1].ravel()]] = True
    return mask


def test_evaluate_fd_shifts_noise_study_pools_per_intensity(tmp_path):
    # FD-Shifts evaluates its noise study once per intensity on all 15 corruption types
    # together; `fdbench evaluate` on its test_results must report those pooled studies.
    from sklearn.metrics import roc_auc_score

    from ..outputs.fd_shifts_layout import write_fd_shifts_run

    n = 4
    arrays = write_fd_shifts_run(tmp_path / "exp", np.random.default_rng(11), noise_size=75 * n)
    out = tmp_path / "results.parquet"
    result = run_cli("evaluate", str(tmp_path / "exp" / "test_results"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    rows = pd.read_parquet(out).query("csf == 'MSR'").set_index(["study", "metric"])
    for level in range(1, 6):
        assert rows.loc[(f"corruption/{level}", "aurc"), "n_samples"] == 15 * n
    assert rows.loc[("corruption/fog/3", "aurc"), "n_samples"] == n
    raw = arrays["raw"].astype(np.float64)
    logits, labels, idx = raw[:, :-2], raw[:, -2], raw[:, -1]
    z = logits - logits.max(axis=1, keepdims=True)
    msr = np.exp(z).max(axis=1) / np.exp(z).sum(axis=1)
    wrong = (logits.argmax(axis=1) != labels).astype(float)
    per_level = []
    for level in range(1, 6):
        mask = _noise_level(idx, level)
        c, r = msr[mask], wrong[mask]
        study = f"corruption/{level}"
        aurc = rows.loc[(study, "aurc"), "value"]
        assert aurc == pytest.approx(_aurc_from_definition(r, c), rel=1e-9)
        if 0 < r.sum() < r.size:
            auroc = rows.loc[(study, "auroc_f"), "value"]
            assert auroc == pytest.approx(roc_auc_score(1 - r, c), rel=1e-9)
        per_level.append(aurc)
    # a pool is not the mean of its per-type studies
    per_type = [rows.loc[(f"corruption/{t}/1", "aurc"), "value"] for t in _FD_SHIFTS_TYPES]
    assert per_level[0] != pytest.approx(np.mean(per_type), rel=1e-6)


def test_evaluate_fd_shifts_noise_study_of_wrong_size_is_one_clear_line(tmp_path):
    from ..outputs.fd_shifts_layout import write_fd_shifts_run

    write_fd_shifts_run(tmp_path / "exp", np.random.default_rng(12), noise_size=80)
    result = run_cli("evaluate", str(tmp_path / "exp" / "test_results"))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "raw_logits.npz" in lines[0] and "has 80 samples" in lines[0]
    assert "15 corruption types × 5 intensities" in lines[0]


def test_evaluate_fd_shifts_run_reproduces_metrics_from_the_arrays(tmp_path):
    from sklearn.metrics import roc_auc_score

    from ..outputs.fd_shifts_layout import write_fd_shifts_run

    arrays = write_fd_shifts_run(tmp_path / "exp", np.random.default_rng(7))
    out = tmp_path / "results.parquet"
    result = run_cli("evaluate", str(tmp_path / "exp" / "test_results"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    table = pd.read_parquet(out).set_index(["csf", "study", "metric"])["value"]
    studies = set(table.index.get_level_values("study"))
    pooled = {f"corruption/{level}" for level in range(1, 6)}
    assert pooled | {"iid", "svhn"} <= studies
    assert len(studies - pooled - {"iid", "svhn"}) == 75  # corruption/<type>/<severity>
    assert {"MSR", "DG-Res", "MCD-MSR", "Mahalanobis", "ViM", "DG-Res-MCD"} <= set(
        table.index.get_level_values("csf")
    )

    raw = arrays["raw"].astype(np.float64)
    logits, labels, idx = raw[:, :-2], raw[:, -2], raw[:, -1]
    z = logits - logits.max(axis=1, keepdims=True)
    msr = np.exp(z).max(axis=1) / np.exp(z).sum(axis=1)
    wrong = (logits.argmax(axis=1) != labels).astype(float)
    dg = arrays["ext"].astype(np.float64)
    mcd = arrays["dist"].astype(np.float64)
    mcd_p = np.exp(mcd - mcd.max(axis=1, keepdims=True))
    mcd_p = (mcd_p / mcd_p.sum(axis=1, keepdims=True)).mean(axis=2)
    mcd_wrong = (mcd_p.argmax(axis=1) != labels).astype(float)
    iid, corrupt, ood = idx == 1, idx == 2, idx == 3
    # new-class study (FD-Shifts protocol): correct i.i.d. samples + every new-class sample
    new_class = (iid & (wrong == 0)) | ood
    cases = [
        ("MSR", "iid", msr, wrong, iid),
        ("MSR", "corruption/2", msr, wrong, corrupt & _noise_level(idx, 2)),
        ("MSR", "svhn", msr, np.where(ood, 1.0, wrong), new_class),
        ("DG-Res", "iid", dg, wrong, iid),
        ("MCD-MSR", "iid", mcd_p.max(axis=1), mcd_wrong, iid),
    ]
    for csf, study, confidence, residuals, mask in cases:
        c, r = confidence[mask], residuals[mask]
        assert table[(csf, study, "aurc")] == pytest.approx(_aurc_from_definition(r, c), rel=1e-9)
        assert table[(csf, study, "auroc_f")] == pytest.approx(roc_auc_score(1 - r, c), rel=1e-9)


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("bad.csv", b"\x00\xff\xfe" * 100, "cannot read bad.csv"),
        ("empty.csv", b"", "cannot read empty.csv"),
        ("bad.parquet", b"not a parquet file" * 50, "cannot read bad.parquet"),
        ("bad.txt", b"hello", "bad.txt"),
    ],
    ids=["binary-csv", "empty-file", "corrupt-parquet", "unknown-format"],
)
def test_unreadable_table_is_one_clear_line(tmp_path, name, content, needle):
    path = tmp_path / name
    path.write_bytes(content)
    result = run_cli("evaluate", str(path))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert needle in lines[0]


def _assert_curve_matches(curves: pd.DataFrame, residuals, confidence, *, study: str, csf: str):
    """The stored curve of ``csf`` on ``study`` lies on fdbench.metrics.risk_coverage_curve of
    the given residuals and confidences: both ends, and every stored (possibly thinned) point."""
    stored = curves[(curves.study == study) & (curves.csf == csf)]
    assert len(stored) > 2
    full = M.risk_coverage_curve(residuals, confidence)
    for column, values in (
        ("coverage", full.coverages),
        ("selective_risk", full.selective_risks),
        ("generalized_risk", full.generalized_risks),
    ):
        got = stored[column].to_numpy()
        assert got[0] == pytest.approx(values[0], abs=1e-12)
        assert got[-1] == pytest.approx(values[-1], abs=1e-12)
    index = np.searchsorted(-full.coverages, -stored["coverage"].to_numpy())
    np.testing.assert_allclose(full.coverages[index], stored["coverage"], atol=1e-12)
    np.testing.assert_allclose(full.selective_risks[index], stored["selective_risk"], atol=1e-12)
    np.testing.assert_allclose(
        full.generalized_risks[index], stored["generalized_risk"], atol=1e-12
    )


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_evaluate_writes_curves_that_the_report_draws(tmp_path):
    n, k = 400, 5
    rng = np.random.default_rng(7)
    base = np.load(synthetic_npz(tmp_path / "base.npz", n=n, k=k))
    mcd = base["logits"][:, None, :] + rng.normal(scale=1.5, size=(len(base["labels"]), 6, k))
    path = synthetic_npz(tmp_path / "outputs.npz", n=n, k=k, mcd_logits=mcd)
    folder = tmp_path / "eval"
    folder.mkdir()
    done = run_cli("evaluate", str(path), "--out", str(folder / "results.parquet"), "--name", "toy")
    assert done.returncode == 0, done.stderr
    curves = pd.read_parquet(folder / "curves.parquet")
    results = pd.read_parquet(folder / "results.parquet")
    assert {
        "study",
        "csf",
        "coverage",
        "selective_risk",
        "generalized_risk",
        "dataset",
        "method",
        "seed",
    } <= set(curves.columns)
    assert set(curves["dataset"]) == {"toy"}
    # every study and CSF of the results has its curve
    pairs = set(map(tuple, results[["study", "csf"]].drop_duplicates().to_numpy()))
    assert set(map(tuple, curves[["study", "csf"]].drop_duplicates().to_numpy())) == pairs
    data = np.load(path)
    iid = data["study"] == "iid"
    logits, labels = data["logits"][iid], data["labels"][iid]
    msr = _softmax(logits).max(axis=1)
    _assert_curve_matches(
        curves, (logits.argmax(axis=1) != labels).astype(float), msr, study="iid", csf="MSR"
    )
    # an MC-dropout CSF is judged with the MC-dropout classifier's own prediction
    mean = _softmax(data["mcd_logits"][iid]).mean(axis=1)
    assert "MCD-MSR" in set(curves["csf"])
    _assert_curve_matches(
        curves,
        (mean.argmax(axis=1) != labels).astype(float),
        mean.max(axis=1),
        study="iid",
        csf="MCD-MSR",
    )
    report = run_cli("report", str(folder))
    assert report.returncode == 0, report.stderr
    manifest = json.loads((folder / "report_manifest.json").read_text())
    assert "curves" in manifest["sections"]
    assert any(name.startswith("curves") for name in manifest["figures"])


def test_evaluate_table_writes_curves_and_refuses_foreign_curves_file(tmp_path):
    rng = np.random.default_rng(3)
    n = 240
    label = rng.integers(0, 3, n)
    correct = rng.random(n) < 0.7
    table = pd.DataFrame(
        {
            "study": np.where(np.arange(n) < n // 2, "iid", "shifted"),
            "label": label,
            "prediction": np.where(correct, label, (label + 1) % 3),
            "good": correct + rng.random(n),
            "bad": rng.random(n),
        }
    )
    path = tmp_path / "conf.csv"
    table.to_csv(path, index=False)
    folder = tmp_path / "eval"
    folder.mkdir()
    done = run_cli("evaluate", str(path), "--out", str(folder / "results.parquet"))
    assert done.returncode == 0, done.stderr
    curves = pd.read_parquet(folder / "curves.parquet")
    assert set(curves["study"]) == {"iid", "shifted"} and set(curves["csf"]) == {"good", "bad"}
    assert set(curves["dataset"]) == {""}
    part = table[table.study == "shifted"]
    residuals = (part["label"] != part["prediction"]).to_numpy(dtype=float)
    _assert_curve_matches(curves, residuals, part["good"].to_numpy(), study="shifted", csf="good")
    report = run_cli("report", str(folder))
    assert report.returncode == 0, report.stderr
    manifest = json.loads((folder / "report_manifest.json").read_text())
    assert any(name.startswith("curves") for name in manifest["figures"])
    # a curves.parquet fdbench did not write is refused before any work, like --out
    other = tmp_path / "other"
    other.mkdir()
    (other / "curves.parquet").write_bytes(b"mine")
    refused = run_cli("evaluate", str(path), "--out", str(other / "results.csv"))
    assert refused.returncode == 2
    assert "curves.parquet" in refused.stderr and not (other / "results.csv").exists()
    named = run_cli("evaluate", str(path), "--out", str(other / "curves.csv"))
    assert named.returncode == 2 and "curves" in named.stderr


def test_evaluate_path_imports_no_analysis_optimizer_or_store(tmp_path):
    """``fdbench evaluate FILE.npz --out results.parquet`` imports neither pandas (the tables
    are pyarrow's: ``evaluate_run(..., output="arrow")``), the analyses (scipy.stats),
    scipy.optimize, scipy.spatial nor zarr: they load where a function needs them (#37:
    imports <= 0.4 s, pandas' alone ~0.25 s)."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 60)
    np.savez(tmp_path / "outputs.npz", logits=rng.standard_normal((60, 3)), labels=labels)
    heavy = ("pandas", "scipy.stats", "scipy.optimize", "scipy.spatial", "zarr", "fdbench.analysis")
    code = (
        "import sys\n"
        "from fdbench.cli.command import main\n"
        f"sys.argv = ['fdbench', 'evaluate', {str(tmp_path / 'outputs.npz')!r}, '--out', "
        f"{str(tmp_path / 'results.parquet')!r}, '--name', 'toy']\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    for name in ("results.parquet", "curves.parquet"):
        written = pd.read_parquet(tmp_path / name)
        assert len(written) and set(written["dataset"]) == {"toy"}


def test_evaluate_path_modules_import_no_pandas_scipy_or_pyarrow():
    """Importing the modules of ``fdbench evaluate``'s path (``EVALUATE_IMPORTS`` of
    ``benchmarks/evaluate_scale.py``) loads neither pandas, scipy nor pyarrow: they load in the
    functions that need them (#37: the evaluate path's imports <= 0.4 s)."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "evaluate_scale.py"
    spec = importlib.util.spec_from_file_location("evaluate_scale", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    heavy = ("pandas", "scipy", "pyarrow")
    code = (
        "import sys\n"
        f"import {', '.join(module.EVALUATE_IMPORTS)}\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
