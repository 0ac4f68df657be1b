"""A regression model end to end: scikit-learn's diabetes data (bundled with it), a random
forest's absolute errors as the per-sample loss, two confidences (the agreement of the trees
and the closeness to the training data) -> ``fdbench evaluate`` -> ``fdbench report``.

    python examples/any_model/regression.py OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split
from sklearn.neighbors import NearestNeighbors

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run import fdbench

from fdbench.integrations.sklearn_tables import regressor_loss_table


def outputs(out: Path) -> Path:
    """Fit the forest and write its table of losses (residual = |y - y_hat|)."""
    X, y = load_diabetes(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.4, random_state=0)
    forest = RandomForestRegressor(n_estimators=50, min_samples_leaf=3, random_state=0)
    forest.fit(X_train, y_train)
    neighbours = NearestNeighbors(n_neighbors=10).fit(X_train)

    def closeness(_estimator, X):
        """Minus the mean distance to the 10 nearest training samples."""
        return -neighbours.kneighbors(X)[0].mean(axis=1)

    table = regressor_loss_table(
        forest, X_test, y_test, loss="absolute_error", confidences={"closeness": closeness}
    )
    path = out / "diabetes_outputs.parquet"
    table.to_parquet(path)
    return path


def main(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    table = outputs(out)
    run = out / "run"
    fdbench(
        "evaluate", str(table), "--bootstrap", "200", "--name", "diabetes",
        "--out", str(run / "results.csv"),
    )  # fmt: skip
    fdbench("report", str(run))
    return run


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "any_model_regression"))
