"""Which rows of two `fdbench benchmark` results tables differ, grouped by cause.

Rows are matched on (dataset, method, seed, csf, study, metric, protocol). Each matched row is
`identical` (bit-for-bit equal, NaN equal to NaN) or `changed`; unmatched rows are `removed`
(only in BEFORE) or `added` (only in AFTER). The Markdown summary counts them per group, a group
being (method, CSF, study family, metric) with the study family one of iid, corruption (per
type), corruption (pooled), subclass, new_class, val, so that every changed group can be
traced to its cause.

    python benchmarks/compare_results.py BEFORE/results.parquet AFTER/results.parquet
    python benchmarks/compare_results.py BEFORE AFTER --by csf,metric   # coarser groups
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

KEYS = ("dataset", "method", "seed", "csf", "study", "metric", "protocol")
STATUSES = ("identical", "changed", "removed", "added")


def study_family(study: pd.Series) -> pd.Series:
    """iid / corruption (per type) / corruption (pooled) / subclass / new_class / other."""
    family = study.str.split("/").str[0]
    per_type = study.str.fullmatch(r"corruption/[^/]+/\d+")
    family = family.where(~(family.eq("corruption") & ~per_type), "corruption (pooled)")
    return family.where(~per_type, "corruption (per type)")


def _read(path: Path) -> pd.DataFrame:
    path = path / "results.parquet" if path.is_dir() else path
    table = pd.read_parquet(path)
    missing = [k for k in KEYS if k not in table.columns]
    if missing:
        raise SystemExit(f"{path}: not a results table (missing columns {missing})")
    return table


def compare(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """One row per key of either table with ``value_before``, ``value_after`` and ``status``."""
    keys = list(KEYS)
    left = before[[*keys, "value"]].rename(columns={"value": "value_before"})
    right = after[[*keys, "value"]].rename(columns={"value": "value_after"})
    for name, table in (("before", left), ("after", right)):
        if table.duplicated(keys).any():
            raise SystemExit(f"{name}: repeated result keys; not one row per run × CSF × study")
    merged = left.merge(right, on=keys, how="outer", indicator=True)
    a = merged["value_before"].to_numpy(dtype=np.float64)
    b = merged["value_after"].to_numpy(dtype=np.float64)
    same = (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))
    status = np.where(same, "identical", "changed")
    status = np.where(merged["_merge"] == "left_only", "removed", status)
    status = np.where(merged["_merge"] == "right_only", "added", status)
    return merged.drop(columns="_merge").assign(status=status)


def summary(diff: pd.DataFrame, by: list[str]) -> str:
    """Markdown table: per group, the count of rows of each status and the largest |change|."""
    diff = diff.assign(family=study_family(diff["study"]))
    counts = diff.groupby([*by, "status"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=list(STATUSES), fill_value=0)
    delta = (diff["value_after"] - diff["value_before"]).abs()
    largest = delta.groupby([diff[c] for c in by]).max()
    head = "| " + " | ".join(by) + " | " + " | ".join(STATUSES) + " | max abs change |"
    rule = "|" + "---|" * len(by) + "---:|" * (len(STATUSES) + 1)
    rows = [head, rule]
    for key, row in counts.iterrows():
        key = key if isinstance(key, tuple) else (key,)
        change = largest.get(key if len(by) > 1 else key[0], np.nan)
        cells = " | ".join(str(int(row[s])) for s in STATUSES)
        shown = "" if np.isnan(change) else f"{change:.3g}"
        rows.append("| " + " | ".join(map(str, key)) + f" | {cells} | {shown} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="results.parquet (or its run folder)")
    parser.add_argument("after", type=Path, help="results.parquet (or its run folder)")
    parser.add_argument(
        "--by",
        default="method,csf,family,metric",
        help="comma-separated grouping columns (any key column, or 'family')",
    )
    args = parser.parse_args()
    diff = compare(_read(args.before), _read(args.after))
    totals = diff["status"].value_counts().reindex(list(STATUSES), fill_value=0)
    print(", ".join(f"{n} {s}" for s, n in totals.items()), end="\n\n")
    print(summary(diff, args.by.split(",")))


if __name__ == "__main__":
    main()
