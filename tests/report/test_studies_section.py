"""The report's "Studies" section: one block per study, its scoring methods best first."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fdbench.report import ReportTable, write_report
from fdbench.report.sections.studies import study_order, study_table


def _summary(studies, dataset="d") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": dataset,
            "study": list(studies),
            "scoring_method": "MSR",
            "metric": "augrc",
            "mean": 0.1,
            "std": 0.01,
            "n_seeds": 2,
        }
    )


def test_studies_come_in_the_leaderboard_order():
    studies = [
        "new_class/mnist",
        "corruption/2",
        "zzz",
        "iid",
        "new_class/semantic",
        "subclass",
        "corruption/1",
        "aaa",
    ]
    summary = pd.concat([_summary(studies, "b"), _summary(["iid"], "a")], ignore_index=True)
    assert study_order(summary) == [
        ("b", "iid"),
        ("b", "corruption/2"),
        ("b", "corruption/1"),
        ("b", "subclass"),
        ("b", "new_class/semantic"),
        ("b", "new_class/mnist"),
        ("b", "aaa"),
        ("b", "zzz"),
        ("a", "iid"),
    ]


def test_study_table_sorts_by_augrc_and_marks_each_column_in_its_direction():
    rows = []
    # (scoring method, AUGRC, AUROC_f): B best by AUGRC, C best by AUROC_f
    for name, augrc, auroc in (("A", 0.05, 0.80), ("B", 0.02, 0.85), ("C", 0.03, 0.90)):
        rows.append(("d", "iid", name, "augrc", augrc, 0.004, 3))
        rows.append(("d", "iid", name, "auroc_f", auroc, np.nan, 3))
    summary = pd.DataFrame(
        rows, columns=["dataset", "study", "scoring_method", "metric", "mean", "std", "n_seeds"]
    )
    table = study_table(summary, "d", "iid")
    assert list(table.frame.index) == ["B", "C", "A"]
    assert list(table.frame.columns) == ["AUGRC ×1000", "AUROC_f ×100"]
    np.testing.assert_allclose(table.frame["AUGRC ×1000"], [20.0, 30.0, 50.0])
    np.testing.assert_allclose(table.frame["AUROC_f ×100"], [85.0, 90.0, 80.0])
    assert table.best_cells() == {(0, 0), (1, 1)}
    assert list(table.intervals["AUGRC ×1000"]) == ["± 4.00"] * 3
    assert list(table.intervals["AUROC_f ×100"]) == [""] * 3
    assert "over 3 seeds" in table.title
    mixed = study_table(summary.assign(n_seeds=[1, 1, 3, 3, 3, 3]), "d", "iid")
    assert mixed.title.endswith("over 1–3 seeds per scoring method (no ± where one)")
    assert study_table(summary, "d", "other") is None
    with pytest.raises(ValueError, match="higher_is_better"):
        ReportTable("t", "t", table.frame, 2, (True,))


def test_results_without_leaderboard_files_get_the_section(tmp_path):
    # the results of `fdbench evaluate`: empty dataset and method, seed 0
    results = pd.DataFrame(
        {
            "dataset": "",
            "method": "",
            "seed": 0,
            "csf": ["MSR", "PE", "MSR", "PE"],
            "study": ["iid", "iid", "new_class/x", "new_class/x"],
            "metric": "augrc",
            "value": [0.004, 0.003, 0.2, 0.3],
        }
    )
    path = write_report(tmp_path, results, read_files=False, processes=1)
    manifest = json.loads((tmp_path / "report_manifest.json").read_text())
    assert "studies" in manifest["sections"]
    assert [a for a in manifest["subsections"] if a.startswith("studies_")] == [
        "studies_iid",
        "studies_new_class-x",
    ]
    table = pd.read_csv(tmp_path / "tables" / "study_iid.csv", index_col=0)
    assert list(table.index) == ["PE", "MSR"]
    np.testing.assert_allclose(table["AUGRC ×1000"], [3.0, 4.0])
    page = path.read_text(encoding="utf-8")
    assert "iid — best by AUGRC ×1000: PE</summary>" in page
    assert "new_class/x — best by AUGRC ×1000: MSR</summary>" in page
    # one seed: no spread under the values
    assert '<span class="ci">' not in page.split('<section id="studies">')[1].split("</section>")[0]


def test_results_read_back_from_csv_without_method_or_seed(tmp_path):
    from fdbench.report.sections.studies import read_study_summary

    # `fdbench evaluate --out results.csv` read back: empty dataset and method are NaN; no seed
    results = pd.DataFrame(
        {
            "dataset": np.nan,
            "method": np.nan,
            "csf": ["MSR", "PE"],
            "study": "iid",
            "metric": "augrc",
            "value": [0.004, 0.003],
        }
    )
    summary = read_study_summary(tmp_path, results)
    assert list(summary["dataset"]) == ["", ""]
    assert list(summary["scoring_method"]) == ["MSR", "PE"]
    np.testing.assert_allclose(summary["mean"], [0.004, 0.003])
    assert read_study_summary(tmp_path, None) is None


def test_the_full_report_builds_its_studies_from_the_results(full_report):
    folder, path, manifest = full_report
    # no leaderboard files: from results.parquet; the per-type corruption study has no block
    assert manifest["sections"][:2] == ["run", "studies"]
    assert [a for a in manifest["subsections"] if a.startswith("studies_")] == [
        "studies_iid",
        "studies_new_class-svhn",
    ]
    results = pd.read_parquet(folder / "results.parquet")
    rows = results[
        (results["method"] == "dg")
        & (results["csf"] == "DG-Res")
        & (results["study"] == "iid")
        & (results["metric"] == "aurc")
    ]
    table = pd.read_csv(folder / "tables" / "study_cifar10_iid.csv", index_col=0)
    assert table.loc["DG-Res", "AURC ×1000"] == pytest.approx(1000 * rows["value"].mean())
    assert "no leaderboard files" in path.read_text(encoding="utf-8")


def test_seed_count_leaves_out_rows_of_no_seed():
    from fdbench.report.sections.studies import _seeds

    rows = pd.DataFrame({"n_seeds": [0, 2, 2, 1]})
    assert _seeds(rows) == "1–2 seeds per scoring method (no ± where one)"
    assert _seeds(pd.DataFrame({"n_seeds": [0, 3]})) == "3 seeds"
