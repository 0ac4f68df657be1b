"""Measure a report page as a reader at 1,400 × 900 px sees it (issue #35's acceptance checks):
its height with every block collapsed, where its headline table is and which names it shows
in the first 900 px, its weight, and the smallest text of its figures (from each embedded PNG's
font size and DPI)."""

from __future__ import annotations

import base64
import html
import json
import re
import subprocess
from pathlib import Path

import pytest

from fdbench.report.browser import HEADLESS_FLAGS, find_browser
from fdbench.report.builder import shown_text_px

#: Appended to a copy of the page: after loading, it records the page height (every
#: ``<details>`` as the page opens it, i.e. closed) and, per table, its id, its top and the
#: row names drawn (wider than 20 px) within the first 900 px.
PROBE = (
    '<script>window.addEventListener("load", () => {'
    "const tables = [...document.querySelectorAll('table')].map(t => {"
    "const r = t.getBoundingClientRect(); const names = [...t.querySelectorAll('tbody td.label')]"
    ".filter(c => c.getBoundingClientRect().bottom < 900 && c.getBoundingClientRect().width > 20)"
    ".map(c => c.textContent); return [t.id, r.top, names];});"
    "const open = document.querySelectorAll('details[open]').length;"
    "document.body.setAttribute('data-m', JSON.stringify({height: "
    "document.documentElement.scrollHeight, tables, open}));});</script>"
)
_IMAGE = re.compile(r'<img id="([^"]*)"[^>]*src="data:image/png;base64,([^"]*)"')


def figure_text_px(page: Path) -> dict[str, float | None]:
    """The smallest text, in CSS px at 1,400 px, of every image embedded in ``page`` (None for
    an image that does not record its font sizes: a gallery thumbnail)."""
    text = page.read_text(encoding="utf-8")
    return {name: shown_text_px(base64.b64decode(data)) for name, data in _IMAGE.findall(text)}


def measure(page: Path, tmp_path: Path) -> dict:
    """``page`` loaded in headless Chromium at 1,400 × 900 px: ``height`` (px, blocks closed),
    ``tables`` ([id, top, names drawn in the first 900 px] each), ``open`` (open ``<details>``),
    ``weight`` (bytes) and ``figure_px`` (:func:`figure_text_px`)."""
    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium browser on PATH")
    probe = tmp_path / f"{page.stem}_measured.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"))
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
        timeout=300,
        check=True,
    )
    found = re.search(r'data-m="([^"]*)"', done.stdout)
    assert found, done.stderr[-2000:]
    measured = json.loads(html.unescape(found.group(1)))
    measured["weight"] = page.stat().st_size
    measured["figure_px"] = figure_text_px(page)
    return measured


def assert_at_a_glance(measured: dict, headline_prefix: str) -> None:
    """Issue #35's bounds: height <= 12,000 px with blocks closed, the first table whose id
    starts with ``headline_prefix`` begins within the first 900 px and shows >= 3 names there,
    weight <= 5 MB, no figure text under 9 px (and at least one figure measured)."""
    from fdbench.report.plots import MIN_TEXT_PX

    assert measured["height"] <= 12_000, measured["height"]
    heads = [t for t in measured["tables"] if t[0].startswith(headline_prefix)]
    assert heads, [t[0] for t in measured["tables"]]
    _, top, names = heads[0]
    assert top < 900 and len(names) >= 3, heads[0]
    assert all(name.strip() for name in names)
    assert measured["weight"] <= 5_000_000, measured["weight"]
    sizes = {k: v for k, v in measured["figure_px"].items() if v is not None}
    assert sizes, "no figure records its font sizes"
    # only the gallery's thumbnails (images of samples, no text) record no font sizes
    unmeasured = [k for k, v in measured["figure_px"].items() if v is None]
    assert all(k.startswith("fig-gallery") for k in unmeasured), unmeasured
    small = {k: v for k, v in sizes.items() if v < MIN_TEXT_PX - 0.01}
    assert not small, small
