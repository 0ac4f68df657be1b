"""Markdown summary of a finished `fdbench benchmark` run, as recorded in benchmarks/RESULTS.md.

Prints the stage times (`times.json`), the leaderboard of scoring methods by AUGRC (first
table; `fdbench.report.sections.leaderboard.leaderboard_frame`, ``--top`` rows per data set plus the
papers' reference methods), the i.i.d. accuracy of every run, accuracy under
corruption per severity (with how often it falls with severity run by run), and the AURC and
AUGRC (×1000) tables of the failure-detection protocol: mean over seeds, corruption shift as
FD-Shifts' "cor" (the mean over the 5 pooled severity levels ``corruption/<severity>``, each
pooling the 15 corruption types; ``fdbench.report.tables.report_table``), studies of experiments
other than the one with the most studies prefixed with their data set.

    python benchmarks/results_tables.py runs/fashion_mnist
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from fdbench.protocol import POOLED_CORRUPTION
from fdbench.report.tables import CORRUPTION_SUMMARY, report_table

FAILURE_DETECTION = "failure_detection"


def _minutes(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def stage_times(run: Path) -> str:
    times = json.loads((run / "times.json").read_text())
    total = sum(times.values())
    cells = " | ".join(f"{key.removesuffix('_s')}: {value:.1f} s" for key, value in times.items())
    return f"stages: {cells} | sum {_minutes(total)}"


def _run_label(frame: pd.DataFrame) -> pd.Series:
    return frame["method"] + " · " + frame["csf"]


def iid_accuracy(results: pd.DataFrame) -> str:
    acc = results[(results.metric == "accuracy") & (results.study == "iid")]
    acc = acc[acc.protocol == FAILURE_DETECTION].drop_duplicates(["dataset", "method", "seed"])
    rows = ["| experiment | method | seeds | accuracy (per seed) |", "|---|---|---:|---|"]
    for (dataset, method), part in acc.groupby(["dataset", "method"]):
        values = ", ".join(f"{v:.4f}" for v in part.sort_values("seed").value)
        rows.append(f"| {dataset} | {method} | {part.seed.nunique()} | {values} |")
    return "\n".join(rows)


def corruption_accuracy(results: pd.DataFrame) -> str:
    acc = results[(results.metric == "accuracy") & (results.protocol == FAILURE_DETECTION)]
    parts = acc.study.str.extract(r"^corruption/(?P<type>[^/]+)/(?P<severity>\d+)$")
    acc = acc.join(parts).dropna(subset=["type"])
    acc = acc.drop_duplicates(["dataset", "method", "seed", "study"])
    acc["severity"] = acc.severity.astype(int)
    per_run = acc.pivot_table(
        index=["dataset", "method", "seed", "type"], columns="severity", values="value"
    )
    falls = np.diff(per_run.to_numpy(), axis=1) < 0
    mean = acc.groupby("severity").value.mean()
    per_type = acc.groupby(["type", "severity"]).value.mean().unstack()
    type_falls = int((np.diff(per_type.to_numpy(), axis=1) < 0).all(axis=1).sum())
    head = "| severity | " + " | ".join(str(s) for s in mean.index) + " |"
    rule = "|---|" + "---:|" * len(mean)
    body = "| mean over types and runs | " + " | ".join(f"{v:.3f}" for v in mean) + " |"
    return (
        f"{head}\n{rule}\n{body}\n\n"
        f"Mean over runs, accuracy falls strictly with severity for {type_falls} of "
        f"{len(per_type)} corruption types; run by run ({len(per_run)} run × type curves) "
        f"{int(falls.all(axis=1).sum())} fall strictly at every step and "
        f"{int(falls.sum())} of {falls.size} steps fall."
    )


def metric_table(results: pd.DataFrame, metric: str) -> str:
    table = report_table(results[results.metric == metric])
    table = table[~table.study.str.match(POOLED_CORRUPTION.pattern)].copy()
    main = table.groupby("dataset").study.nunique().idxmax()
    other = table.dataset != main
    table.loc[other, "study"] = table.dataset[other] + ":" + table.study[other]
    table["row"] = _run_label(table)
    grid = table.groupby(["row", "study"], sort=False).value.mean().unstack() * 1000
    studies = sorted(grid.columns, key=lambda s: (s != "iid", s != CORRUPTION_SUMMARY, s))
    grid = grid[studies]
    head = "| CSF | " + " | ".join(studies) + " |"
    rule = "|---|" + "---:|" * len(studies)
    rows = [
        f"| {row} | " + " | ".join("" if np.isnan(v) else f"{v:.2f}" for v in values) + " |"
        for row, values in zip(grid.index, grid.to_numpy(), strict=True)
    ]
    return "\n".join([head, rule, *rows])


#: Rows the leaderboard excerpt always shows (where the run has them).
REFERENCE_METHODS = ("MSR", "MCD-PE", "DG-Res", "DG-MCD-MSR", "ConfidNet", "DeVries")


def leaderboard_markdown(run: Path, top: int) -> str:
    """The AUGRC leaderboard of every data set of ``run`` as Markdown: the ``top`` best scoring
    methods and the reference ones, with their place."""
    from fdbench.report.sections.leaderboard import leaderboard_frame, read_leaderboard

    tables = read_leaderboard(run)
    if tables is None:
        return "(no leaderboard files in this run folder)"
    parts = []
    for dataset in dict.fromkeys(tables["ranks"]["dataset"]):
        frame = leaderboard_frame(tables["summary"], tables["ranks"], dataset)
        n_methods = len(frame)
        frame.insert(0, "place", range(1, len(frame) + 1))
        shown = [*frame.index[:top], *(m for m in REFERENCE_METHODS if m in frame.index)]
        frame = frame.loc[list(dict.fromkeys(shown))].sort_values("place")
        head = "| scoring method | " + " | ".join(frame.columns) + " |"
        rule = "|---|" + "---:|" * frame.shape[1]
        rows = [
            f"| {name} | "
            + " | ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in values)
            + " |"
            for name, values in zip(frame.index, frame.to_numpy(), strict=True)
        ]
        parts.append(
            f"**{dataset}** ({n_methods} scoring methods, {top} best and the "
            "papers' references shown)\n"
        )
        parts.append("\n".join([head, rule, *rows]) + "\n")
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="folder of a finished fdbench benchmark run")
    parser.add_argument("--top", type=int, default=8, help="leaderboard rows per data set")
    args = parser.parse_args()
    run = args.run
    results = pd.read_parquet(run / "results.parquet")
    print(stage_times(run), end="\n\n")
    print("### Leaderboard of scoring methods by AUGRC ×1000\n")
    print(leaderboard_markdown(run, args.top), end="\n\n")
    print("### i.i.d. accuracy\n")
    print(iid_accuracy(results), end="\n\n")
    print("### Accuracy under corruption\n")
    print(corruption_accuracy(results), end="\n\n")
    for metric in ("aurc", "augrc"):
        print(
            f"**{metric.upper()} ×1000** (mean over seeds; {CORRUPTION_SUMMARY}: mean over the 5 "
            "severities, each pooling the 15 corruption types)\n"
        )
        print(metric_table(results, metric), end="\n\n")


if __name__ == "__main__":
    main()
