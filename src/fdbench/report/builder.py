"""The page builder the sections write through: collapsed blocks, exported tables, figures drawn in
parallel, and the context a section reads."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fdbench.core.io import write_bytes, write_text
from fdbench.report.html import details_html, image_html, table_html
from fdbench.report.inputs import RunInputs
from fdbench.report.tables import (
    ReportTable,
    _stem,
)

TABLES_DIR = "tables"
FIGURES_DIR = "figures"


RANKING_METRICS = ("aurc", "augrc")


def _placeholder(name: str) -> str:
    return f"<!--fdbench-figure:{name}-->"


def _draw(job: tuple[Callable[..., bytes], tuple[Any, ...]]) -> bytes:
    draw, args = job
    return draw(*args)


def _fill(body: str, images: dict[str, str]) -> str:
    for placeholder, image in images.items():
        body = body.replace(placeholder, image)
    return body


def shown_text_px(png: bytes) -> float | None:
    """The height in CSS pixels of the smallest text of a figure drawn by
    :func:`fdbench.report.plots.figure_png`, as a 1,400 px wide page shows it (scaled down to
    :data:`fdbench.report.plots.PAGE_COLUMN_PX` when wider); None for other images."""
    import io

    from PIL import Image

    from fdbench.report.plots import PAGE_COLUMN_PX

    image = Image.open(io.BytesIO(png))
    text = getattr(image, "text", {})
    if "fdbench:min-font-pt" not in text:
        return None
    scale = min(1.0, PAGE_COLUMN_PX / image.width)
    return round(float(text["fdbench:min-font-pt"]) * float(text["fdbench:dpi"]) / 72 * scale, 2)


def group_anchor(section: str, label: str) -> str:
    """The anchor of the collapsed block ``label`` of the section ``section``."""
    return _stem(section, label)


class _Builder:
    """Collects sections, exports tables and figures, and remembers what it wrote.

    Figures are drawn at the end (:meth:`render`), in parallel processes: a section gets a
    placeholder for each figure, replaced by the embedded image once it is drawn.
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.sections: list[tuple[str, str, str, list[tuple[str, str]]]] = []
        self.tables: list[str] = []
        self.figures: list[str] = []
        self.colours: dict[str, dict[str, str]] = {}
        self.section = ""
        self.subs: list[tuple[str, str]] = []
        self._pending: list[tuple[Callable[..., bytes], tuple[Any, ...], str, str]] = []
        self.text_px: dict[str, float | None] = {}

    def group(self, label: str, body: str, summary: str | None = None) -> str:
        """``body`` (the part of the current section about one dataset × method, study, …
        ``label``) as a collapsed ``<details>`` block, listed in the table of contents under
        ``label``; its summary line is ``summary`` (default ``label``)."""
        if not label:
            return body
        anchor = group_anchor(self.section, label)
        self.subs.append((anchor, label))
        return details_html(anchor, summary or label, body)

    def table(self, table: ReportTable) -> str:
        table.export(self.run_dir / TABLES_DIR)
        self.tables.append(table.name)
        return table_html(table)

    def figure(
        self,
        draw: Callable[..., bytes],
        args: tuple[Any, ...],
        name: str,
        alt: str,
        colours: dict[str, str] | None = None,
    ) -> str:
        """Queue the figure ``draw(*args)`` (PNG bytes); return its placeholder. ``colours``:
        the colour of each CSF it draws, kept in the manifest and on the ``<img>``."""
        name = _stem(name)
        self.figures.append(name)
        if colours:
            self.colours[name] = dict(colours)
        self._pending.append((draw, args, name, alt))
        return _placeholder(name)

    def render(self, processes: int) -> dict[str, str]:
        """Draw the queued figures (``processes`` > 1: in that many worker processes), write
        them as PNG files and return each placeholder's ``<img>``."""
        jobs = self._pending
        if processes > 1 and len(jobs) > 1:
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(min(processes, len(jobs)), mp_context=context) as pool:
                pngs = list(pool.map(_draw, [(draw, args) for draw, args, _, _ in jobs]))
        else:
            pngs = [draw(*args) for draw, args, _, _ in jobs]
        images = {}
        for (_, _, name, alt), png in zip(jobs, pngs, strict=True):
            self.text_px[name] = shown_text_px(png)
            write_bytes(self.run_dir / FIGURES_DIR / f"{name}.png", png)
            images[_placeholder(name)] = image_html(png, name, alt, colours=self.colours.get(name))
        self._pending = []
        return images

    def csv(self, frame: pd.DataFrame, name: str) -> None:
        write_text(self.run_dir / TABLES_DIR / f"{_stem(name)}.csv", frame.to_csv(index=False))


def _lowest_seed(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the lowest seed of each dataset × method (all rows without a seed column)."""
    if "seed" not in table.columns:
        return table
    keys = [c for c in ("dataset", "method") if c in table.columns]
    lowest = (
        table.groupby(keys, sort=False)["seed"].transform("min") if keys else table["seed"].min()
    )
    return table[table["seed"] == lowest]


def _seed_note(table: pd.DataFrame) -> str:
    return f" (seed {table['seed'].iloc[0]})" if "seed" in table.columns else ""


def _suffix(label: str) -> str:
    return f" — {label}" if label else ""


def _select(table: pd.DataFrame, like: pd.DataFrame, keys=("dataset", "method")) -> pd.DataFrame:
    """Rows of ``table`` with the values of ``keys`` that ``like`` holds (one of each)."""
    mask = np.ones(len(table), dtype=bool)
    for key in keys:
        if key in table.columns and key in like.columns:
            mask &= (table[key] == like[key].iloc[0]).to_numpy()
    return table[mask]


@dataclass
class ReportContext:
    """What a section function of the report reads: the inputs and the options of
    :func:`write_report`, and the stage times of the run folder (``times.json``) if any."""

    inputs: RunInputs
    curve_csfs: Sequence[str] | None = None
    unknown_detection: pd.DataFrame | None = None
    seed_boxplots: bool = False
    times: dict[str, float] | None = None


SectionFunction = Callable[[_Builder, ReportContext], str]
