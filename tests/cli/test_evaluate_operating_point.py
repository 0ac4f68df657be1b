"""``fdbench evaluate --operating-point``: printed, written beside --out, shown by the report."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fdbench import metrics as M

from .._cli import run_cli
from .test_evaluate import synthetic_npz


def test_operating_points_of_npz_outputs_are_written_and_reported(tmp_path):
    path = synthetic_npz(tmp_path / "outputs.npz", n=1200)
    out = tmp_path / "results.parquet"
    done = run_cli(
        "evaluate", str(path), "--out", str(out), "--seed", "3",
        "--operating-point", "alpha=0.2,delta=0.1,calibration=0.4",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Operating points" in done.stdout and "Conformal sets" in done.stdout
    points = pd.read_csv(tmp_path / "operating_points.csv")
    assert set(points["calibration"]) == {"random 0.4 (seed 3)"}
    assert set(points["procedure"]) == set(M.OPERATING_POINT_METHODS)
    # the MSR row of the iid study is the procedure applied to the arrays themselves
    arrays = np.load(path)
    iid = arrays["study"] == "iid"
    probs = np.exp(M.log_softmax(arrays["logits"][iid]))
    r = (probs.argmax(1) != arrays["labels"][iid]).astype(float)
    c = probs.max(1)
    cal = M.calibration_split(r.size, 0.4, 3)
    row = points[(points["csf"] == "MSR") & (points["study"] == "iid")]
    row = row[row["procedure"] == "ltt_binomial"].iloc[0]
    point = M.certify(r[cal], c[cal], 0.2, 0.1, "ltt_binomial")
    assert row["threshold"] == point.threshold
    assert (tmp_path / "conformal_sets.csv").exists()
    report = run_cli("report", str(tmp_path))
    assert report.returncode == 0, report.stderr
    assert "Operating points" in (tmp_path / "report.html").read_text()


def test_a_bad_operating_point_is_one_line_before_any_work(tmp_path):
    path = synthetic_npz(tmp_path / "outputs.npz")
    for spec in ("alpha=0.1", "alpha=0.1,delta=2", "alpha=0.1,delta=0.1,calibration=nope"):
        done = run_cli("evaluate", str(path), "--operating-point", spec)
        assert done.returncode == 2, (spec, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "--operating-point" in lines[0], (spec, done.stderr)
