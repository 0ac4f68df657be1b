"""Section: operating points certified at the configured (α, δ), and whether they held."""

from __future__ import annotations

import pandas as pd

from fdbench.report.builder import ReportContext, _Builder, _lowest_seed, _seed_note, _suffix
from fdbench.report.tables import _run_groups, _stem, plain_table

#: Shown columns of the operating-point rows, and their headings.
SHOWN = {
    "threshold": "threshold",
    "calibration_coverage": "coverage (calibration)",
    "bound": "certified bound",
    "coverage": "coverage (test)",
    "risk": "selective risk (test)",
    "held": "held on test",
    "aurc": "AURC ×1000 (test)",
}


def operating_point_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One row per study, CSF, procedure and group (group "" = all samples): the certified
    threshold, the coverage it keeps on the calibration split, its bound, the test coverage and
    selective risk, and whether the controlled quantity stayed within α on the test study
    ("no threshold" where none could be certified), and the AURC ×1000 of the test samples;
    the group of the largest AURC is marked "(worst AURC)"."""
    frame = table.copy()
    frame["aurc"] = frame["aurc"] * 1000
    group = frame["group"].astype(object)
    frame["group"] = group.where(group.notna(), "").astype(str)
    worst = frame["worst_group"].astype(bool)
    frame.loc[worst, "group"] = frame.loc[worst, "group"] + " (worst AURC)"
    frame["held"] = frame["held"].astype(bool).map({True: "yes", False: "no"}).astype(object)
    none = ~frame["feasible"].astype(bool)
    frame.loc[none, "held"] = "no threshold"
    keys = ["study", "csf", "procedure", "group"]
    return frame.set_index(keys)[list(SHOWN)].rename(columns=SHOWN)


def _operating_points_section(b: _Builder, table: pd.DataFrame) -> str:
    alpha, delta = table["alpha"].iloc[0], table["delta"].dropna()
    level = f"α = {alpha:g}" + (f", δ = {delta.iloc[0]:g}" if len(delta) else "")
    calibration = ", ".join(sorted(set(table["calibration"].astype(str))))
    parts = [
        '<p class="note">Thresholds certified on the calibration split '
        f"({calibration}) at {level} (docs/operating_points.md): SGR and Learn-then-Test "
        "(Hoeffding–Bentkus, binomial) bound the selective risk by α with probability at "
        "least 1 − δ; conformal risk control bounds the expected generalized risk by α. "
        "<i>held on test</i>: whether the controlled quantity stayed within α on the study. On "
        "i.i.d. studies it should, in all but a fraction δ of calibration draws; under shift the "
        "guarantee does not apply. Rows with a group are certified per group (Mondrian). One "
        "training run (the lowest seed) per dataset × method; every row is in "
        "tables/operating_points.csv.</p>"
    ]
    b.csv(table, "operating_points")
    for label, part in _run_groups(_lowest_seed(table)):
        title = "Operating points" + _suffix(label) + _seed_note(part)
        body = b.table(
            plain_table(operating_point_summary(part), _stem("operating_points", label), title, 4)
        )
        parts.append(b.group(label, body))
    return "".join(parts)


def _operating_points(b: _Builder, context: ReportContext) -> str:
    table = context.inputs.operating_points
    return "" if table is None or table.empty else _operating_points_section(b, table)
