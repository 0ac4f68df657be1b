"""Tables printed on the console by ``fdbench evaluate`` and ``fdbench benchmark`` (and, for many
studies, the per-study tables written as files)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


#: The metrics of ``fdbench evaluate``'s console tables, in order (headings, scale and
#: direction from their specs, :class:`fdbench.metrics.MetricSpec`).
DISPLAY = ("aurc", "augrc", "eaurc", "auroc_f", "fpr@95tpr", "ece")


def print_leaderboard(run_dir: Path) -> None:
    """Print the leaderboard of scoring methods by AUGRC of every data set of a run folder
    (:func:`fdbench.report.sections.leaderboard.leaderboard_frame`); nothing if it has none."""
    from rich.table import Table

    from fdbench.core.names import terminal_console
    from fdbench.report.sections.leaderboard import leaderboard_frame, read_leaderboard

    tables = read_leaderboard(run_dir)
    if tables is None:
        return
    console = terminal_console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    for dataset in dict.fromkeys(tables["ranks"]["dataset"]):
        frame = leaderboard_frame(tables["summary"], tables["ranks"], dataset)
        grid = Table(
            title=f"Leaderboard by AUGRC ×1000 (mean ± std over seeds) — {dataset}",
            title_justify="left",
        )
        grid.add_column("scoring method")
        for column in frame.columns:
            grid.add_column(str(column), justify="right", no_wrap=True)
        for name, row in frame.iterrows():
            cells = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row]
            grid.add_row(str(name), *cells)
        console.print(grid)


def print_results(table: pd.DataFrame) -> None:
    """Print one table per study: CSF rows, AURC-type metrics ×1000 as the papers show them."""
    from rich.table import Table

    from fdbench.core.names import terminal_console
    from fdbench.metrics import metric_spec

    console = terminal_console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    has_ci = "ci_lower" in table.columns
    for study, part in table.groupby("study", sort=False):
        wide = part.pivot_table(index="csf", columns="metric", values="value", sort=False)
        accuracy = wide["accuracy"].iloc[0] if "accuracy" in wide else float("nan")
        title = f"{study}  (n = {int(part['n_samples'].iloc[0])}, accuracy = {accuracy:.4f})"
        grid = Table(title=title, title_justify="left")
        grid.add_column("CSF")
        shown = [metric_spec(m) for m in DISPLAY if m in wide and wide[m].notna().any()]
        for spec in shown:
            grid.add_column(spec.heading(), justify="right", no_wrap=True)
        bests = {s.name: (max if s.higher_is_better else min)(wide[s.name].dropna()) for s in shown}
        if has_ci:
            lo = part.pivot_table(index="csf", columns="metric", values="ci_lower", sort=False)
            hi = part.pivot_table(index="csf", columns="metric", values="ci_upper", sort=False)
        for csf, values in wide.iterrows():
            cells = [str(csf)]
            for spec in shown:
                metric, scale = spec.name, spec.scale
                value = values[metric]
                if value != value:
                    cells.append("–")
                    continue
                digits = 2 if scale != 1.0 else 4
                text = f"{value * scale:.{digits}f}"
                if has_ci and metric in lo.columns and lo.at[csf, metric] == lo.at[csf, metric]:
                    low, high = lo.at[csf, metric] * scale, hi.at[csf, metric] * scale
                    text += f" [{low:.{digits}f}, {high:.{digits}f}]"
                if value == bests[metric]:
                    text = f"[bold green]{text}[/]"
                cells.append(text)
            grid.add_row(*cells)
        console.print(grid)


def print_compact(results: pd.DataFrame, *, iid_study: str = "iid") -> None:
    """One table for many studies: per CSF, AUGRC ×1000 and AUROC_f on the i.i.d. study, their
    means over the other studies, and on how many studies the CSF has the lowest AUGRC."""
    from rich.table import Table

    from fdbench.core.names import terminal_console

    table = results
    if "protocol" in results.columns:
        table = results[results["protocol"] == "failure_detection"]
    wide = table.pivot_table(index=["csf", "study"], columns="metric", values="value", sort=False)
    studies = table["study"].unique()
    others = [s for s in studies if s != iid_study]
    console = terminal_console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    grid = Table(
        title=f"{len(studies)} studies: {iid_study} and the mean over the {len(others)} others "
        "(per-study tables in files)",
        title_justify="left",
    )
    for header in (
        "CSF",
        f"AUGRC‰ {iid_study}",
        "AUGRC‰ others",
        f"AUROC_f {iid_study}",
        "AUROC_f others",
        "best AUGRC in",
    ):
        grid.add_column(header, justify="left" if header == "CSF" else "right")
    augrc = wide["augrc"].unstack("study") if "augrc" in wide else None
    auroc = wide["auroc_f"].unstack("study") if "auroc_f" in wide else None
    wins = (augrc.eq(augrc.min()) & augrc.notna()).sum(axis=1) if augrc is not None else None

    def cell(frame: pd.DataFrame | None, csf: str, columns: list[str], scale: float) -> str:
        if frame is None or not set(columns) & set(frame.columns):
            return "–"
        value = frame.loc[csf, [c for c in columns if c in frame.columns]].mean()
        return "–" if value != value else f"{value * scale:.{2 if scale > 1 else 4}f}"

    for csf in table["csf"].unique():
        grid.add_row(
            str(csf),
            cell(augrc, csf, [iid_study], 1000.0),
            cell(augrc, csf, others, 1000.0),
            cell(auroc, csf, [iid_study], 1.0),
            cell(auroc, csf, others, 1.0),
            "–" if wins is None else f"{int(wins.get(csf, 0))} of {len(studies)}",
        )
    console.print(grid)


def write_study_tables(results: pd.DataFrame, folder: Path) -> list[Path]:
    """Write one CSV per study and protocol into ``folder``: CSF rows, metric columns (values as
    computed, not scaled), named after the study with ``/`` replaced by ``__``. Two studies
    whose tables would have one name (``a/b`` and ``a__b``) are refused before any is written."""
    from fdbench.core.io import atomic_path
    from fdbench.core.names import check_distinct_files

    if "protocol" not in results.columns:
        results = results.assign(protocol="failure_detection")
    groups = list(results.groupby(["protocol", "study"], sort=False))
    names = {key: _study_table_stem(*key) for key, _ in groups}
    check_distinct_files(names, lambda key: names[key], "studies")
    written = []
    for key, part in groups:
        wide = part.pivot_table(index="csf", columns="metric", values="value", sort=False)
        path = folder / f"{names[key]}.csv"
        with atomic_path(path) as tmp:
            wide.to_csv(tmp)
        written.append(path)
    return written


def _study_table_stem(protocol: str, study: object) -> str:
    name = str(study).replace("/", "__")
    return name if protocol == "failure_detection" else f"{protocol}__{name}"


def print_unknown_detection(results: pd.DataFrame, *, iid_study: str = "iid") -> None:
    """Print Kim et al.'s Table 5 layout when the results hold the pooled unknown-detection
    study (:func:`fdbench.report.unknown_detection_summary`); nothing otherwise."""
    from rich.table import Table

    from fdbench.core.names import terminal_console
    from fdbench.report import unknown_detection_display, unknown_detection_summary

    frame = unknown_detection_display(unknown_detection_summary(results, iid_study=iid_study))
    if frame.empty:
        return
    console = terminal_console()
    if not console.is_terminal:
        console.width = max(console.width, 200)
    grid = Table(
        title="Unknown detection (Kim et al., Table 5): mean ± std over seeds; AURC ×1000, "
        "others %",
        title_justify="left",
    )
    grid.add_column(str(frame.index.name))
    for column in frame.columns:
        grid.add_column(str(column), justify="right")
    for label, row in frame.iterrows():
        grid.add_row(str(label), *(str(v) for v in row))
    console.print(grid)


#: The metric of the console summary after a benchmark (the AUGRC paper's, ×1000).
SUMMARY_METRIC = "augrc"


def study_summary(results: pd.DataFrame, metric: str = SUMMARY_METRIC) -> dict[str, pd.DataFrame]:
    """Per dataset, the mean over seeds of ``metric`` for every (method · CSF) row and every
    study the report shows (:func:`fdbench.report.tables.report_table`: i.i.d., ``cor`` the mean of
    the pooled corruption levels, sub-class, each new-class study), failure-detection rows only;
    the pooled corruption levels themselves are left out (``cor`` summarises them)."""
    from fdbench.protocol import POOLED_CORRUPTION
    from fdbench.report.tables import CORRUPTION_SUMMARY, report_table

    table = report_table(results)
    table = table[(table["metric"] == metric) & (table["study"] != "val")]
    table = table[~table["study"].str.match(POOLED_CORRUPTION.pattern)]
    tables = {}
    for dataset, part in table.groupby("dataset", sort=False):
        rows = part["method"] + " · " + part["csf"]
        wide = part.assign(row=rows).pivot_table(
            index="row", columns="study", values="value", aggfunc="mean", sort=False
        )
        first = [s for s in ("iid", CORRUPTION_SUMMARY, "subclass") if s in wide.columns]
        tables[str(dataset)] = wide[[*first, *(c for c in wide.columns if c not in first)]]
    return tables


def print_study_summary(results: pd.DataFrame) -> None:
    """Print, per dataset, one compact table of AUGRC ×1000 (mean over seeds) with a column per
    study the report shows (:func:`study_summary`), the best of each column in bold."""
    from rich.table import Table

    from fdbench.core.names import terminal_console

    console = terminal_console()
    if not console.is_terminal:
        console.width = max(console.width, 160)
    for dataset, wide in study_summary(results).items():
        grid = Table(
            title=f"{dataset}: AUGRC ×1000 per study (mean over seeds; lower is better)",
            title_justify="left",
        )
        grid.add_column("method · CSF")
        for study in wide.columns:
            grid.add_column(str(study).removeprefix("new_class/"), justify="right")
        bests = wide.min()
        for row, values in wide.iterrows():
            cells = [str(row)]
            for study, value in values.items():
                text = "–" if value != value else f"{value * 1000:.2f}"
                cells.append(f"[bold green]{text}[/]" if value == bests[study] else text)
            grid.add_row(*cells)
        console.print(grid)
