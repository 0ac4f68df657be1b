"""Small synthetic results and bootstrap tables for the analysis tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def bootstrap_table() -> pd.DataFrame:
    """2 studies × 4 CSFs × 3 seeds × 40 resamples of aurc and auroc_f, with one exact tie."""
    rng = np.random.default_rng(7)
    rows = []
    shift = {"MSR": 0.0, "MLS": 0.002, "PE": 0.004, "DOCTOR": 0.0}
    for study in ("iid", "corruption/3"):
        for seed in range(3):
            for resample in range(40):
                base = rng.normal(0.05, 0.01)
                noise = {csf: rng.normal(0, 0.001) for csf in shift}
                noise["DOCTOR"] = noise["MSR"]
                for csf, delta in shift.items():
                    aurc = base + delta + noise[csf]
                    for metric, value in (("aurc", aurc), ("auroc_f", 1 - 4 * aurc)):
                        rows.append(
                            {
                                "dataset": "cifar10",
                                "method": "ce",
                                "seed": seed,
                                "csf": csf,
                                "study": study,
                                "metric": metric,
                                "resample": resample,
                                "value": value,
                            }
                        )
    return pd.DataFrame(rows)
