"""Rendering the report in headless Chromium: a screenshot of the page (e.g. for the README)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
HEADLESS_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def find_browser() -> str | None:
    """Path of the first Chromium-family browser on ``PATH`` (``BROWSERS``), or None."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot_page(
    page: str | Path, png: str | Path, *, width: int = 1400, height: int = 2400
) -> Path:
    """Render ``page`` (an HTML file) in headless Chromium and save the top ``width`` × ``height``
    pixels as the PNG ``png`` (written atomically). Needs no network: the report is one file.

    Raises FileNotFoundError when the page or a browser is missing, RuntimeError when the
    browser fails.
    """
    from fdbench.core.io import atomic_path

    page = Path(page)
    if not page.is_file():
        raise FileNotFoundError(f"page {page} does not exist")
    for name, value in (("width", width), ("height", height)):
        if not isinstance(value, int) or value < 100:
            raise ValueError(f"{name} must be an int >= 100; got {value!r}")
    browser = find_browser()
    if browser is None:
        raise FileNotFoundError(f"no Chromium browser on PATH (looked for {', '.join(BROWSERS)})")
    with tempfile.TemporaryDirectory() as profile, atomic_path(png) as tmp:
        shot = tmp.with_suffix(".png")
        done = subprocess.run(
            [
                browser,
                *HEADLESS_FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                f"--screenshot={shot}",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0 or not shot.exists():
            tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"{browser} failed to take the screenshot: {tail[0]}")
        shot.replace(tmp)
    return Path(png)
