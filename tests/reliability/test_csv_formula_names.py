"""Point 3 of issue #34, CSV export: names beginning with ``=``, ``+``, ``-`` or ``@`` are
written to fdbench's CSV files as they are (docs/guarantees.md, "Names are data"), never
prefixed with ``'``, so a script reads back exactly the names it gave."""

from __future__ import annotations

import csv

import pandas as pd

from ._cli import run_cli

NAMES = ["=1+1", "+SUM(A1)", "-2+3", "@cmd"]


def test_formula_leading_names_are_exported_as_they_are(tmp_path):
    rows = [(0, 0, 0.9, 0.8, 0.7, 0.1), (1, 0, 0.2, 0.3, 0.4, 0.5), (0, 1, 0.6, 0.1, 0.2, 0.3)]
    rows += [(1, 1, 0.7, 0.6, 0.9, 0.8), (0, 0, 0.8, 0.7, 0.1, 0.9)]
    table = tmp_path / "confidences.csv"
    with open(table, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["label", "prediction", *NAMES])
        writer.writerows(rows)
    out = tmp_path / "out" / "results.csv"
    done = run_cli("evaluate", str(table), "--out", str(out))
    assert done.returncode == 0, done.stderr
    with open(out, newline="") as fh:
        cells = {row["csf"] for row in csv.DictReader(fh)}
    assert cells == set(NAMES)
    assert not any(cell.startswith("'") for cell in cells)
    assert set(pd.read_csv(out)["csf"]) == set(NAMES)
