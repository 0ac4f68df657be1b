"""HTML building blocks of the report: heat-mapped tables, embedded images, sections, page."""

from __future__ import annotations

import base64
import html
import json
import math
import re
from collections.abc import Mapping, Sequence

import numpy as np

from fdbench.report.palette import heat_colour
from fdbench.report.tables import ReportTable

__all__ = ["details_html", "heat_class", "heat_colour", "image_html", "page_html", "table_html"]

STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; color: #222; }
.layout { display: grid; grid-template-columns: 15em minmax(0, 1fr); }
nav.toc { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow-y: auto;
  padding: 1em 0.8em; font-size: 0.85em; background: #fafafa; border-right: 1px solid #ddd;
  box-sizing: border-box; }
nav.toc ul { list-style: none; padding-left: 0; margin: 0.2em 0; }
nav.toc ul ul { padding-left: 1em; font-size: 0.92em; } nav.toc li { margin: 0.15em 0; }
nav.toc ul ul li { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
nav.toc a { color: #0b4f8a; text-decoration: none; } nav.toc a:hover { text-decoration: underline; }
main { padding: 1em 2em 4em; max-width: 1500px; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
details { margin: 0.4em 0; border: 1px solid #e3e3e3; border-radius: 4px; padding: 0.2em 0.8em; }
details > summary { cursor: pointer; font-weight: 600; padding: 0.3em 0; }
div.block { scroll-margin-top: 2.4em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.2em 0; }
th, td { padding: 0.25em 0.5em; border: 1px solid #ddd; text-align: right; }
th { background: #f3f3f3; vertical-align: bottom; max-width: 9em; }
td.label, th.label { text-align: left; white-space: nowrap; }
td { white-space: nowrap; } td.text { white-space: normal; max-width: 14em; text-align: left;
  color: #555; font-size: 0.92em; }
td.best { font-weight: bold; outline: 2px solid #333; outline-offset: -2px; }
dl.run { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.3em 1.2em;
  font-size: 0.9em; max-width: 75em; }
dl.run dt { font-weight: 600; } dl.run dd { margin: 0; }
dl.run details { border: none; padding: 0; margin: 0.2em 0 0; }
.scroll { overflow-x: auto; } img.figure { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
.gallery-grid { display: grid; grid-template-columns: max-content 1fr 1fr; gap: 4px 18px;
  align-items: start; margin-bottom: 1em; }
.gallery-head { font-weight: bold; font-size: 0.85em; border-bottom: 1px solid #ccc; }
.gallery-csf { font-size: 0.85em; padding-top: 1.6em; white-space: nowrap; }
.gallery { display: flex; flex-wrap: wrap; gap: 6px; }
.gallery figure { margin: 0; text-align: center; font-size: 0.7em; width: 72px; }
.gallery img { width: 64px; height: 64px; image-rendering: pixelated; border: 1px solid #bbb; }
.note { color: #555; font-size: 0.85em; max-width: 75em; }
.ci { font-size: 0.8em; color: #444; font-weight: normal; }
"""


def _breakable(text: str) -> str:
    """``text`` escaped, with a line-break opportunity after every ``/`` and ``_`` (long study
    names in headers wrap there instead of widening the column)."""
    return html.escape(text).replace("/", "/<wbr>").replace("_", "_<wbr>")


def _cell_text(value: object, digits: int) -> str:
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isnan(number):
            return "–"
        return f"{number:.2e}" if 0 < abs(number) < 10**-digits else f"{number:.{digits}f}"
    return html.escape(str(value))


_HEAT_CLASS = re.compile(r'class="(?:[^"]* )?h([0-9a-f]{6})[ "]')


def heat_class(goodness: float) -> str:
    """The CSS class of a table cell of goodness in [0, 1]: ``h`` and the hex digits of its
    :func:`heat_colour` (e.g. ``hb0c0bc``); :func:`page_html` adds one rule per class used,
    which keeps the page lighter than an inline ``style`` on every cell."""
    return "h" + heat_colour(goodness)[1:]


def _heat_rules(body: str) -> str:
    """One ``.hrrggbb{background:#rrggbb}`` rule per heat class used in ``body``, sorted."""
    colours = sorted(set(_HEAT_CLASS.findall(body)))
    return "".join(f".h{c}{{background:#{c}}}" for c in colours)


def table_html(table: ReportTable) -> str:
    """A ``<table>`` of ``table.frame``: heat colours per column (a :func:`heat_class` per
    cell, styled by the page) and the best cell outlined."""
    heat = table.heat()
    best = table.best_cells()
    frame = table.frame
    head = "".join(f"<th>{_breakable(str(c))}</th>" for c in frame.columns)
    index_name = html.escape(str(frame.index.name or ""))
    rows = []
    for i, label in enumerate(frame.index):
        cells = [f'<td class="label">{html.escape(str(label))}</td>']
        for j in range(frame.shape[1]):
            text = _cell_text(frame.iat[i, j], table.digits)
            if table.intervals is not None and table.intervals.iat[i, j]:
                text += f'<br><span class="ci">{html.escape(str(table.intervals.iat[i, j]))}</span>'
            classes = []
            if not math.isnan(heat[i, j]):
                classes.append(heat_class(float(heat[i, j])))
            if (i, j) in best:
                classes.append("best")
            elif isinstance(frame.iat[i, j], str) and len(frame.iat[i, j].split()) > 3:
                classes.append("text")
            attributes = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{attributes}>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<h3>{html.escape(table.title)}</h3><div class="scroll">'
        f'<table id="table-{table.name}" data-report-table="{table.name}">'
        f'<thead><tr><th class="label">{index_name}</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def image_html(
    png: bytes,
    name: str,
    alt: str,
    css_class: str = "figure",
    colours: Mapping[str, str] | None = None,
) -> str:
    """An ``<img>`` with the PNG embedded as a base64 data URI; ``colours`` (what each drawn
    name is coloured with) is kept as the JSON attribute ``data-colours``."""
    data = base64.b64encode(png).decode("ascii")
    extra = ""
    if colours:
        extra = f' data-colours="{html.escape(json.dumps(dict(colours), sort_keys=True))}"'
    return (
        f'<img id="fig-{name}" data-report-figure="{name}" class="{css_class}"{extra} '
        f'alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
    )


def details_html(anchor: str, summary: str, body: str) -> str:
    """A collapsed ``<details>`` block (no JavaScript needed) whose content, ``body``, is wrapped
    in a ``<div class="block">`` with the id ``anchor``.

    The id sits inside the block, not on the ``<details>`` itself: following a link to it
    (``#anchor``, e.g. from the table of contents) opens the block, because fragment navigation
    reveals a target hidden in a closed ``<details>`` by opening it (the HTML standard's
    "ancestor details revealing algorithm", run when scrolling to a fragment; Chromium 97 and
    later). The block scrolls into view with its summary line above it (``scroll-margin-top``).
    """
    return (
        f"<details><summary>{html.escape(summary)}</summary>"
        f'<div class="block" id="{html.escape(anchor)}">{body}</div></details>'
    )


def page_html(
    title: str,
    sections: Sequence[tuple[str, str, str] | tuple[str, str, str, list[tuple[str, str]]]],
    note: str,
) -> str:
    """The whole page: a sticky table of contents beside the title, ``note`` and the
    sections (anchor, heading, body[, sub-entries (anchor, label) listed under it in the table
    of contents]). Self-contained: no script, no external resource. The heat colours of the
    tables' cells are one stylesheet rule per colour used (see :func:`heat_class`)."""
    sections = [(a, h, b, list(rest[0]) if rest else []) for a, h, b, *rest in sections]
    entries = []
    for anchor, heading, _, subs in sections:
        inner = "".join(f'<li><a href="#{a}">{html.escape(label)}</a></li>' for a, label in subs)
        inner = f"<ul>{inner}</ul>" if inner else ""
        entries.append(f'<li><a href="#{anchor}">{html.escape(heading)}</a>{inner}</li>')
    body = "".join(
        f'<section id="{a}"><h2>{html.escape(h)}</h2>{b}</section>' for a, h, b, _ in sections
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}{_heat_rules(body)}</style></head><body>"
        f'<div class="layout"><nav class="toc" aria-label="contents"><b>Contents</b>'
        f"<ul>{''.join(entries)}</ul></nav><main><h1>{html.escape(title)}</h1>"
        f'<p class="note">{html.escape(note)}</p>{body}</main></div></body></html>'
    )
