"""Booktabs LaTeX tabulars written directly from DataFrames (no template engine)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def escape_latex(text: object) -> str:
    """``text`` as LaTeX source with the ten special characters escaped, and ``<``, ``>``, ``|``
    (which the default OT1 font encoding prints as other glyphs)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(text))


def format_number(value: object, digits: int) -> str:
    """Fixed-point text of a number with ``digits`` decimals (scientific when smaller than
    10^-digits but not zero); ``--`` for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isnan(number):
            return "--"
        return f"{number:.2e}" if 0 < abs(number) < 10**-digits else f"{number:.{digits}f}"
    return escape_latex(value)


def to_booktabs(
    table: pd.DataFrame,
    *,
    digits: int = 2,
    bold: Iterable[tuple[int, int]] = (),
    index_name: str | None = None,
) -> str:
    """A booktabs ``tabular`` of ``table``: index as the first column, one row per index entry.

    Numbers are printed with ``digits`` decimals, text is escaped, cells named in ``bold``
    (pairs of row and column positions) are wrapped in ``\\textbf``. The result needs
    ``\\usepackage{booktabs}`` and contains ``\\toprule``, ``\\midrule`` and ``\\bottomrule``.
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame; got {type(table).__name__}")
    bold = set(bold)
    numeric = [pd.api.types.is_numeric_dtype(table[c]) for c in table.columns]
    spec = "l" + "".join("r" if n else "l" for n in numeric)
    head = index_name if index_name is not None else (table.index.name or "")
    lines = [
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join([escape_latex(head), *(escape_latex(c) for c in table.columns)]) + r" \\",
        r"\midrule",
    ]
    for i, label in enumerate(table.index):
        cells = [escape_latex(label)]
        for j in range(table.shape[1]):
            text = format_number(table.iat[i, j], digits)
            cells.append(rf"\textbf{{{text}}}" if (i, j) in bold else text)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)
