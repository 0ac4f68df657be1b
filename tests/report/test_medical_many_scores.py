"""The medical report with ~70 confidence scores: legible box plots of a stated selection and
every score in a cross-method table (a synthetic run, no benchmark)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from fdbench.report import write_report
from fdbench.report.plots import MIN_TEXT_PX
from fdbench.report.sections.seeds import BOX_TOP, box_selection, score_rows, score_table

METHODS = ("ce", "deepgamblers", "confidnet", "devries", "ensemble(ce)")
CSFS = (*(f"CSF{i:02d}-long-name" for i in range(13)), "MSR")


def _results() -> pd.DataFrame:
    """70 scores (5 methods × 14 CSFs, shared CSF names get the method in brackets), 3 seeds;
    MSR of every method ranks in the bottom half by AUGRC."""
    rng = np.random.default_rng(0)
    rows = []
    for m, method in enumerate(METHODS):
        for c, csf in enumerate(CSFS):
            place = (c + 13 * m) % 70 if csf != "MSR" else 60 + m
            for seed in (0, 1, 2):
                noise = 1e-4 * rng.random()
                for metric, value in (
                    ("augrc", 0.02 + 0.001 * place + noise),
                    ("aurc", 0.05 + 0.001 * place + noise),
                    ("auroc_f", 0.9 - 0.001 * place - noise),
                    ("fpr@80tpr", 0.3 + 0.001 * place + noise),
                ):
                    rows.append(("multi", method, seed, csf, metric, value))
    frame = pd.DataFrame(rows, columns=["dataset", "method", "seed", "csf", "metric", "value"])
    return frame.assign(study="iid", protocol="failure_detection", n_samples=100)


def test_box_selection_is_the_top_k_and_the_baselines_stated_in_the_caption():
    rows = score_rows(_results())
    assert rows["score"].nunique() == 70
    chosen, caption = box_selection(rows)
    augrc = rows[rows["metric"] == "augrc"].groupby("score")["value"].mean().sort_values()
    best = list(augrc.index[:BOX_TOP])
    baselines = [s for s in augrc.index if s.startswith("MSR (")]
    assert chosen == best + baselines
    assert len(chosen) == BOX_TOP + len(METHODS)
    assert caption.startswith(f"the {BOX_TOP} best of 70 scores by seed-mean AUGRC")
    few = rows[rows["score"].isin(best[:4])]
    assert box_selection(few) == (best[:4], "all 4 scores")


def test_score_table_holds_every_score_best_first_with_seed_statistics():
    rows = score_rows(_results())
    table = score_table(rows)
    assert len(table) == 70 and set(table["seeds"]) == {3}
    first = table.iloc[0]
    values = rows[(rows["score"] == first["score"]) & (rows["metric"] == "augrc")]["value"]
    expected = f"{values.mean() * 1000:.2f} ± {values.std(ddof=1) * 1000:.2f}"
    assert first["AUGRC ↓"] == expected
    means = [float(t.split(" ± ")[0]) for t in table["AUGRC ↓"]]
    assert means == sorted(means)


def test_medical_page_with_70_scores_is_legible(tmp_path):
    write_report(tmp_path, _results(), read_files=False, processes=1, seed_boxplots=True)
    manifest = json.loads((tmp_path / "report_manifest.json").read_text())
    assert manifest["figure_min_text_px"]["seed_boxplots_multi"] >= MIN_TEXT_PX - 0.01
    assert "scores_multi" in manifest["tables"]
    page = (tmp_path / "report.html").read_text()
    assert f"the {BOX_TOP} best of 70 scores" in page
    assert "every score across methods" in page
