"""Figures are legible at page size: no text under 9 px at 1,400 px, colours unique."""

from __future__ import annotations

import io

from PIL import Image

from fdbench.report.builder import shown_text_px
from fdbench.report.plots import MIN_TEXT_PX, _pyplot, figure_png, text_floor


def test_small_text_is_raised_to_the_floor_and_recorded():
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=4)
    ax.set_title("small", fontsize=5)
    png = figure_png(fig)
    text = Image.open(io.BytesIO(png)).text
    assert float(text["fdbench:min-font-pt"]) >= text_floor(4, 85) - 1e-3
    assert shown_text_px(png) >= MIN_TEXT_PX - 0.01


def test_a_wide_figure_gets_a_larger_floor():
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(30, 3))
    ax.set_title("wide", fontsize=5)
    png = figure_png(fig)
    assert shown_text_px(png) >= MIN_TEXT_PX - 0.01  # shown scaled down, still 9 px


def test_critical_difference_colours_are_unique_however_many_methods():
    from fdbench.report.sections.friedman import distinct_colours

    for k in (1, 2, 10, 70, 150):
        colours = distinct_colours([f"m{i}" for i in range(k)])
        assert len(set(colours.values())) == k
