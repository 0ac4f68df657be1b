"""Tables printed on the console by ``fdbench evaluate`` and ``fdbench benchmark`` (and, for many
studies, the per-study tables written as files)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


#: The metrics of ``fdbench evaluate``'s console tables, in order (headings, scale and
#: direction from their specs, :class:`fdbench.metrics.MetricSpec`).
DISPLAY = ("aurc", "augrc", "eaurc", "auroc_f", "fpr@95tpr", "ece")


#: The widest a console table is made when the output is no terminal (a log file).
LOG_WIDTH = 160


def _console():
    """The console of the tables (names' control characters escaped,
    :func:`fdbench.core.names.terminal_console`): the terminal's width, or :data:`LOG_WIDTH`
    columns in a log."""
    from fdbench.core.names import terminal_console

    console = terminal_console()
    if not console.is_terminal:
        console.width = max(console.width, LOG_WIDTH)
    return console


def _fitting(label_width: int, widths: list[int], width: int) -> int:
    """How many of the columns of ``widths`` (cell widths, in order) fit beside a label column
    of ``label_width`` characters in ``width`` characters (rich's borders and padding: three
    characters per column and one)."""
    used = label_width + 4
    for n, cell in enumerate(widths):
        used += cell + 3
        if used > width:
            return n
    return len(widths)


def _named_table(title: str, label: str, frame: pd.DataFrame, texts: list[list[str]], width: int):
    """A rich table of ``frame``'s rows (cells ``texts``) whose label column (``label``) is
    never squeezed: the columns that do not fit beside it in ``width`` characters are left out,
    and the title says which."""
    from rich.table import Table

    names = [str(n) for n in frame.index]
    label_width = max([len(label), *map(len, names)])
    columns = [str(c) for c in frame.columns]
    cells = [max([len(r[j]) for r in texts] or [1]) for j in range(len(columns))]
    widths = [max(c, *map(len, h.split())) for c, h in zip(cells, columns, strict=True)]
    keep = max(1, _fitting(label_width, widths, width))
    if keep < len(columns):
        title += f" (left out for width: {', '.join(columns[keep:])})"
    grid = Table(title=title, title_justify="left")
    grid.add_column(label, no_wrap=True, min_width=label_width)
    for column, cell in zip(columns[:keep], widths[:keep], strict=False):
        grid.add_column(column, justify="right", min_width=cell, max_width=cell)
    for name, row in zip(names, texts, strict=True):
        grid.add_row(name, *row[:keep])
    return grid


def print_headline(run_dir: Path, *, full: bool = False) -> None:
    """Print, per data set of a run folder, the headline by AUGRC
    (:func:`fdbench.report.headline.headline`: the best scoring methods, the papers' reference
    methods, the methods whose rank interval overlaps the best's), names always shown; with
    ``full`` the whole leaderboard after it (:func:`print_leaderboard`). Nothing without
    leaderboard files."""
    from fdbench.report.headline import TOP, headline
    from fdbench.report.sections.leaderboard import read_leaderboard

    tables = read_leaderboard(run_dir)
    if tables is None:
        return
    console = _console()
    for dataset in dict.fromkeys(tables["ranks"]["dataset"]):
        head = headline(tables["summary"], tables["ranks"], str(dataset))
        frame = head.frame
        texts = [
            [str(v) if isinstance(v, str | int) else ("–" if v != v else f"{v:.2f}") for v in row]
            for row in frame.itertuples(index=False)
        ]
        title = (
            f"{dataset}: top {min(TOP, head.n_methods)} of {head.n_methods} scoring methods and "
            "the references, AUGRC ×1000 (mean over seeds; lower is better)"
        )
        console.print(_named_table(title, "scoring method", frame, texts, console.width))
        console.print(
            f"Not distinguishable from the best ({head.best}; 95 % rank intervals overlap): "
            + ", ".join(head.tied)
        )
    if full:
        print_leaderboard(run_dir)
    else:
        console.print("Full ranking: --full-ranking, report.html or leaderboard.csv.")


def print_leaderboard(run_dir: Path) -> None:
    """Print the leaderboard of scoring methods by AUGRC of every data set of a run folder
    (:func:`fdbench.report.sections.leaderboard.leaderboard_frame`), names always shown (the
    study columns that do not fit are left out); nothing if it has none."""
    from fdbench.report.sections.leaderboard import leaderboard_frame, read_leaderboard

    tables = read_leaderboard(run_dir)
    if tables is None:
        return
    console = _console()
    for dataset in dict.fromkeys(tables["ranks"]["dataset"]):
        frame = leaderboard_frame(tables["summary"], tables["ranks"], dataset)
        frame = frame[[frame.columns[-2], frame.columns[-1], *frame.columns[:-2]]]
        texts = [
            [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row]
            for row in frame.itertuples(index=False)
        ]
        title = f"Leaderboard by AUGRC ×1000 (mean ± std over seeds) — {dataset}"
        console.print(_named_table(title, "scoring method", frame, texts, console.width))


def print_results(table: pd.DataFrame | pa.Table) -> None:
    """Print one table per study: CSF rows, AURC-type metrics ×1000 as the papers show them.

    ``table``: tidy results (a DataFrame or a pyarrow Table; columns ``study``, ``csf``,
    ``metric``, ``value``, ``n_samples`` and, with bootstrap intervals, ``ci_lower`` and
    ``ci_upper``). A CSF with several rows of one metric in a study shows their mean; metrics
    and CSFs without any value are left out."""
    from rich.table import Table

    from fdbench.metrics import metric_spec

    console = _console()
    rows = table.to_pylist() if hasattr(table, "to_pylist") else table.to_dict("records")
    has_ci = bool(rows) and "ci_lower" in rows[0]
    studies: dict[object, list[dict]] = {}
    for row in rows:
        studies.setdefault(row["study"], []).append(row)
    nan = float("nan")
    for study, part in studies.items():
        wide = _wide(part, "value")
        present = {m for values in wide.values() for m, v in values.items() if v == v}
        # continuous residuals have a mean residual instead of an accuracy
        mean_residual = "mean_residual" in present and "accuracy" not in present
        shown_risk = "mean_residual" if mean_residual else "accuracy"
        first = next(iter(wide.values()), {})
        risk = first.get(shown_risk, nan) if shown_risk in present else nan
        n = int(part[0]["n_samples"])
        title = f"{study}  (n = {n}, {shown_risk.replace('_', ' ')} = {risk:.4f})"
        grid = Table(title=title, title_justify="left")
        grid.add_column("CSF", no_wrap=True, min_width=max([3, *(len(str(c)) for c in wide)]))
        shown = [metric_spec(m) for m in DISPLAY if m in present]
        for spec in shown:
            grid.add_column(spec.heading(), justify="right", overflow="fold")
        bests = {
            s.name: (max if s.higher_is_better else min)(
                v for values in wide.values() if (v := values.get(s.name, nan)) == v
            )
            for s in shown
        }
        lo = _wide(part, "ci_lower") if has_ci else {}
        hi = _wide(part, "ci_upper") if has_ci else {}
        for csf, values in wide.items():
            cells = [str(csf)]
            for spec in shown:
                metric, scale = spec.name, spec.scale
                value = values.get(metric, nan)
                if value != value:
                    cells.append("–")
                    continue
                digits = 2 if scale != 1.0 else 4
                text = f"{value * scale:.{digits}f}"
                low = lo.get(csf, {}).get(metric, nan)
                if low == low:
                    high = hi.get(csf, {}).get(metric, nan)
                    text += f" [{low * scale:.{digits}f}, {high * scale:.{digits}f}]"
                if value == bests[metric]:
                    text = f"[bold green]{text}[/]"
                cells.append(text)
            grid.add_row(*cells)
        console.print(grid)


def _wide(rows: list[dict], column: str) -> dict[object, dict[object, float]]:
    """Per CSF (in order of first appearance), per metric, the mean of the rows' ``column``
    values that are numbers (NaN where none is); CSFs with no number are left out, as
    ``DataFrame.pivot_table(index="csf", columns="metric", values=column)`` leaves them."""
    cells: dict[object, dict[object, list[float]]] = {}
    for row in rows:
        value = row.get(column)
        cell = cells.setdefault(row["csf"], {}).setdefault(row["metric"], [])
        if value is not None and value == value:
            cell.append(float(value))
    return {
        csf: {m: sum(v) / len(v) if v else float("nan") for m, v in metrics.items()}
        for csf, metrics in cells.items()
        if any(metrics.values())
    }


def print_compact(results: pd.DataFrame, *, iid_study: str = "iid") -> None:
    """One table for many studies: per CSF, AUGRC ×1000 and AUROC_f on the i.i.d. study, their
    means over the other studies, and on how many studies the CSF has the lowest AUGRC."""
    from rich.table import Table

    table = results
    if "protocol" in results.columns:
        table = results[results["protocol"] == "failure_detection"]
    wide = table.pivot_table(index=["csf", "study"], columns="metric", values="value", sort=False)
    studies = table["study"].unique()
    others = [s for s in studies if s != iid_study]
    console = _console()
    grid = Table(
        title=f"{len(studies)} studies: {iid_study} and the mean over the {len(others)} others "
        "(per-study tables in files)",
        title_justify="left",
    )
    names = [str(c) for c in table["csf"].unique()]
    for header in (
        "CSF",
        f"AUGRC‰ {iid_study}",
        "AUGRC‰ others",
        f"AUROC_f {iid_study}",
        "AUROC_f others",
        "best AUGRC in",
    ):
        if header == "CSF":
            grid.add_column(header, no_wrap=True, min_width=max(len(str(c)) for c in names))
        else:
            grid.add_column(header, justify="right", overflow="fold")
    augrc = wide["augrc"].unstack("study") if "augrc" in wide else None
    auroc = wide["auroc_f"].unstack("study") if "auroc_f" in wide else None
    wins = (augrc.eq(augrc.min()) & augrc.notna()).sum(axis=1) if augrc is not None else None

    def cell(frame: pd.DataFrame | None, csf: str, columns: list[str], scale: float) -> str:
        if frame is None or not set(columns) & set(frame.columns):
            return "–"
        value = frame.loc[csf, [c for c in columns if c in frame.columns]].mean()
        return "–" if value != value else f"{value * scale:.{2 if scale > 1 else 4}f}"

    for csf in names:
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
    from fdbench.protocol import UNKNOWN_STUDY

    if "study" in results.columns and not (results["study"] == UNKNOWN_STUDY).any():
        return  # no pooled study: the summary (and its analyses' imports) is not needed
    from rich.table import Table

    from fdbench.report import unknown_detection_display, unknown_detection_summary

    frame = unknown_detection_display(unknown_detection_summary(results, iid_study=iid_study))
    if frame.empty:
        return
    console = _console()
    grid = Table(
        title="Unknown detection (Kim et al., Table 5): mean ± std over seeds; AURC ×1000, "
        "others %",
        title_justify="left",
    )
    grid.add_column(
        str(frame.index.name), no_wrap=True, min_width=max(len(str(i)) for i in frame.index)
    )
    for column in frame.columns:
        grid.add_column(str(column), justify="right", overflow="fold")
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
    study the report shows (:func:`study_summary`), the best of each column marked ``*``; names
    always shown (the study columns that do not fit are left out)."""
    console = _console()
    for dataset, wide in study_summary(results).items():
        wide = wide.rename(columns=lambda c: str(c).removeprefix("new_class/"))
        bests = wide.min()
        texts = [
            [
                "–" if v != v else f"{v * 1000:.2f}" + ("*" if v == bests.iloc[j] else "")
                for j, v in enumerate(row)
            ]
            for row in wide.itertuples(index=False)
        ]
        title = f"{dataset}: AUGRC ×1000 per study (mean over seeds; lower is better; * best)"
        console.print(_named_table(title, "method · CSF", wide, texts, console.width))
