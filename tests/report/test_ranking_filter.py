"""The full ranking table sorts by a click on a heading and filters by name, training method,
CSF and study in headless Chromium; without the script it is the same static table."""

from __future__ import annotations

import html
import json
import re
import subprocess

import pandas as pd
import pytest

from fdbench.report.browser import HEADLESS_FLAGS, find_browser
from fdbench.report.html import page_html, table_html
from fdbench.report.ranking_filter import (
    RANKING_SCRIPT,
    mark_ranking_table,
    scoring_method_pairs,
    with_ranking_script,
)
from fdbench.report.tables import ReportTable

FRAME = pd.DataFrame(
    {
        "iid": ["3.00 ± 0.10", "1.00 ± 0.20", "2.00 ± 0.30", "–"],
        "sub-class": ["10.0 ± 1.0", "30.0 ± 1.0", "20.0 ± 1.0", "5.0"],
        "mean rank, all studies": [2.0, 1.0, 3.0, 4.0],
    },
    index=pd.Index(["MSR", "DG-MSR", "DG-Res", "ENS-MSR"], name="scoring method"),
)
PAIRS = {
    "MSR": ("ce", "MSR"),
    "DG-MSR": ("deepgamblers", "MSR"),
    "DG-Res": ("deepgamblers", "DG-Res"),
    "ENS-MSR": ("ensemble(ce)", "MSR"),
}

# Runs after the page's script: each step changes a control or clicks a heading, then records
# the names of the shown rows in their order and the shown headings.
ACTIONS = """<script>window.addEventListener("load", () => {
const table = document.querySelector("table"); const out = {};
const shown = () => [...table.tBodies[0].rows].filter(r => !r.hidden)
  .map(r => r.cells[0].textContent);
const heads = () => [...table.tHead.rows[0].cells].filter(c => !c.hidden).map(c => c.textContent);
const set = (el, v) => { el.value = v; el.dispatchEvent(new Event("input")); };
const th = table.tHead.rows[0].cells;
th[1].click(); out.iid_up = shown();
th[1].click(); out.iid_down = shown();
th[2].click(); out.sub_up = shown();
th[0].click(); out.name_up = shown();
const box = document.querySelector(".ranking-filter input");
set(box, "dg-"); out.name_dg = shown(); set(box, "");
const method = document.querySelector('select[data-filter="training method"]');
out.methods = [...method.options].map(o => o.value);
set(method, "deepgamblers"); out.method_dg = shown(); set(method, "");
const csf = document.querySelector('select[data-filter="CSF"]');
set(csf, "MSR"); out.csf_msr = shown(); set(csf, "");
const study = document.querySelector('select[data-filter="study"]');
out.studies = [...study.options].map(o => o.value);
set(study, "sub-class"); out.study_heads = heads(); out.study_rows = shown();
document.body.setAttribute("data-out", JSON.stringify(out));});</script>"""


def _page(tmp_path):
    table = table_html(ReportTable("leaderboard_augrc_x", "Leaderboard", FRAME, 2, None))
    page = page_html("t", [("leaderboard", "Leaderboard", mark_ranking_table(table, 2, PAIRS))], "")
    path = tmp_path / "page.html"
    path.write_text(with_ranking_script(page), encoding="utf-8")
    return path


def test_rows_carry_their_training_method_and_csf_and_the_page_one_script(tmp_path):
    text = _page(tmp_path).read_text(encoding="utf-8")
    assert 'data-ranking-studies="2"' in text
    assert '<tr data-method="ensemble(ce)" data-csf="MSR"><td class="label">ENS-MSR</td>' in text
    assert text.count("<script") == 1 and RANKING_SCRIPT in text and "src=" not in RANKING_SCRIPT
    plain = page_html("t", [("a", "A", table_html(ReportTable("t", "T", FRAME, 2, None)))], "")
    assert with_ranking_script(plain) == plain


def test_scoring_method_pairs_name_rows_as_the_leaderboard_does(tmp_path):
    results = pd.DataFrame(
        {
            "method": ["ce", "deepgamblers", "deepgamblers", "ensemble(ce)"],
            "csf": ["MSR", "MSR", "DG-Res", "MSR"],
        }
    )
    assert scoring_method_pairs(results, tmp_path) == PAIRS
    assert scoring_method_pairs(None, tmp_path) == {}


def test_a_click_sorts_and_the_filters_hide_rows_in_chromium(tmp_path):
    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium browser on PATH")
    path = _page(tmp_path)
    probe = tmp_path / "probe.html"
    probe.write_text(path.read_text(encoding="utf-8").replace("</body>", ACTIONS + "</body>"))
    done = subprocess.run(
        [
            browser,
            *HEADLESS_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = re.search(r'data-out="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    out = json.loads(html.unescape(found.group(1)))
    assert out["iid_up"] == ["DG-MSR", "DG-Res", "MSR", "ENS-MSR"]  # "–" last
    assert out["iid_down"] == ["MSR", "DG-Res", "DG-MSR", "ENS-MSR"]
    assert out["sub_up"] == ["ENS-MSR", "MSR", "DG-Res", "DG-MSR"]
    assert out["name_up"] == ["DG-MSR", "DG-Res", "ENS-MSR", "MSR"]
    assert out["name_dg"] == ["DG-MSR", "DG-Res"]
    assert out["methods"] == ["", "ce", "deepgamblers", "ensemble(ce)"]
    assert out["method_dg"] == ["DG-MSR", "DG-Res"]
    assert out["csf_msr"] == ["DG-MSR", "ENS-MSR", "MSR"]
    assert out["studies"] == ["", "iid", "sub-class"]
    assert out["study_heads"] == ["scoring method", "sub-class", "mean rank, all studies"]
    assert len(out["study_rows"]) == 4
