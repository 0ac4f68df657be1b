"""Seed aggregation and validation-based model selection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fdbench.analysis import aggregate_seeds, best_configs, select_models


def test_aggregate_seeds():
    table = pd.DataFrame(
        {
            "dataset": "d",
            "method": "ce",
            "seed": [0, 1, 2, 0],
            "csf": ["MSR", "MSR", "MSR", "PE"],
            "study": "iid",
            "metric": "aurc",
            "value": [0.1, 0.2, 0.6, 0.3],
        }
    )
    out = aggregate_seeds(table).set_index("csf")
    assert out.loc["MSR", "mean"] == pytest.approx(0.3)
    assert out.loc["MSR", "std"] == pytest.approx(np.std([0.1, 0.2, 0.6], ddof=1))
    assert out.loc["MSR", "n"] == 3 and out.loc["PE", "n"] == 1
    assert np.isnan(out.loc["PE", "std"])


def _grid():
    rows = []
    val = {(0.0, "MSR"): 0.05, (0.2, "MSR"): 0.03, (0.0, "PE"): 0.02, (0.2, "PE"): 0.04}
    for (dropout, csf), v in val.items():
        for seed in range(2):
            rows.append(("ce", seed, csf, "val", "augrc", v + 0.001 * seed, dropout))
            rows.append(("ce", seed, csf, "val", "accuracy", 0.9 - dropout, dropout))
            rows.append(("ce", seed, csf, "iid", "augrc", 10 * v, dropout))
    return pd.DataFrame(
        rows, columns=["method", "seed", "csf", "study", "metric", "value", "dropout"]
    )


def test_best_configs_per_csf_and_metric():
    grid = _grid()
    chosen = best_configs(grid, "augrc", config_columns=["dropout"]).set_index("csf")
    assert chosen.loc["MSR", "dropout"] == 0.2 and chosen.loc["PE", "dropout"] == 0.0
    assert chosen.loc["MSR", "val_value"] == pytest.approx(0.0305)
    by_acc = best_configs(grid, "accuracy", config_columns=["dropout"]).set_index("csf")
    assert (by_acc.dropout == 0.0).all()
    test = select_models(grid, "augrc", config_columns=["dropout"])
    assert set(test.study) == {"iid"}
    assert test.groupby("csf").dropout.unique().map(list).to_dict() == {
        "MSR": [0.2],
        "PE": [0.0],
    }
    with pytest.raises(ValueError, match="val"):
        best_configs(grid[grid.study != "val"], "augrc", config_columns=["dropout"])
    with pytest.raises(ValueError, match="config_columns"):
        best_configs(grid, "augrc", config_columns="dropout")
