"""``fdbench report RUN_DIR``: the page the benchmark writes, rebuilt from the run folder alone."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests._cli import run_cli

from .conftest import write_run_folder

ROOT = Path(__file__).resolve().parents[2]


def _benchmark_results(results: pd.DataFrame) -> pd.DataFrame:
    """The results as ``fdbench benchmark`` stores them: a protocol column, and the new-class
    study scored again under the unknown-detection protocol (other values, same study name)."""
    fd = results.assign(protocol="failure_detection", n_samples=300)
    ud = fd[fd["study"] == "new_class/svhn"].assign(protocol="unknown_detection", value=0.5)
    pooled = fd[fd["study"] == "corruption/noise/3"].assign(study="corruption/3", value=0.25)
    return pd.concat([fd, ud, pooled], ignore_index=True)


def test_report_command_reads_the_run_folder_as_the_benchmark_reports_it(tmp_path, report_inputs):
    inputs = dict(report_inputs, results=_benchmark_results(report_inputs["results"]))
    write_run_folder(tmp_path, inputs)
    done = run_cli("report", str(tmp_path), "--title", "tiny")
    assert done.returncode == 0, done.stderr
    assert "report.html" in done.stdout
    table = pd.read_csv(tmp_path / "tables" / "aurc_cifar10-ce.csv", index_col=0)
    # per-type corruption studies left out, the pooled level and its mean ("cor") shown,
    # unknown-detection rows left out
    assert list(table.columns) == ["iid", "new_class/svhn", "corruption/3", "cor"]
    assert (table["corruption/3"] == 250.0).all() and (table["cor"] == 250.0).all()
    results = report_inputs["results"]
    rows = results[(results.metric == "aurc") & (results.method == "ce")]
    expected = rows[rows.study == "new_class/svhn"].groupby("csf").value.mean() * 1000
    pd.testing.assert_series_equal(
        table["new_class/svhn"].sort_index(), expected.sort_index(), check_names=False
    )
    manifest = json.loads((tmp_path / "report_manifest.json").read_text())
    # the pooled level also gives a severity curve (no bootstrap bands: none in the folder)
    assert manifest["sections"] == [
        "run",
        "studies",
        "metrics",
        "rankings",
        "friedman",
        "severity",
        "curves",
        "calibration",
        "gallery",
        "precision",
        "sgr",
        "operating-points",
    ]
    assert "<title>tiny</title>" in (tmp_path / "report.html").read_text()


def test_report_command_errors_are_one_line(tmp_path, report_inputs):
    missing = run_cli("report", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0 and "nowhere" in missing.stderr
    report_inputs["results"].drop(columns="metric").to_csv(tmp_path / "results.csv")
    bad = run_cli("report", str(tmp_path))
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        f"fdbench: error: {tmp_path / 'results.csv'}: missing column(s) ['metric'] of a "
        "results table; found ['Unnamed: 0', 'dataset', 'method', 'seed', 'csf', 'study', 'value']"
    )
    assert "Traceback" not in bad.stderr


def test_report_command_takes_a_screenshot(tmp_path, report_inputs):
    from fdbench.report.browser import find_browser

    if find_browser() is None:
        pytest.skip("no Chromium browser on PATH to take the screenshot")
    report_inputs["results"].to_parquet(tmp_path / "results.parquet")
    shot = tmp_path / "shot.png"
    done = run_cli("report", str(tmp_path), "--screenshot", str(shot), "--screenshot-height", "900")
    assert done.returncode == 0, done.stderr
    import numpy as np
    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (1400, 900)
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    # not a blank page: the heat-mapped tables put many colours on it
    assert len(np.unique(pixels, axis=0)) > 50
