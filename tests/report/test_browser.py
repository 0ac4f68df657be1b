"""The report renders in headless Chromium: no console errors, every table and image present."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
)
# Appended to a copy of the page only: after loading, it records which images failed to decode.
PROBE = (
    '<script>window.addEventListener("load", () => {'
    "const bad = [...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
    '.map(i => i.id); document.body.setAttribute("data-broken", JSON.stringify(bad));'
    'document.body.setAttribute("data-probed", "yes");});</script>'
)


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(f"no Chromium binary on PATH (looked for {', '.join(BROWSERS)})")


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.body: dict[str, str | None] = {}
        self.opened: dict[str, bool] = {}  # id -> whether its innermost <details> is open
        self._details: list[bool] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "details":
            self._details.append("open" in attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
            if self._details:
                self.opened[attrs["id"]] = self._details[-1]
        if tag == "body":
            self.body = attrs

    def handle_endtag(self, tag):
        if tag == "details" and self._details:
            self._details.pop()


def _render(page: Path, profile: Path, *extra: str, fragment: str = "") -> tuple[_Dom, list[str]]:
    """Load (a probed copy of) ``page``, at ``#fragment`` if given, and return its DOM after
    the load and the console lines."""
    probe = page.with_name(page.stem + "_probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"))
    done = subprocess.run(
        [
            _browser(),
            *FLAGS,
            f"--user-data-dir={profile}",
            "--virtual-time-budget=10000",
            "--dump-dom",
            *extra,
            probe.as_uri() + (f"#{fragment}" if fragment else ""),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    dom = _Dom()
    dom.feed(done.stdout)
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return dom, console


def test_harness_detects_console_errors_and_broken_images(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><body><img id="fig-x" src="data:image/png;base64,AAAA">'
        '<script>console.error("boom")</script></body></html>'
    )
    dom, console = _render(page, tmp_path / "profile")
    assert dom.body.get("data-probed") == "yes"
    assert json.loads(dom.body["data-broken"]) == ["fig-x"]
    assert any("boom" in line for line in console)


def test_report_renders_in_chromium(full_report, tmp_path):
    _, path, manifest = full_report
    dom, console = _render(path, tmp_path / "profile")
    assert console == []
    assert dom.body.get("data-probed") == "yes"
    assert json.loads(dom.body["data-broken"]) == []
    for name in manifest["tables"]:
        assert f"table-{name}" in dom.ids
    for name in manifest["figures"]:
        assert f"fig-{name}" in dom.ids
    for section in manifest["sections"]:
        assert section in dom.ids
    from fdbench.report.browser import screenshot_page

    shot = screenshot_page(path, tmp_path / "report.png", width=1400, height=3000)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
