"""The medical testbed's table of a run folder: Bernhardt et al.'s nine scores with the
classifier's performance, failure detection and the time each took to train and infer.

Usage: ``python benchmarks/medical_tables.py RUN_DIR`` (a run of ``medical_embedded*.yaml`` or of
one of the ``medical_<dataset>.yaml`` presets). Prints one Markdown table per task: for every
score the classifier performance (ROC-AUC under the binary protocol, accuracy otherwise), failure
ROC-AUC (AUROC_f), FPR@80TPR and AURC as mean ± std over seeds (ensembles: over their seed
subsets), and the mean training and inference seconds per run from ``run_times.csv`` (an
ensemble: the sum over its members, it is trained and inferred member by member).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

#: Bernhardt et al.'s scores (TMLR 2022, Section 3) as (name, method, CSF) of the embedded preset.
SCORES = (
    ("Baseline (MSR)", "ce", "MSR"),
    ("DOCTOR", "ce", "DOCTOR"),
    ("TrustScore", "ce", "TrustScore"),
    ("MC-S (MCD-MSR)", "ce", "MCD-MSR"),
    ("MC-E (MCD-PE)", "ce", "MCD-PE"),
    ("Laplace", "laplace", "MSR"),
    ("ConfidNet", "confidnet", "ConfidNet"),
    ("SWAG", "swag", "MSR"),
    ("DUQ", "duq", "DUQ"),
    ("Ensemble (ENS-MSR)", "ensemble(ce)", "ENS-MSR"),
)
#: The classifier-performance column of each score: the CSF whose rows carry it.
_CLASSIFIER = {"MCD-MSR": "MCD-MSR", "MCD-PE": "MCD-MSR", "ENS-MSR": "ENS-MSR"}


def _cell(values: np.ndarray, digits: int = 3) -> str:
    values = values[np.isfinite(values)]
    if not values.size:
        return "–"
    if values.size == 1:
        return f"{values[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std(ddof=1):.{digits}f}"


def _seconds(times: pd.DataFrame, dataset: str, method: str, column: str) -> str:
    if method.startswith("ensemble("):
        members = times[(times["dataset"] == dataset) & (times["method"] == method[9:-1])]
        return f"{members[column].sum():.0f} (all members)" if len(members) else "–"
    rows = times[(times["dataset"] == dataset) & (times["method"] == method)]
    return f"{rows[column].mean():.1f}" if len(rows) else "–"


def medical_table(results: pd.DataFrame, times: pd.DataFrame, dataset: str) -> str:
    """The Markdown table of ``dataset`` (see the module docstring)."""
    rows = results[(results["dataset"] == dataset) & (results["study"] == "iid")]
    if "protocol" in rows.columns:
        rows = rows[rows["protocol"] == "failure_detection"]
    performance = "roc_auc" if (rows["metric"] == "roc_auc").any() else "accuracy"
    head = (
        f"| score | runs | {performance} | failure ROC-AUC | FPR@80TPR | AURC | train s/run "
        "| inference s/run |\n|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = []
    for name, method, csf in SCORES:
        mine = rows[(rows["method"] == method) & (rows["csf"] == csf)]
        if mine.empty:
            continue

        def values(metric: str, part: pd.DataFrame = mine) -> np.ndarray:
            return part.loc[part["metric"] == metric, "value"].to_numpy(dtype=float)

        classifier = rows[(rows["method"] == method) & (rows["csf"] == _CLASSIFIER.get(csf, "MSR"))]
        lines.append(
            f"| {name} | {mine['seed'].nunique()} | {_cell(values(performance, classifier))} "
            f"| {_cell(values('auroc_f'))} | {_cell(values('fpr@80tpr'))} "
            f"| {_cell(values('aurc'))} | {_seconds(times, dataset, method, 'train_s')} "
            f"| {_seconds(times, dataset, method, 'inference_s')} |"
        )
    return head + "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="run folder of a medical preset")
    args = parser.parse_args()
    results = pd.read_parquet(args.run / "results.parquet")
    times_path = args.run / "run_times.csv"
    columns = ["dataset", "method", "train_s", "inference_s"]
    times = pd.read_csv(times_path) if times_path.exists() else pd.DataFrame(columns=columns)
    for dataset in dict.fromkeys(results["dataset"]):
        print(f"### {dataset}\n")
        print(medical_table(results, times, dataset))


if __name__ == "__main__":
    main()
