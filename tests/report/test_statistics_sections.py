"""Report sections of issue 23: Friedman–Nemenyi, severity curves, accepted-sample calibration."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M
from fdbench.analysis import (
    StudySamples,
    accepted_calibration_table,
    bootstrap_analysis,
    friedman_nemenyi,
)
from fdbench.report import write_report
from fdbench.report.sections.friedman import friedman_blocks

METHODS = {"ce": ("MSR", "MLS", "PE"), "dg": ("MSR", "DG-Res")}
STUDIES = ("iid", "corruption/1", "corruption/2", "corruption/3", "new_class/svhn", "subclass")


def _data(m: int, s: int, seed: int, n: int = 200):
    rng = np.random.default_rng([m, s, seed])
    wrong = (rng.uniform(size=n) < 0.1 + 0.08 * s).astype(np.float64)
    conf = {
        csf: rng.normal(size=n) - (0.5 + 0.3 * k + 0.2 * m) * wrong
        for k, csf in enumerate(METHODS[list(METHODS)[m]])
    }
    if "DG-Res" in conf:
        conf["DG-Res"] = 1 / (1 + np.exp(-conf["DG-Res"]))
    if "MSR" in conf:
        conf["MSR"] = 1 / (1 + np.exp(-conf["MSR"]))
    return wrong, conf


@pytest.fixture(scope="module")
def inputs():
    rows, tasks, accepted = [], [], []
    for m, method in enumerate(METHODS):
        for seed in (0, 1):
            info = {"dataset": "d", "method": method, "seed": seed}
            val_wrong, val_conf = _data(m, 9, seed, 500)
            by_study = {}
            for s, study in enumerate(STUDIES):
                wrong, conf = _data(m, s, seed)
                by_study[study] = wrong, conf
                tasks.append(StudySamples("d", method, seed, study, wrong, conf))
                for csf, c in conf.items():
                    for metric in ("aurc", "augrc"):
                        value = getattr(M, metric)(wrong, c)
                        rows.append(
                            {
                                **info,
                                "csf": csf,
                                "study": study,
                                "metric": metric,
                                "value": value,
                                "protocol": "failure_detection",
                            }
                        )
            accepted.append(
                accepted_calibration_table(
                    val_wrong,
                    val_conf,
                    {s: by_study[s][0] for s in STUDIES},
                    {s: by_study[s][1] for s in STUDIES},
                ).assign(**info)
            )
    results = pd.DataFrame(rows)
    pooled = results[results.study.str.match(r"^corruption/\d+$")]
    cor = (
        pooled.groupby(["dataset", "method", "seed", "csf", "metric", "protocol"], as_index=False)[
            "value"
        ]
        .mean()
        .assign(study="cor")
    )
    results = pd.concat([results, cor], ignore_index=True)
    boot = bootstrap_analysis(tasks, n_resamples=20, seed=0)
    severity = boot[boot.study.str.startswith("corruption/")]
    return {
        "results": results,
        "severity_bootstrap": severity,
        "accepted_calibration": pd.concat(accepted, ignore_index=True),
    }


@pytest.fixture(scope="module")
def page(tmp_path_factory, inputs):
    folder = tmp_path_factory.mktemp("run")
    path = write_report(folder, processes=1, read_files=False, **inputs)
    return (
        folder,
        path.read_text(encoding="utf-8"),
        json.loads((folder / "report_manifest.json").read_text()),
    )


def test_sections_tables_and_figures(page):
    folder, text, manifest = page
    assert manifest["sections"] == [
        "run",
        "studies",
        "metrics",
        "rankings",
        "friedman",
        "severity",
        "accepted",
    ]
    for name in (
        "friedman_ranks_augrc",
        "friedman_ranks_aurc",
        "severity_augrc_d_corruption",
        "severity_aurc_d_corruption",
        "accepted_accuracy_80",
        "accepted_ece_80",
    ):
        assert name in manifest["tables"]
        assert (folder / "tables" / f"{name}.csv").exists()
    for name in (
        "critical_difference_augrc",
        "critical_difference_aurc",
        "severity_augrc_d_corruption",
    ):
        assert name in manifest["figures"]
        assert (folder / "figures" / f"{name}.png").exists()
    for name in ("nemenyi_p_augrc", "friedman_values_augrc", "severity_augrc"):
        assert (folder / "tables" / f"{name}.csv").exists()
    assert "χ²_F" in text and "Nemenyi CD" in text


def test_friedman_blocks_count_corruption_once(inputs, page):
    folder, _, _ = page
    blocks = friedman_blocks(inputs["results"])
    assert sorted(blocks.study.unique()) == ["cor", "iid", "new_class/svhn", "subclass"]
    ranks = pd.read_csv(folder / "tables" / "friedman_ranks_augrc.csv", index_col=0)
    expected = friedman_nemenyi(blocks, "augrc").average_ranks
    assert list(ranks.index) == list(expected.index)
    np.testing.assert_allclose(ranks["average rank"], expected.to_numpy())
    assert set(ranks.index) == {"MSR", "MLS", "PE", "dg-MSR", "DG-Res"}


def test_severity_table_shows_seed_mean_and_band(inputs, page):
    folder, _, _ = page
    table = pd.read_csv(folder / "tables" / "severity_augrc_d_corruption.csv", index_col=0)
    assert list(table.columns) == ["corruption 1", "corruption 2", "corruption 3"]
    rows = inputs["results"]
    mean = rows[
        (rows.study == "corruption/2")
        & (rows.method == "dg")
        & (rows.csf == "DG-Res")
        & (rows.metric == "augrc")
    ].value.mean()
    cell = table.loc["DG-Res", "corruption 2"]
    assert cell.startswith(f"{1000 * mean:.2f} [")
    low, high = (float(v) for v in cell.split("[")[1].rstrip("]").split(","))
    assert low < 1000 * mean < high


def test_accepted_tables_are_seed_means(inputs, page):
    folder, _, _ = page
    table = pd.read_csv(folder / "tables" / "accepted_accuracy_80.csv", index_col=0)
    acc = inputs["accepted_calibration"]
    sel = acc[(acc.method == "ce") & (acc.csf == "PE") & (acc.study == "iid")]
    assert table.loc["PE", "iid"] == pytest.approx(sel.accuracy.mean(), rel=1e-12)
    ece = pd.read_csv(folder / "tables" / "accepted_ece_80.csv", index_col=0)
    assert ece.loc["DG-Res", "subclass"] == pytest.approx(
        acc[(acc.method == "dg") & (acc.csf == "DG-Res") & (acc.study == "subclass")].ece.mean(),
        rel=1e-12,
    )
    assert list(acc.treatment.unique()) == ["none", "platt"]


def test_sections_render_in_chromium(page, tmp_path):
    from .test_browser import _render

    folder, _, manifest = page
    dom, console = _render(folder / "report.html", tmp_path / "profile")
    assert console == []
    assert dom.body.get("data-probed") == "yes"
    assert json.loads(dom.body["data-broken"]) == []
    for name in manifest["tables"]:
        assert f"table-{name}" in dom.ids
    for name in manifest["figures"]:
        assert f"fig-{name}" in dom.ids
    for section in manifest["sections"]:
        assert section in dom.ids
