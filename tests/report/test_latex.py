"""The LaTeX exports are valid booktabs tabulars carrying the numbers of the CSV exports."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from fdbench.report import escape_latex, to_booktabs


def _rows(tex: str) -> list[list[str]]:
    body = tex.split("\\midrule")[1].split("\\bottomrule")[0]
    return [
        [c.strip() for c in line.rstrip("\\ ").split(" & ")] for line in body.strip().splitlines()
    ]


def _check_structure(tex: str, n_rows: int, n_columns: int) -> None:
    assert tex.count("\\begin{tabular}") == tex.count("\\end{tabular}") == 1
    assert tex.index("\\begin{tabular}") < tex.index("\\toprule") < tex.index("\\midrule")
    assert tex.index("\\midrule") < tex.index("\\bottomrule") < tex.index("\\end{tabular}")
    for rule in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert tex.count(rule) == 1
    spec = re.search(r"\\begin\{tabular\}\{([lrc]+)\}", tex).group(1)
    assert len(spec) == n_columns + 1
    rows = _rows(tex)
    assert len(rows) == n_rows
    assert all(len(row) == n_columns + 1 for row in rows)
    assert tex.count("{") == tex.count("}")


def test_every_exported_table_matches_its_csv(full_report):
    folder, _, manifest = full_report
    for name in manifest["tables"]:
        csv = pd.read_csv(folder / "tables" / f"{name}.csv", index_col=0)
        tex = (folder / "tables" / f"{name}.tex").read_text()
        _check_structure(tex, len(csv), csv.shape[1])
        digits = {"rank": 2, "aurc": 2, "augrc": 2, "study": 2, "kendall": 3, "float": 6, "sgr": 3}
        d = next((v for k, v in digits.items() if name.startswith(k)), 4)
        for (label, row), cells in zip(csv.iterrows(), _rows(tex), strict=True):
            assert cells[0] == escape_latex(label)
            for value, cell in zip(row, cells[1:], strict=True):
                cell = cell.removeprefix("\\textbf{").removesuffix("}")
                if isinstance(value, str):
                    assert cell == escape_latex(value)
                elif isinstance(value, bool | np.bool_):
                    assert cell == ("yes" if value else "no")
                elif np.isnan(value):
                    assert cell == "--"
                else:
                    # the printed number is the CSV value rounded to d decimals (or, below
                    # 10^-d, in scientific notation with 3 significant digits)
                    value = float(value)
                    tolerance = 0.5 * 10**-d if abs(value) >= 10**-d else 0.005 * abs(value)
                    assert abs(float(cell) - value) <= tolerance * (1 + 1e-9)


def test_metric_tables_have_one_row_per_csf(full_report, report_inputs):
    folder, _, _ = full_report
    results = report_inputs["results"]
    for method in ("ce", "dg"):
        csfs = set(results[results.method == method].csf)
        for name in ("augrc", "rank_aurc", "ece_after_scaling"):
            tex = (folder / "tables" / f"{name}_cifar10-{method}.tex").read_text()
            labels = [row[0] for row in _rows(tex)]
            assert sorted(labels) == sorted(csfs)  # one row per CSF, each once
            bold = re.findall(r"\\textbf\{([0-9.]+)\}", tex)
            assert len(bold) >= 3  # the best CSF of each of the three studies


def test_to_booktabs_escapes_and_formats():
    frame = pd.DataFrame(
        {"a_b": [1.23456, np.nan], "50%": ["x&y", "z"]}, index=pd.Index(["MC_dropout", "#2"])
    )
    tex = to_booktabs(frame, digits=3, bold=[(0, 0)])
    assert "a\\_b & 50\\%" in tex
    assert "MC\\_dropout & \\textbf{1.235} & x\\&y \\\\" in tex
    assert "\\#2 & -- & z \\\\" in tex
    assert tex.startswith("\\begin{tabular}{lrl}")
    with pytest.raises(TypeError, match="DataFrame"):
        to_booktabs(np.zeros((2, 2)))
