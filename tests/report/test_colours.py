"""Report colours and accuracy: heat only where the shown values differ, accuracy per classifier."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from fdbench.evaluation.confidences import evaluate_confidences
from fdbench.report import ReportTable, classifier_accuracy
from fdbench.report.html import heat_class, page_html, table_html
from fdbench.report.tables import CLASSIFIERS, NEW_CLASS_ACCURACY

from .conftest import SEEDS, _study_data

NETWORK = CLASSIFIERS["logits"]
MC_DROPOUT = CLASSIFIERS["mcd"]


class _Table(HTMLParser):
    """The cells of one ``<table>``: per body row, (text, background, other classes), the
    background (``background:#rrggbb``) read from the page's stylesheet rule of the cell's
    classes, "" for none."""

    def __init__(self, name: str, rules: dict[str, str]) -> None:
        super().__init__()
        self.name, self.rules, self.inside, self.cell = name, rules, False, None
        self.head: list[str] = []
        self.rows: list[list[tuple[str, str, str]]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.inside = attrs.get("data-report-table") == self.name
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            assert "style" not in attrs, "heat colours are classes, not inline styles"
            classes = (attrs.get("class") or "").split()
            styled = [self.rules[c] for c in classes if c in self.rules]
            assert len(styled) <= 1, classes
            other = " ".join(c for c in classes if c not in self.rules)
            self.cell = [tag, "", "".join(styled), other]

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1] += data

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False
        elif self.inside and tag in ("td", "th") and self.cell is not None:
            kind, text, style, css = self.cell
            if kind == "th":
                self.head.append(text)
            elif css != "label":
                self.rows[-1].append((text, style, css))
            self.cell = None


def _rules(page: str) -> dict[str, str]:
    """The page's one-class background rules, class -> ``background:#rrggbb``."""
    (style,) = re.findall(r"<style>(.*?)</style>", page, flags=re.S)
    return dict(re.findall(r"\.([\w-]+)\{(background:#[0-9a-f]{6})\}", style))


def _page(table: ReportTable) -> str:
    return page_html("t", [("s", "s", table_html(table))], "")


def _table(page: str, name: str) -> _Table:
    parser = _Table(name, _rules(page))
    parser.feed(page)
    parser.rows = [r for r in parser.rows if r]
    assert parser.rows, f"table {name} not on the page"
    return parser


def _column(table: _Table, j: int) -> list[tuple[str, str, str]]:
    return [row[j] for row in table.rows]


def test_a_column_of_equal_values_gets_no_colours():
    # accuracy shown per CSF, as before: one value shared by all CSFs of the classifier
    frame = pd.DataFrame(
        {"accuracy": [0.9125, 0.9125, 0.9125], "auroc": [0.61, 0.75, 0.68]},
        index=pd.Index(["MSR", "MLS", "PE"], name="CSF"),
    )
    table = ReportTable("t", "t", frame, 4, higher_is_better=True)
    assert np.isnan(table.heat()[:, 0]).all()
    np.testing.assert_allclose(table.heat()[:, 1], [0.0, 1.0, 0.5])
    assert table.best_cells() == {(1, 1)}
    html = _table(_page(table), "t")
    assert all(style == "" and css == "" for _, style, css in _column(html, 0))
    assert [style for _, style, _ in _column(html, 1)] == [
        "background:#8091a6",
        "background:#fef39b",
        "background:#bebdbc",
    ]


def test_the_page_has_one_rule_per_heat_colour_used():
    frame = pd.DataFrame({"a": [0.1, 0.9, 0.5, 0.9], "b": [0.2, 0.2, 0.2, 0.2]})
    table = ReportTable("t", "t", frame, 4, higher_is_better=True)
    page = _page(table)
    used = {heat_class(g) for g in table.heat()[:, 0]}
    assert len(used) == 3
    assert _rules(page) == {c: f"background:#{c[1:]}" for c in used}
    assert f'class="{heat_class(1.0)} best"' in page and "style=" not in page.split("</head>")[1]
    # a page without heat-mapped cells gets no rule
    plain = ReportTable("p", "p", frame[["b"]], 4, higher_is_better=True)
    assert _rules(_page(plain)) == {}


def test_values_that_differ_only_beyond_the_printed_precision_get_no_colour():
    frame = pd.DataFrame(
        {
            # 4 decimals: 0.1234 three times (0.12336 rounds up)
            "alike": [0.12341, 0.12344, 0.12336],
            # 0.1234 / 0.1235 / 0.1234: coloured, both 0.1234 equally worst
            "apart": [0.12341, 0.12346, 0.12344],
            # one number and two gaps: nothing to compare
            "single": [np.nan, 0.5, np.nan],
        }
    )
    table = ReportTable("t", "t", frame, 4, higher_is_better=True)
    heat = table.heat()
    assert np.isnan(heat[:, 0]).all() and np.isnan(heat[:, 2]).all()
    np.testing.assert_array_equal(heat[:, 1], [0.0, 1.0, 0.0])
    assert table.best_cells() == {(1, 1)}
    assert [table.varies(j) for j in range(3)] == [False, True, False]
    html = _table(_page(table), "t")
    assert all(style == "" for _, style, _ in _column(html, 0) + _column(html, 2))
    assert all(style.startswith("background:") for _, style, _ in _column(html, 1))
    # AURC ×1000 with 2 decimals: 12.341 and 12.344 both print 12.34
    aurc = ReportTable("a", "a", pd.DataFrame({"s": [12.341, 12.344]}), 2, False)
    assert np.isnan(aurc.heat()).all() and aurc.best_cells() == set()
    aurc = ReportTable("a", "a", pd.DataFrame({"s": [12.341, 12.346]}), 2, False)
    np.testing.assert_array_equal(aurc.heat()[:, 0], [1.0, 0.0])


def _pipeline_results(protocol: str = "failure_detection") -> pd.DataFrame:
    """Accuracy rows of a hand-made run: 5 i.i.d. samples and 2 new-class samples, judged by
    the network (4 of 5 i.i.d. correct) and by the MC-dropout classifier (3 of 5)."""
    labels = {"iid": np.array([0, 1, 2, 0, 1]), "new_class/x": np.array([-1, -1])}
    network = {"iid": np.array([0, 1, 2, 0, 2]), "new_class/x": np.array([0, 1])}
    mc = {"iid": np.array([0, 1, 0, 1, 1]), "new_class/x": np.array([2, 2])}

    def confidences(names):
        return {s: {c: np.linspace(0, 1, y.size) for c in names} for s, y in labels.items()}

    info = {"dataset": "toy", "method": "ce", "seed": 0}
    parts = [
        evaluate_confidences(
            labels, network, confidences(("MSR", "PE")), run_info=info, protocol=protocol
        ),
        evaluate_confidences(
            labels, mc, confidences(("MCD-MSR", "MCD-EE")), run_info=info, protocol=protocol
        ),
    ]
    results = pd.concat(parts, ignore_index=True).assign(protocol=protocol)
    return results[results["metric"] == "accuracy"]


def test_accuracy_once_per_classifier_with_the_new_class_share():
    table = classifier_accuracy(_pipeline_results())
    assert list(table.index) == [NETWORK, MC_DROPOUT]
    assert table.index.name == "classifier"
    new_class = f"new_class/x ({NEW_CLASS_ACCURACY})"
    assert list(table.columns) == ["iid", new_class]
    assert NEW_CLASS_ACCURACY == "share of retained inliers"
    # failure detection keeps the 4 (network) / 3 (MC dropout) correct i.i.d. samples and the
    # 2 new-class failures: 4 / 6 and 3 / 5
    np.testing.assert_allclose(table.to_numpy(), [[4 / 5, 4 / 6], [3 / 5, 3 / 5]], rtol=1e-15)
    # without the filter (unknown detection) it is an ordinary accuracy: 4 / 7 and 3 / 7
    plain = classifier_accuracy(_pipeline_results("unknown_detection"))
    assert list(plain.columns) == ["iid", "new_class/x"]
    np.testing.assert_allclose(plain.to_numpy(), [[4 / 5, 4 / 7], [3 / 5, 3 / 7]], rtol=1e-15)
    # a table without a protocol column was scored under the default protocol
    default = classifier_accuracy(_pipeline_results().drop(columns="protocol"))
    assert list(default.columns) == ["iid", new_class]


def test_csfs_of_one_classifier_with_different_accuracy_get_a_row_each():
    rows = pd.DataFrame(
        {
            "csf": ["MSR", "MLS", "PE", "DOCTOR"],
            "study": "iid",
            "metric": "accuracy",
            # PE comes from another training configuration; DOCTOR differs beyond 4 decimals
            "value": [0.9, 0.9, 0.85, 0.9 + 1e-7],
        }
    )
    table = classifier_accuracy(rows)
    assert list(table.index) == [f"{NETWORK}: MSR, MLS, DOCTOR", f"{NETWORK}: PE"]
    np.testing.assert_array_equal(table["iid"], [0.9, 0.85])
    ensemble = classifier_accuracy(rows.assign(method="ensemble(ce)", value=0.93))
    assert list(ensemble.index) == [CLASSIFIERS["ensemble"]]


def test_classifier_accuracy_rejects_bad_input():
    rows = pd.DataFrame({"csf": ["MSR"], "study": ["iid"], "metric": ["aurc"], "value": [0.1]})
    with pytest.raises(ValueError, match="accuracy rows only"):
        classifier_accuracy(rows)
    with pytest.raises(ValueError, match="lacks column"):
        classifier_accuracy(rows.drop(columns="value"))
    with pytest.raises(ValueError, match="digits"):
        classifier_accuracy(rows.assign(metric="accuracy"), digits=-1)


def test_report_shows_accuracy_once_per_classifier_without_colours(full_report):
    folder, path, _ = full_report
    page = path.read_text(encoding="utf-8")
    new_class = f"new_class/svhn ({NEW_CLASS_ACCURACY})"
    for m, method in enumerate(("ce", "dg")):
        name = f"accuracy_cifar10-{method}"
        table = pd.read_csv(folder / "tables" / f"{name}.csv", index_col=0)
        assert list(table.index) == [NETWORK]
        assert list(table.columns) == ["iid", "corruption/noise/3", new_class]
        # the fixture's accuracy, 1 - mean residual, averaged over the seeds
        for s, column in enumerate(table.columns):
            expected = np.mean([1 - _study_data(m, s, seed)[0].mean() for seed in SEEDS])
            assert table.loc[NETWORK, column] == pytest.approx(expected, rel=1e-12)
        html = _table(page, name)
        assert html.head == ["classifier", "iid", "corruption/noise/3", new_class]
        assert all(style == "" and css == "" for row in html.rows for _, style, css in row)
        # the CSF tables still carry heat colours and a best mark per column
        aurc = _table(page, f"aurc_cifar10-{method}")
        for j in range(3):
            assert all(style.startswith("background:") for _, style, _ in _column(aurc, j))
            assert any(css == "best" for _, _, css in _column(aurc, j))
    assert "share of retained inliers" in page and "once per classifier" in page
