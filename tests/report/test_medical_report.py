"""The medical testbed's report form: seed box plots and Table 2's classification performance."""

import json

import pandas as pd
import pytest

from fdbench.report import write_report
from fdbench.report.sections.seeds import (
    classification_performance,
    score_rows,
    seed_boxplot_figure,
)


def _results() -> pd.DataFrame:
    rows = []
    for dataset, binary in (("multi", False), ("binary", True)):
        for seed in (0, 1, 2):
            for method, csfs in (("ce", ["MSR", "DOCTOR"]), ("confidnet", ["MSR", "ConfidNet"])):
                for csf in csfs:
                    for metric in ("auroc_f", "fpr@80tpr", "aurc", "augrc", "accuracy"):
                        value = 0.8 + 0.01 * seed if metric != "accuracy" else 0.7 + 0.1 * seed
                        rows.append((dataset, method, seed, csf, metric, value))
                    if binary:
                        rows.append((dataset, method, seed, csf, "roc_auc", 0.9 + 0.02 * seed))
        rows.append((dataset, "ensemble(ce)", 0, "ENS-MSR", "accuracy", 0.95))
    frame = pd.DataFrame(rows, columns=["dataset", "method", "seed", "csf", "metric", "value"])
    return frame.assign(study="iid", protocol="failure_detection", n_samples=100)


def test_classification_performance_table2():
    table = classification_performance(_results())
    multi = table[(table["dataset"] == "multi") & (table["method"] == "ce")].iloc[0]
    # Accuracy 0.7, 0.8, 0.9 over three seeds: mean 0.8, std (ddof 1) 0.1.
    assert (multi["metric"], multi["value"], multi["classifier"]) == (
        "accuracy",
        "0.800 (0.100)",
        "network",
    )
    binary = table[(table["dataset"] == "binary") & (table["method"] == "ce")].iloc[0]
    assert (binary["metric"], binary["value"]) == ("roc_auc", "0.920 (0.020)")
    ensemble = table[table["method"] == "ensemble(ce)"]
    assert set(ensemble["classifier"]) == {"ensemble"} and set(ensemble["n_seeds"]) == {1}


def test_score_labels_and_figure():
    rows = score_rows(_results())
    assert {"MSR (ce)", "MSR (confidnet)", "DOCTOR", "ConfidNet"} == set(rows["score"])
    assert "accuracy" not in set(rows["metric"])
    png = seed_boxplot_figure(rows[rows["dataset"] == "multi"], "multi")
    assert png.startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="no box-plot"):
        seed_boxplot_figure(rows.iloc[:0], "empty")


def test_report_section_only_when_asked(tmp_path):
    write_report(tmp_path / "a", _results(), read_files=False, processes=1)
    manifest = json.loads((tmp_path / "a" / "report_manifest.json").read_text())
    assert "seeds" not in manifest["sections"]
    write_report(tmp_path / "b", _results(), read_files=False, processes=1, seed_boxplots=True)
    manifest = json.loads((tmp_path / "b" / "report_manifest.json").read_text())
    assert "seeds" in manifest["sections"]
    assert {"seed_boxplots_multi", "seed_boxplots_binary"} <= set(manifest["figures"])
    assert "classification_performance" in manifest["tables"]
