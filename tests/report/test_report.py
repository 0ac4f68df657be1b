"""The HTML report: every section, table and image present, self-contained, and degrading."""

from __future__ import annotations

import base64
import io
import json
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from fdbench.report import ReportTable, write_report
from fdbench.report.html import heat_colour
from fdbench.report.ranking_filter import RANKING_SCRIPT


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[str] = []
        self.images: list[dict[str, str]] = []
        self.sections: list[str] = []
        self.best: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "table":
            self.tables.append(attrs.get("data-report-table", ""))
        elif tag == "img":
            self.images.append(attrs)
        elif tag == "section":
            self.sections.append(attrs["id"])


def _parse(path) -> _Collector:
    parser = _Collector()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_full_report_has_every_section_table_and_image(full_report):
    folder, path, manifest = full_report
    page = _parse(path)
    assert page.sections == [
        "run",
        "studies",
        "metrics",
        "rankings",
        "friedman",
        "curves",
        "calibration",
        "gallery",
        "precision",
        "sgr",
        "operating-points",
    ]
    assert page.tables == manifest["tables"]
    assert [img["data-report-figure"] for img in page.images] == manifest["figures"]
    runs = ("cifar10-ce", "cifar10-dg")
    per_run = [
        # one block per study with a leaderboard column (per-type corruption left out)
        "study_cifar10_iid",
        "study_cifar10_new_class-svhn",
        *(f"{m}_{r}" for r in runs for m in ("accuracy", "aurc", "augrc", "auroc_f", "ece")),
        *(f"rank_{m}_{r}" for r in runs for m in ("aurc", "augrc")),
        "kendall_tau_aurc_augrc",
        # Friedman over the blocks iid and new_class/svhn (per-type corruption left out)
        "friedman_ranks_augrc",
        "friedman_ranks_aurc",
        *(f"ece_after_scaling_{r}" for r in runs),
        "float_precision",
        *(f"sgr_{r}" for r in runs),
        *(f"operating_points_{r}" for r in runs),
    ]
    assert manifest["tables"] == per_run
    # one figure per run: rank distribution and significance per metric, curves, reliability,
    # SGR; every dataset × method is drawn apart, never pooled
    figures = [f for f in manifest["figures"] if not f.startswith("gallery")]
    assert figures == [
        *(
            f"{kind}_{m}_{r}"
            for r in runs
            for m in ("aurc", "augrc")
            for kind in ("rank_distribution", "significance")
        ),
        "critical_difference_augrc",
        "critical_difference_aurc",
        *(f"curves_{r}" for r in runs),
        *(f"reliability_{r}" for r in runs),
        *(f"sgr_risk_excess_{r}" for r in runs),
    ]
    assert sum(f.startswith("gallery") for f in manifest["figures"]) == 3 * 2 * 6
    for img in page.images:
        assert img["src"].startswith("data:image/png;base64,")
        image = Image.open(io.BytesIO(base64.b64decode(img["src"].split(",", 1)[1])))
        image.verify()
    text = path.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    # the one script allowed: the inline sort and filter of the full ranking tables
    assert text.count("<script") == text.count(RANKING_SCRIPT) <= 1
    for name in manifest["tables"]:
        assert (folder / "tables" / f"{name}.csv").exists()
        assert (folder / "tables" / f"{name}.tex").exists()
    for name in manifest["figures"]:
        if not name.startswith("gallery"):
            assert (folder / "figures" / f"{name}.png").exists()
    for name in ("significance_aurc", "rank_then_aggregate_augrc", "sgr_thresholds"):
        assert (folder / "tables" / f"{name}.csv").exists()


def test_calibration_is_the_mean_over_seeds_and_matches_the_engine(full_report):
    from fdbench.analysis import csf_calibration

    from .conftest import SEEDS, STUDIES, _study_data

    folder, _, _ = full_report
    for m, method in enumerate(("ce", "dg")):
        path = folder / "tables" / f"ece_after_scaling_cifar10-{method}.csv"
        table = pd.read_csv(path, index_col=0)
        per_seed = []
        for seed in SEEDS:
            val_r, val_c = _study_data(m, 0, 10 + seed, n=2000)
            data = [_study_data(m, s, seed) for s in range(len(STUDIES))]
            ece, _ = csf_calibration(
                val_r,
                val_c,
                dict(zip(STUDIES, (d[0] for d in data), strict=True)),
                dict(zip(STUDIES, (d[1] for d in data), strict=True)),
                n_bins=10,
            )
            assert not ece["platt_collapsed"].any()
            per_seed.append(ece.pivot(index="csf", columns="study", values="value"))
        expected = (per_seed[0] + per_seed[1]) / 2
        pd.testing.assert_frame_equal(
            table.sort_index()[list(STUDIES)],
            expected.sort_index()[list(STUDIES)],
            check_names=False,
            rtol=1e-12,
        )
        runs = pd.read_csv(folder / "tables" / f"ece_after_scaling_runs_cifar10-{method}.csv")
        assert sorted(runs["seed"].unique()) == list(SEEDS)
        assert set(runs.loc[runs["csf"] == "MSR", "treatment"]) == {"none"}


def test_a_collapsed_platt_fit_is_marked_and_never_best(tmp_path, report_inputs):
    # the lowest ECE of the i.i.d. column comes from a collapsed fit: shown with the mark, not
    # bold, and the best mark goes to the lowest ECE among the others
    reliability = report_inputs["reliability"]
    part = reliability[(reliability["method"] == "ce")].copy()
    iid_mls = (part["csf"] == "MLS") & (part["study"] == "iid")
    part.loc[iid_mls, "platt_collapsed"] = True
    part.loc[iid_mls, "confidence"] = part.loc[iid_mls, "accuracy"]  # ECE 0 on iid
    write_report(tmp_path / "r", reliability=part)
    table = pd.read_csv(tmp_path / "r" / "tables" / "ece_after_scaling_cifar10-ce.csv", index_col=0)
    assert table.loc["MLS", "iid"] == "0.0000*"
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert '<td class="best">0.0000*' not in page and ">0.0000*</td>" in page
    tex = (tmp_path / "r" / "tables" / "ece_after_scaling_cifar10-ce.tex").read_text()
    assert "\\textbf{0.0000" not in tex
    others = pd.to_numeric(table["iid"], errors="coerce").drop("MLS")
    assert f"\\textbf{{{others.min():.4f}}}" in tex


def test_sgr_summary_counts_the_runs_thresholds(full_report, report_inputs):
    folder, _, _ = full_report
    sgr = report_inputs["sgr"]
    for method in ("ce", "dg"):
        table = pd.read_csv(folder / "tables" / f"sgr_cifar10-{method}.csv", index_col=0)
        rows = sgr[(sgr.method == method) & (sgr.seed == 0)]
        for target in (0.05, 0.1, 0.2):
            for study in table.index:
                part = rows[(rows.study == study) & (rows.target_risk == target)]
                fitted = part[part.feasible]
                head = f"r*={target:g}"
                assert table.loc[study, f"{head}: CSFs with a threshold"] == len(fitted)
                if len(fitted):
                    share = (fitted.excess > 0).mean()
                    assert table.loc[study, f"{head}: share exceeding"] == pytest.approx(share)
                    assert table.loc[study, f"{head}: median excess"] == pytest.approx(
                        fitted.excess.median()
                    )


def test_curves_use_each_runs_own_csfs(tmp_path, report_inputs):
    write_report(tmp_path, curves=report_inputs["curves"], results=report_inputs["results"])
    manifest = json.loads((tmp_path / "report_manifest.json").read_text())
    assert [f for f in manifest["figures"] if f.startswith("curves")] == [
        "curves_cifar10-ce",
        "curves_cifar10-dg",
    ]
    write_report(tmp_path / "b", curves=report_inputs["curves"], curve_csfs=["DG-Res"])
    manifest = json.loads((tmp_path / "b" / "report_manifest.json").read_text())
    assert manifest["figures"] == ["curves_cifar10-dg"]


def test_kendall_table_has_one_row_per_run(full_report, report_inputs):
    from fdbench.analysis import ranking_agreement

    folder, _, _ = full_report
    table = pd.read_csv(folder / "tables" / "kendall_tau_aurc_augrc.csv", index_col=0)
    assert list(table.index) == ["cifar10/ce", "cifar10/dg"]
    direct = ranking_agreement(report_inputs["results"], "aurc", "augrc")
    for row in direct.itertuples():
        assert table.loc[f"cifar10/{row.method}", row.study] == pytest.approx(row.tau)


def test_bad_inputs_name_the_input(tmp_path, report_inputs):
    with pytest.raises(ValueError, match="results lacks column"):
        write_report(tmp_path, report_inputs["results"].drop(columns="metric"))
    with pytest.raises(ValueError, match="sgr lacks column"):
        write_report(tmp_path, sgr=report_inputs["sgr"].drop(columns="excess"))
    with pytest.raises(TypeError, match="gallery"):
        write_report(tmp_path, gallery=np.zeros(3))


def test_metric_table_values_and_best_mark(full_report, report_inputs):
    folder, _, _ = full_report
    table = pd.read_csv(folder / "tables" / "aurc_cifar10-ce.csv", index_col=0)
    results = report_inputs["results"]
    aurc = results[(results.metric == "aurc") & (results.method == "ce")]
    expected = aurc.groupby(["csf", "study"]).value.mean().unstack() * 1000
    pd.testing.assert_frame_equal(
        table.sort_index().sort_index(axis=1),
        expected.sort_index().sort_index(axis=1),
        check_names=False,
    )
    report_table = ReportTable("t", "t", table, 2, higher_is_better=False)
    best = report_table.best_cells()
    for j, column in enumerate(table.columns):
        assert (int(np.argmin(table[column].to_numpy())), j) in best


def test_heat_normalised_per_column():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [100.0, 50.0, 0.0]}, index=["x", "y", "z"])
    heat = ReportTable("t", "t", frame, 2, higher_is_better=True).heat()
    np.testing.assert_allclose(heat, [[0, 1], [0.5, 0.5], [1, 0]])
    lower = ReportTable("t", "t", frame, 2, higher_is_better=False)
    np.testing.assert_allclose(lower.heat(), 1 - heat)
    assert lower.best_cells() == {(0, 0), (2, 1)}
    # cividis, lightened half-way to white: light yellow (best) to greyish blue (worst)
    assert heat_colour(1.0) == "#fef39b" and heat_colour(0.0) == "#8091a6"


def test_values_shown_alike_share_colour_and_best_mark():
    frame = pd.DataFrame({"a": [0.64441, 0.64438, 0.5], "b": [0.64441, 0.64438, 0.64436]})
    table = ReportTable("t", "t", frame, 4, higher_is_better=True)
    heat = table.heat()
    assert heat[0, 0] == heat[1, 0] == 1.0 and heat[2, 0] == 0.0
    # column b prints 0.6444 three times: no colour and no best mark
    assert np.isnan(heat[:, 1]).all()
    assert table.best_cells() == {(0, 0), (1, 0)}


def test_report_degrades_without_inputs(tmp_path, report_inputs):
    only_results = write_report(tmp_path / "a", report_inputs["results"])
    page = _parse(only_results)
    # without bootstrap resamples the CSFs are ranked by their values; results alone also
    # give the Friedman test with its diagrams and the per-study blocks
    assert page.sections == ["run", "studies", "metrics", "rankings", "friedman"]
    assert "rank_aurc_cifar10-ce" in page.tables
    assert [i["data-report-figure"] for i in page.images] == [
        "critical_difference_augrc",
        "critical_difference_aurc",
    ]
    empty = write_report(tmp_path / "b")
    page = _parse(empty)
    assert page.sections == ["run"] and page.tables == []
    assert "No report inputs were found" in empty.read_text()
    reliability_only = write_report(tmp_path / "c", reliability=report_inputs["reliability"])
    page = _parse(reliability_only)
    assert page.sections == ["run", "calibration"]
    manifest = json.loads((tmp_path / "c" / "report_manifest.json").read_text())
    assert manifest["tables"] == ["ece_after_scaling_cifar10-ce", "ece_after_scaling_cifar10-dg"]
    bare = report_inputs["reliability"].drop(columns=["dataset", "method", "seed"])
    write_report(tmp_path / "d", reliability=bare[bare["study"] == "iid"])
    manifest = json.loads((tmp_path / "d" / "report_manifest.json").read_text())
    assert manifest["tables"] == ["ece_after_scaling"]
    with pytest.raises(NotADirectoryError):
        write_report(tmp_path / "a" / "report.html")


def test_figures_drawn_in_processes_give_the_same_page(tmp_path, full_report):
    folder, _, _ = full_report
    inputs = _inputs_of(folder)
    pages = [
        write_report(tmp_path / "run", processes=n, read_files=False, **inputs).read_bytes()
        for n in (1, 2)
    ]
    assert pages[0] == pages[1]
    assert b"fdbench-figure" not in pages[0] and b"data:image/png;base64," in pages[0]
    with pytest.raises(ValueError, match="processes"):
        write_report(tmp_path / "zero", processes=0)


def _inputs_of(folder):
    from dataclasses import fields

    from fdbench.report import read_run_inputs

    inputs = read_run_inputs(folder)
    return {f.name: getattr(inputs, f.name) for f in fields(inputs)}


def test_operating_points_section_shows_each_certified_row(full_report, report_inputs):
    folder, _, _ = full_report
    shown = pd.read_csv(folder / "tables" / "operating_points_cifar10-ce.csv", index_col=0)
    points = report_inputs["operating_points"]
    rows = points[(points["method"] == "ce") & (points["seed"] == 0)]
    studies = list(dict.fromkeys(rows["study"]))
    assert list(shown.columns) == ["threshold", "certified bound", *studies]
    # one row per CSF, procedure and group, one cell per study
    assert len(shown) * len(studies) == len(rows)
    first = rows.iloc[0]
    label = shown.index[0]
    assert label.startswith(f"{first['csf']} · ")
    assert shown["threshold"].iloc[0] == pytest.approx(first["threshold"], abs=5e-4)
    for row in rows[rows["csf"] == first["csf"]].itertuples():
        if row.procedure != first["procedure"] or isinstance(row.group, str):
            continue
        cell = shown.loc[label, row.study]
        if not row.feasible:
            assert cell == "–"
        else:
            assert cell.startswith(f"{row.coverage:.2f} ")
            assert ("✓" in cell) == bool(row.held) and ("✗" in cell) == (not row.held)
    assert (folder / "tables" / "operating_points.csv").exists()
