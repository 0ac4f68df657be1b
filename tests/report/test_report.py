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
        "metrics",
        "rankings",
        "curves",
        "calibration",
        "gallery",
        "precision",
        "sgr",
    ]
    assert page.tables == manifest["tables"]
    assert [img["data-report-figure"] for img in page.images] == manifest["figures"]
    # 5 metric tables, 2 ranking tables, Kendall τ, ECE after scaling, precision, SGR
    assert len(page.tables) == 11
    # rank distribution + significance per metric, 3 curve plots, 3 reliability, 1 SGR, tiles
    assert sum(not f.startswith("gallery") for f in manifest["figures"]) == 2 * 2 + 3 + 3 + 1
    assert sum(f.startswith("gallery") for f in manifest["figures"]) == 3 * 2 * 6
    for img in page.images:
        assert img["src"].startswith("data:image/png;base64,")
        image = Image.open(io.BytesIO(base64.b64decode(img["src"].split(",", 1)[1])))
        image.verify()
    text = path.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text and "<script" not in text
    for name in manifest["tables"]:
        assert (folder / "tables" / f"{name}.csv").exists()
        assert (folder / "tables" / f"{name}.tex").exists()
    for name in manifest["figures"]:
        if not name.startswith("gallery"):
            assert (folder / "figures" / f"{name}.png").exists()
    assert (folder / "tables" / "significance_aurc.csv").exists()


def test_metric_table_values_and_best_mark(full_report, report_inputs):
    folder, _, _ = full_report
    table = pd.read_csv(folder / "tables" / "aurc_cifar10-ce.csv", index_col=0)
    results = report_inputs["results"]
    aurc = results[results.metric == "aurc"]
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
    assert heat_colour(1.0) == "#63be7b" and heat_colour(0.0) == "#f8696b"


def test_report_degrades_without_inputs(tmp_path, report_inputs):
    only_results = write_report(tmp_path / "a", report_inputs["results"])
    page = _parse(only_results)
    assert page.sections == ["metrics"] and not page.images
    empty = write_report(tmp_path / "b")
    page = _parse(empty)
    assert page.sections == [] and page.tables == []
    assert "No report inputs were found" in empty.read_text()
    reliability_only = write_report(tmp_path / "c", reliability=report_inputs["reliability"])
    page = _parse(reliability_only)
    assert page.sections == ["calibration"]
    manifest = json.loads((tmp_path / "c" / "report_manifest.json").read_text())
    assert manifest["tables"] == ["ece_after_scaling"]
    with pytest.raises(NotADirectoryError):
        write_report(tmp_path / "a" / "report.html")
