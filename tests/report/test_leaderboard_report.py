"""The leaderboard is the report's first section, and renders in headless Chromium."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.analysis import leaderboard as lb
from fdbench.analysis.paired import PairedSamples, paired_bootstrap
from fdbench.report.leaderboard import leaderboard_frame, read_leaderboard

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
    assert manifest["tables"][:3] == [
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


def test_leaderboard_frame_lists_every_scoring_method_best_first(report):
    folder, _, _ = report
    tables = read_leaderboard(folder)
    frame = leaderboard_frame(tables["summary"], tables["ranks"], "cifar10")
    assert set(frame.index) == {"MSR", "MLS", "PE", "DOCTOR", "DG-MSR", "DG-MLS", "DG-PE",
                                "DG-Res"}
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
