"""The leaderboard is the report's first section, and renders in headless Chromium."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.analysis import leaderboard as lb
from fdbench.analysis.paired import PairedSamples, paired_bootstrap
from fdbench.report.sections.leaderboard import leaderboard_frame, read_leaderboard

from .conftest import METHODS, SEEDS, _study_data, build_inputs, write_run_folder

STUDIES = ("iid", "corruption/1", "corruption/2", "new_class/semantic")
KINDS = {"ce": "ce", "dg": "deepgamblers"}


def _leaderboard_files(folder) -> pd.DataFrame:
    """The analysis stage's leaderboard files for synthetic runs of two methods."""
    rows, tasks = [], []
    for m, method in enumerate(METHODS):
        for seed in SEEDS:
            for s, study in enumerate(STUDIES):
                residuals, confidences = _study_data(m, s, seed)
                tasks.append(PairedSamples("cifar10", method, seed, study, residuals, confidences))
                for csf, conf in confidences.items():
                    for metric, fn in (("augrc", M.augrc), ("aurc", M.aurc)):
                        value = fn(residuals, conf)
                        rows.append(("cifar10", method, seed, csf, study, metric, value))
    results = pd.DataFrame(
        rows, columns=["dataset", "method", "seed", "csf", "study", "metric", "value"]
    )
    paired = paired_bootstrap(tasks, metrics=("augrc", "aurc"), n_resamples=30, kinds=KINDS)
    summary = lb.seed_summary(results, KINDS)
    columns = lb.column_bootstrap(paired)
    summary.to_csv(folder / "leaderboard.csv", index=False)
    per_study = lb.seed_summary(results, KINDS, by_column=False)
    per_study.to_csv(folder / "leaderboard_studies.csv", index=False)
    ranks = [lb.leaderboard_ranks(columns, m).assign(metric=m) for m in ("augrc", "aurc")]
    pd.concat(ranks).to_csv(folder / "leaderboard_ranks.csv", index=False)
    maps = [lb.leaderboard_significance(columns, m).assign(metric=m) for m in ("augrc", "aurc")]
    pd.concat(maps).to_csv(folder / "leaderboard_significance.csv", index=False)
    deltas = lb.paired_deltas(columns, ("augrc", "aurc"), reference=None, estimates=summary)
    deltas.to_csv(folder / "paired_deltas.csv", index=False)
    return results


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from fdbench.report import write_report

    folder = tmp_path_factory.mktemp("leaderboard")
    write_run_folder(folder, build_inputs())
    _leaderboard_files(folder)
    path = write_report(folder, processes=1)
    return folder, path, json.loads((folder / "report_manifest.json").read_text())


def test_leaderboard_is_the_first_section_with_tables_and_forest_plot(report):
    _, path, manifest = report
    # what was run, then the leaderboard before any per-study detail
    assert manifest["sections"][:2] == ["run", "leaderboard"]
    assert manifest["tables"][:4] == [
        "headline_cifar10",
        "leaderboard_augrc_cifar10",
        "leaderboard_ranks_cifar10",
        "leaderboard_aurc_cifar10",
    ]
    assert "paired_delta_forest_cifar10" in manifest["figures"]
    assert "leaderboard_significance_cifar10" in manifest["figures"]
    page = path.read_text()
    assert page.index('<section id="leaderboard">') < page.index('<section id="metrics">')
    assert page.index("Leaderboard by AUGRC") < page.index('<section id="metrics">')
    assert "each study column weighs the same" in page
    # the headline comes first and open; the full leaderboard is one collapsed block
    assert page.index("Headline by AUGRC") < page.index("<details><summary>Full leaderboard")
    assert page.index("<details><summary>Full leaderboard") < page.index("Leaderboard by AUGRC")


def test_leaderboard_frame_lists_every_scoring_method_best_first(report):
    folder, _, _ = report
    tables = read_leaderboard(folder)
    frame = leaderboard_frame(tables["summary"], tables["ranks"], "cifar10")
    assert set(frame.index) == {"MSR", "MLS", "PE", "DOCTOR", "DG-MSR", "DG-MLS", "DG-PE", "DG-Res"}
    ranks = frame["mean rank, all studies"].to_numpy()
    assert np.all(np.diff(ranks) >= 0)
    assert list(frame.columns[:3]) == ["iid", "corruption", "new-class semantic"]
    summary = tables["summary"].set_index(["study", "scoring_method", "metric"])
    mean, std = summary.loc[("iid", "DG-Res", "augrc"), ["mean", "std"]]
    assert frame.loc["DG-Res", "iid"] == f"{1000 * mean:.2f} ± {1000 * std:.2f}"


def test_leaderboard_renders_in_chromium(report, tmp_path):
    from .test_browser import _render

    _, path, manifest = report
    dom, console = _render(path, tmp_path / "profile")
    assert console == []
    assert json.loads(dom.body["data-broken"]) == []
    assert "leaderboard" in dom.ids
    for name in manifest["tables"]:
        assert f"table-{name}" in dom.ids
    for name in manifest["figures"]:
        assert f"fig-{name}" in dom.ids


def test_studies_follow_the_leaderboard_one_block_per_study(report):
    folder, path, manifest = report
    assert manifest["sections"][:3] == ["run", "leaderboard", "studies"]
    # leaderboard_studies.csv is read (the results of this folder hold other studies), its
    # studies in the leaderboard's order: iid, corruption, new-class semantic
    blocks = [a for a in manifest["subsections"] if a.startswith("studies_")]
    assert blocks == [
        "studies_iid",
        "studies_corruption-1",
        "studies_corruption-2",
        "studies_new_class-semantic",
    ]
    page = path.read_text()
    assert (
        page.index('<section id="leaderboard">')
        < page.index('<section id="studies">')
        < page.index('<section id="metrics">')
    )
    # DG-Res on iid, mean ± std over the seeds, by hand from the synthetic runs
    values = [M.augrc(*_iid_dg_res(seed)) for seed in SEEDS]
    table = pd.read_csv(folder / "tables" / "study_cifar10_iid.csv", index_col=0)
    assert list(table.columns) == ["AUGRC ×1000", "AURC ×1000"]
    assert table.loc["DG-Res", "AUGRC ×1000"] == pytest.approx(1000 * np.mean(values))
    assert f"± {1000 * np.std(values, ddof=1):.2f}" in page
    # best first by AUGRC, the best named in the block's summary line
    assert np.all(np.diff(table["AUGRC ×1000"].to_numpy()) >= 0)
    assert f"iid — best by AUGRC ×1000: {table.index[0]}</summary>" in page
    # the curves of iid (the only study the curve figures share with these) are linked
    iid = page[page.index('id="studies_iid"') : page.index('id="studies_corruption-1"')]
    assert 'href="#curves_cifar10-ce"' in iid and 'href="#curves_cifar10-dg"' in iid
    corruption = page[page.index('id="studies_corruption-1"') :]
    assert "Risk-coverage curves of this study" not in corruption.split("</details>")[0]


def _iid_dg_res(seed: int):
    residuals, confidences = _study_data(1, 0, seed)
    return residuals, confidences["DG-Res"]
