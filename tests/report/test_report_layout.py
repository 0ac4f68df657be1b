"""The report's layout and content choices of issue #24: what was run, collapsed blocks, the
section list, reference curves, one scale per quantity, explained empty cells, gallery labels."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fdbench.report import Gallery, select_gallery, write_report
from fdbench.report.page import SECTIONS
from fdbench.report.plots import optimal_risks
from fdbench.report.sections.sgr import NO_THRESHOLD, _sgr_summary


def test_the_run_section_comes_first_and_the_leaderboard_heads_the_sections(
    full_report,
):
    _, path, manifest = full_report
    page = path.read_text(encoding="utf-8")
    assert manifest["sections"][0] == "run"
    # the leaderboard heads the section list, then one block per study, then the detail
    assert [anchor for anchor, _, _ in SECTIONS][:3] == ["leaderboard", "studies", "metrics"]
    head = page[page.index('<section id="run">') : page.index('<section id="metrics">')]
    for what in ("data sets", "methods", "ce (seeds 0, 1)", "studies (3)", "fdbench version"):
        assert what in head
    # every study and dataset × method is a collapsed block listed in the contents, its anchor
    # inside the <details> (so that following a link to it opens the block)
    assert "<details open" not in page
    assert manifest["subsections"]
    for anchor in manifest["subsections"]:
        assert f'<div class="block" id="{anchor}">' in page
        assert f'href="#{anchor}"' in page
    assert "<details id=" not in page


def test_optimal_curve_by_hand():
    coverage = np.array([0.0, 0.5, 0.8, 0.9, 1.0])
    selective, generalized = optimal_risks(0.2, coverage)
    np.testing.assert_allclose(generalized, [0, 0, 0, 0.1, 0.2], atol=1e-15)
    np.testing.assert_allclose(selective, [0, 0, 0, 0.1 / 0.9, 0.2], atol=1e-15)
    with pytest.raises(ValueError, match="error_rate"):
        optimal_risks(1.5, coverage)


def test_curves_always_draw_the_own_csf_and_the_msr_baseline(tmp_path, report_inputs):
    # asked for PE only: DG-Res (the method's own confidence) and MSR are drawn all the same
    write_report(tmp_path, curves=report_inputs["curves"], curve_csfs=["PE"], read_files=False)
    manifest = json.loads((tmp_path / "report_manifest.json").read_text())
    colours = manifest["figure_colours"]
    assert list(colours["curves_cifar10-dg"]) == ["DG-Res", "MSR", "PE"]
    assert list(colours["curves_cifar10-ce"]) == ["MSR", "PE"]


def test_aurc_is_shown_times_1000_in_the_precision_table(tmp_path, report_inputs):
    write_report(tmp_path, rounding=report_inputs["rounding"], read_files=False)
    table = pd.read_csv(tmp_path / "tables" / "float_precision.csv", index_col=0)
    # the columns are metric names, as in a run's rounding.csv; each is shown with its spec's
    # scale (AURC ×1000)
    assert list(table.columns) == ["aurc ×1000", "auroc_f"]
    np.testing.assert_allclose(table["aurc ×1000"], [1.2, 3e-4, 0.0])
    np.testing.assert_allclose(table["auroc_f"], [-2.1e-3, 1e-7, 0.0])


def test_sgr_cells_without_a_threshold_say_why(tmp_path):
    sgr = pd.DataFrame(
        {
            "study": ["iid"] * 4,
            "csf": ["MSR", "PE"] * 2,
            "target_risk": [0.01, 0.01, 0.1, 0.1],
            "risk": [np.nan, np.nan, 0.12, 0.08],
            "coverage": [0.0, 0.0, 0.7, 0.6],
            "excess": [np.nan, np.nan, 0.02, -0.02],
            "feasible": [False, False, True, True],
        }
    )
    frame = _sgr_summary(sgr)
    assert frame.loc["iid", "r*=0.01: CSFs with a threshold"] == 0
    assert frame.loc["iid", "r*=0.01: share exceeding"] == NO_THRESHOLD
    assert frame.loc["iid", "r*=0.01: median excess"] == NO_THRESHOLD
    assert frame.loc["iid", "r*=0.1: share exceeding"] == 0.5
    assert frame.loc["iid", "r*=0.1: median excess"] == pytest.approx(0.0)
    from fdbench.report.builder import _Builder
    from fdbench.report.sections.sgr import NO_THRESHOLD_NOTE, _sgr_section

    body = _sgr_section(_Builder(tmp_path), sgr.assign(seed=0))
    assert body.count(NO_THRESHOLD_NOTE) == 1  # explained once, not in every cell


def test_gallery_keeps_true_and_predicted_class(tmp_path):
    images = np.arange(6 * 2 * 2 * 1, dtype=np.uint8).reshape(6, 2, 2, 1)
    residuals = np.array([1.0, 0, 1, 0, 0, 1])
    confidence = np.array([0.9, 0.2, 0.8, 0.95, 0.1, 0.3])
    labels = np.array(["cat", "dog", "cat", "dog", "cat", "new class"])
    predictions = np.array(["dog", "dog", "dog", "dog", "cat", "cat"])
    gallery = select_gallery(
        images,
        residuals,
        confidence,
        study="iid",
        csf="MSR",
        k=1,
        labels=labels,
        predictions=predictions,
    )
    # the most confident failure (sample 0) and the least confident success (sample 4)
    assert list(gallery.label) == ["cat", "cat"] and list(gallery.prediction) == ["dog", "cat"]
    loaded = Gallery.load(gallery.save(tmp_path / "gallery.npz"))
    assert list(loaded.label) == ["cat", "cat"]
    plain = select_gallery(images, residuals, confidence, study="iid", csf="MSR", k=1)
    assert Gallery.concat([gallery, plain]).label is None
    with pytest.raises(ValueError, match="together"):
        select_gallery(images, residuals, confidence, study="iid", csf="MSR", labels=labels)
    write_report(tmp_path / "run", gallery=gallery, read_files=False)
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "true cat<br>pred dog<br>conf 0.9" in page


def test_bootstrap_intervals_of_one_run_are_shown_under_the_values(tmp_path):
    rows = pd.DataFrame(
        {
            "dataset": "",
            "method": "",
            "seed": 0,
            "csf": ["MSR", "PE"],
            "study": "iid",
            "metric": "aurc",
            "value": [0.004, 0.006],
            "ci_lower": [0.002, 0.003],
            "ci_upper": [0.007, 0.009],
        }
    )
    path = write_report(tmp_path, rows, read_files=False)
    page = path.read_text(encoding="utf-8")
    assert '4.00<br><span class="ci">[2.00, 7.00]</span>' in page
    assert "AURC ×1000 [95 % bootstrap interval]" in page


def test_evaluate_name_sets_the_dataset_and_the_report_title(tmp_path):
    from tests._cli import run_cli

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 300)
    logits = rng.normal(size=(300, 3)) + 2.0 * np.eye(3)[labels]
    np.savez(tmp_path / "outputs.npz", logits=logits, labels=labels)
    run = tmp_path / "run"
    run.mkdir()
    done = run_cli(
        "evaluate",
        str(tmp_path / "outputs.npz"),
        "--name",
        "toy",
        "--out",
        str(run / "results.parquet"),
    )
    assert done.returncode == 0, done.stderr
    assert set(pd.read_parquet(run / "results.parquet")["dataset"]) == {"toy"}
    done = run_cli("report", str(run))
    assert done.returncode == 0, done.stderr
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "<title>fdbench report — toy</title>" in page
    # several CSFs: ranked by their values, no bootstrap file needed
    assert 'data-report-table="rank_augrc_toy"' in page
    done = run_cli("evaluate", str(tmp_path / "outputs.npz"), "--name", " ")
    assert done.returncode == 2 and "--name" in done.stderr
