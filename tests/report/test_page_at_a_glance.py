"""A page of many scoring methods reads at a glance in Chromium at 1,400 × 900 px: the headline
table with names in the first 900 px, the page short with every block closed, no figure text
under 9 px, a page under 5 MB. Runs on a synthetic run folder (no benchmark)."""

from __future__ import annotations

import html
import json
import re
import subprocess

import pytest

from fdbench.report.browser import HEADLESS_FLAGS, find_browser
from fdbench.report.plots import MIN_TEXT_PX

from .conftest import build_inputs, write_run_folder
from .many_methods import write_leaderboard

pytestmark = pytest.mark.slow

PROBE = (
    '<script>window.addEventListener("load", () => {'
    "const tables = [...document.querySelectorAll('table')].map(t => {"
    "const r = t.getBoundingClientRect(); const names = [...t.querySelectorAll('tbody td.label')]"
    ".filter(c => c.getBoundingClientRect().bottom < 900 && c.getBoundingClientRect().width > 20)"
    ".map(c => c.textContent); return [t.id, r.top, names];});"
    "document.body.setAttribute('data-m', JSON.stringify({height: "
    "document.documentElement.scrollHeight, tables}));});</script>"
)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from fdbench.report import write_report

    folder = tmp_path_factory.mktemp("glance")
    write_run_folder(folder, build_inputs())
    names = write_leaderboard(folder, n=70)
    path = write_report(folder, processes=1)
    return folder, path, names, json.loads((folder / "report_manifest.json").read_text())


def _measure(path, tmp_path) -> dict:
    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium browser on PATH")
    probe = tmp_path / "probe.html"
    probe.write_text(path.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"))
    done = subprocess.run(
        [
            browser,
            *HEADLESS_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,900",
            "--virtual-time-budget=10000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    found = re.search(r'data-m="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


def test_headline_with_names_in_the_first_900_px_and_a_short_page(page, tmp_path):
    _, path, names, _ = page
    measured = _measure(path, tmp_path)
    assert measured["height"] <= 12_000
    first = [t for t in measured["tables"] if t[0].startswith("table-headline_")]
    assert first and first[0][1] < 900
    shown = first[0][2]
    assert len(shown) >= 5 and set(shown) <= set(names)
    assert path.stat().st_size <= 5_000_000


def test_no_figure_text_under_9_px(page):
    _, _, _, manifest = page
    sizes = {k: v for k, v in manifest["figure_min_text_px"].items() if v is not None}
    assert sizes and min(sizes.values()) >= MIN_TEXT_PX - 0.01


def test_dense_figures_draw_the_top_and_the_references(page):
    _, path, _, manifest = page
    text = path.read_text(encoding="utf-8")
    assert "the 10 best of 70 and the references" in text
    assert "paired_delta_forest_cifar10" in manifest["figures"]
