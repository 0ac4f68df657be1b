"""Section: operating points certified at the configured (α, δ), and whether they held."""

from __future__ import annotations

import pandas as pd

from fdbench.report.builder import ReportContext, _Builder, _lowest_seed, _seed_note, _suffix
from fdbench.report.tables import _run_groups, _stem, plain_table

#: The procedures' names in the report.
PROCEDURES = {
    "sgr": "SGR",
    "ltt_hb": "LTT (Hoeffding–Bentkus)",
    "ltt_binomial": "LTT (binomial)",
    "crc": "CRC",
}

#: The heading of the row labels: scoring function, procedure and, where certified per group,
#: the group.
ROW_LABEL = "CSF · procedure · group"


def _cell(coverage: float, held: bool, feasible: bool, worst: bool) -> str:
    """One study's cell: the test coverage of the threshold and ✓ (held) or ✗ (exceeded α);
    "–" where no threshold could be certified; "worst" marks the group of the largest AURC."""
    if not feasible:
        return "–"
    return f"{coverage:.2f} {'✓' if held else '✗'}" + (" worst" if worst else "")


def operating_point_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One row per CSF, procedure and group (all samples first, then each group): the
    threshold certified on the calibration split and its bound, then one column per test study
    with the coverage the threshold keeps there and whether the controlled quantity stayed
    within α (✓) or not (✗); "–" where no threshold could be certified; "worst" marks the
    group of the largest AURC on that study. Every number of every row (risks, AURC and AUGRC
    per study, coverage on the calibration split) is in ``tables/operating_points.csv``."""
    frame = table.copy()
    group = frame["group"].astype(object)
    group = group.where(group.notna(), "").astype(str)
    procedure = frame["procedure"].astype(str).map(lambda p: PROCEDURES.get(p, p))
    frame["row"] = (
        frame["csf"].astype(str) + " · " + procedure + group.map(lambda g: f" · {g}" if g else "")
    )
    frame["cell"] = [
        _cell(float(c), bool(h), bool(f), bool(w))
        for c, h, f, w in zip(
            frame["coverage"],
            frame["held"],
            frame["feasible"],
            frame["worst_group"],
            strict=True,
        )
    ]
    rows = list(dict.fromkeys(frame["row"]))
    studies = list(dict.fromkeys(frame["study"].astype(str)))
    cells = frame.pivot(index="row", columns="study", values="cell")
    cells = cells.reindex(index=rows, columns=studies).fillna("")
    certified = frame.drop_duplicates("row").set_index("row")[["threshold", "bound"]]
    summary = pd.concat([certified.rename(columns={"bound": "certified bound"}), cells], axis=1)
    summary.index.name = ROW_LABEL
    summary.columns.name = None
    return summary


def _operating_points_section(b: _Builder, table: pd.DataFrame) -> str:
    alpha, delta = table["alpha"].iloc[0], table["delta"].dropna()
    level = f"α = {alpha:g}" + (f", δ = {delta.iloc[0]:g}" if len(delta) else "")
    calibration = ", ".join(sorted(set(table["calibration"].astype(str))))
    parts = [
        '<p class="note">Thresholds certified on the calibration split '
        f"({calibration}) at {level} (docs/operating_points.md): SGR and Learn-then-Test "
        "(Hoeffding–Bentkus, binomial) bound the selective risk by α with probability at "
        "least 1 − δ; conformal risk control bounds the expected generalized risk by α. "
        "Each study's cell: the coverage the threshold keeps on it, ✓ where the controlled "
        "quantity stayed within α, ✗ where it did not, – where no threshold could be certified. "
        "On i.i.d. studies it should hold in all but a fraction δ of calibration draws; under "
        "shift the guarantee does not apply. Rows with a group are certified per group "
        "(Mondrian); <i>worst</i> marks the group of the largest AURC. One training run (the "
        "lowest seed) per dataset × method; every number of every row (risks, AURC, AUGRC) is "
        "in tables/operating_points.csv.</p>"
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
