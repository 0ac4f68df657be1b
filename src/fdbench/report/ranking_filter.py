"""The full ranking table of the page, sortable and filterable (issue #35): each row carries
its training method and CSF, the table how many study columns it has, and one small inline
script (:data:`RANKING_SCRIPT`, no external source, no network) adds a filter bar (name,
training method, CSF, study) above every such table and sorts it by a click on a column's
heading. Without the script the table is the same static table."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from fdbench.analysis.scoring_methods import add_scoring_method
from fdbench.core.io import verify_if_recorded

#: The attribute marking a sortable, filterable ranking table (its value: the number of study
#: columns that follow the name column).
RANKING_ATTRIBUTE = "data-ranking-studies"

#: The page's one script. Per table marked with :data:`RANKING_ATTRIBUTE`: a bar above it with a
#: name filter box and selects of training method, CSF and study (one study: only that study
#: column is shown); a click on a heading sorts the rows by that column (numbers by the number
#: they start with, "–" last; a second click reverses).
RANKING_SCRIPT = """<script>
(() => {
  const key = (text) => {
    const number = parseFloat(text.replace(/^[^0-9+-.]*/, ""));
    return Number.isFinite(number) ? number : null;
  };
  for (const table of document.querySelectorAll("table[data-ranking-studies]")) {
    const studies = Number(table.dataset.rankingStudies);
    const heads = [...table.tHead.rows[0].cells];
    const rows = [...table.tBodies[0].rows];
    const bar = document.createElement("div");
    bar.className = "ranking-filter";
    const box = document.createElement("input");
    box.type = "search";
    box.placeholder = "filter by name";
    box.setAttribute("aria-label", "filter scoring methods by name");
    bar.append(box);
    const select = (label, values) => {
      const s = document.createElement("select");
      s.setAttribute("aria-label", label);
      s.dataset.filter = label;
      s.add(new Option(`every ${label}`, ""));
      for (const v of values) s.add(new Option(v, v));
      bar.append(s);
      return s;
    };
    const values = (k) => [...new Set(rows.map((r) => r.dataset[k]).filter(Boolean))].sort();
    const method = select("training method", values("method"));
    const csf = select("CSF", values("csf"));
    const study = select("study", heads.slice(1, 1 + studies).map((h) => h.textContent));
    const apply = () => {
      const text = box.value.trim().toLowerCase();
      for (const r of rows) {
        r.hidden = !(r.cells[0].textContent.toLowerCase().includes(text)
          && (!method.value || r.dataset.method === method.value)
          && (!csf.value || r.dataset.csf === csf.value));
      }
      heads.slice(1, 1 + studies).forEach((h, i) => {
        const hide = Boolean(study.value) && h.textContent !== study.value;
        h.hidden = hide;
        for (const r of rows) r.cells[i + 1].hidden = hide;
      });
    };
    for (const control of [box, method, csf, study]) control.addEventListener("input", apply);
    table.parentElement.before(bar);
    heads.forEach((h, column) => {
      h.style.cursor = "pointer";
      h.title = "sort by this column";
      h.addEventListener("click", () => {
        const down = h.dataset.sorted === "up";
        heads.forEach((o) => delete o.dataset.sorted);
        h.dataset.sorted = down ? "down" : "up";
        const cell = (r) => r.cells[column].textContent;
        const sorted = rows.slice().sort((a, b) => {
          const x = column ? key(cell(a)) : null, y = column ? key(cell(b)) : null;
          if (x === null || y === null) {
            if (x !== y) return x === null ? 1 : -1;
            return cell(a).localeCompare(cell(b)) * (down ? -1 : 1);
          }
          return (x - y) * (down ? -1 : 1);
        });
        table.tBodies[0].append(...sorted);
      });
    });
  }
})();
</script>"""

_ROW = re.compile(r'<tr><td class="label">([^<]*)</td>')


def scoring_method_pairs(results: pd.DataFrame | None, run_dir: Path) -> dict[str, tuple[str, str]]:
    """Each scoring method of ``results`` → its (training method, CSF), named as the leaderboard
    names them (:func:`fdbench.analysis.scoring_methods.add_scoring_method` with the kinds of
    the methods in ``run_dir``'s ``config.json`` where there is one); {} without results."""
    from fdbench.training.methods import method_names

    if results is None or not {"method", "csf"} <= set(results.columns):
        return {}
    method_names()  # the registry hands each kind's display prefix to the analysis
    kinds = None
    config = run_dir / "config.json"
    if config.is_file():
        methods = json.loads(verify_if_recorded(config, required=False).read_text()).get("methods")
        if isinstance(methods, list):
            kinds = {m["name"]: m["kind"] for m in methods if {"name", "kind"} <= set(m)}
    pairs = add_scoring_method(results[["method", "csf"]].drop_duplicates(), kinds)
    return {
        str(s): (str(m), str(c))
        for m, c, s in pairs[["method", "csf", "scoring_method"]].itertuples(index=False)
    }


def mark_ranking_table(table: str, studies: int, pairs: Mapping[str, tuple[str, str]]) -> str:
    """``table`` (the HTML of :func:`fdbench.report.html.table_html`) marked as a ranking table
    with ``studies`` study columns after the name column, each row carrying ``data-method`` and
    ``data-csf`` from ``pairs`` (scoring method → (training method, CSF))."""
    if isinstance(studies, bool) or not isinstance(studies, int) or studies < 0:
        raise ValueError(f"studies: expected a non-negative integer, got {studies!r}")

    def row(found: re.Match[str]) -> str:
        name = html.unescape(found.group(1))
        if name not in pairs:
            return found.group(0)
        method, csf = (html.escape(v) for v in pairs[name])
        return f'<tr data-method="{method}" data-csf="{csf}">' + found.group(0)[4:]

    marked = table.replace("<table ", f'<table {RANKING_ATTRIBUTE}="{studies}" ', 1)
    return _ROW.sub(row, marked)


def with_ranking_script(page: str) -> str:
    """``page`` with :data:`RANKING_SCRIPT` before ``</body>`` if it has a ranking table."""
    if RANKING_ATTRIBUTE not in page:
        return page
    head, tail = page.rsplit("</body>", 1)
    return head + RANKING_SCRIPT + "</body>" + tail
