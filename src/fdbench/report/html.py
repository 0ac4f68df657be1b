"""HTML building blocks of the report: heat-mapped tables, embedded images, sections, page."""

from __future__ import annotations

import base64
import html
import math

import numpy as np

from fdbench.report.tables import ReportTable

_LOW = np.array([248.0, 105.0, 107.0])
_MID = np.array([255.0, 235.0, 132.0])
_HIGH = np.array([99.0, 190.0, 123.0])

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1600px; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.2em 0; }
th, td { padding: 0.25em 0.5em; border: 1px solid #ddd; text-align: right; }
th { background: #f3f3f3; vertical-align: bottom; max-width: 9em; }
td.label, th.label { text-align: left; white-space: nowrap; }
td { white-space: nowrap; }
td.best { font-weight: bold; outline: 2px solid #333; outline-offset: -2px; }
.scroll { overflow-x: auto; } img.figure { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
.gallery-grid { display: grid; grid-template-columns: max-content 1fr 1fr; gap: 4px 18px;
  align-items: start; margin-bottom: 1em; }
.gallery-head { font-weight: bold; font-size: 0.85em; border-bottom: 1px solid #ccc; }
.gallery-csf { font-size: 0.85em; padding-top: 1.6em; white-space: nowrap; }
.gallery { display: flex; flex-wrap: wrap; gap: 6px; }
.gallery figure { margin: 0; text-align: center; font-size: 0.7em; }
.gallery img { width: 64px; height: 64px; image-rendering: pixelated; border: 1px solid #bbb; }
nav ul { columns: 3; } .note { color: #555; font-size: 0.85em; max-width: 75em; }
"""

def heat_colour(goodness: float) -> str:
    """CSS colour for a goodness in [0, 1]: red (worst) through yellow to green (best)."""
    g = min(max(goodness, 0.0), 1.0)
    rgb = _LOW + (_MID - _LOW) * 2 * g if g < 0.5 else _MID + (_HIGH - _MID) * (2 * g - 1)
    return "#" + "".join(f"{int(v + 0.5):02x}" for v in rgb)


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


def table_html(table: ReportTable) -> str:
    """A ``<table>`` of ``table.frame``: heat colours per column and the best cell outlined."""
    heat = table.heat()
    best = table.best_cells()
    frame = table.frame
    head = "".join(
        f"<th>{html.escape(str(c)).replace('/', '/<wbr>')}</th>" for c in frame.columns
    )
    index_name = html.escape(str(frame.index.name or ""))
    rows = []
    for i, label in enumerate(frame.index):
        cells = [f'<td class="label">{html.escape(str(label))}</td>']
        for j in range(frame.shape[1]):
            text = _cell_text(frame.iat[i, j], table.digits)
            attributes = ""
            if not math.isnan(heat[i, j]):
                attributes += f' style="background:{heat_colour(float(heat[i, j]))}"'
            if (i, j) in best:
                attributes += ' class="best"'
            cells.append(f"<td{attributes}>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<h3>{html.escape(table.title)}</h3><div class="scroll">'
        f'<table id="table-{table.name}" data-report-table="{table.name}">'
        f'<thead><tr><th class="label">{index_name}</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def image_html(png: bytes, name: str, alt: str, css_class: str = "figure") -> str:
    """An ``<img>`` with the PNG embedded as a base64 data URI."""
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<img id="fig-{name}" data-report-figure="{name}" class="{css_class}" '
        f'alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
    )


def page_html(title: str, sections: list[tuple[str, str, str]], note: str) -> str:
    """The whole page: title, table of contents and (anchor, heading, body) sections."""
    toc = "".join(f'<li><a href="#{a}">{html.escape(h)}</a></li>' for a, h, _ in sections)
    body = "".join(
        f'<section id="{a}"><h2>{html.escape(h)}</h2>{b}</section>' for a, h, b in sections
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f'<h1>{html.escape(title)}</h1><p class="note">{html.escape(note)}</p>'
        f"<nav><ul>{toc}</ul></nav>{body}</body></html>"
    )
