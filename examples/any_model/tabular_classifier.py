"""A tabular classifier end to end: scikit-learn's breast-cancer data (bundled with it), two
classifiers, their per-sample correctness and confidences -> ``fdbench evaluate`` (bootstrap
intervals, paired differences, operating points) -> ``fdbench report``.

    python examples/any_model/tabular_classifier.py OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run import fdbench

from fdbench.integrations.sklearn_tables import classifier_loss_table


def outputs(out: Path) -> Path:
    """Fit both classifiers and write their table of losses (one row per sample and model)."""
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
    models = {
        "logistic_regression": make_pipeline(StandardScaler(), LogisticRegression()),
        "random_forest": RandomForestClassifier(n_estimators=50, random_state=0),
    }
    frames = []
    for name, model in models.items():
        model.fit(X_train, y_train)
        frames.append(classifier_loss_table(model, X_test, y_test).assign(model=name))
    path = out / "breast_cancer_outputs.csv"
    pd.concat(frames, ignore_index=True).to_csv(path, index=False)
    return path


def main(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    table = outputs(out)
    run = out / "run"
    fdbench(
        "evaluate", str(table), "--bootstrap", "200", "--name", "breast_cancer",
        "--operating-point", "alpha=0.05,delta=0.1", "--out", str(run / "results.csv"),
    )  # fmt: skip
    fdbench("report", str(run))
    return run


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "any_model_tabular"))
