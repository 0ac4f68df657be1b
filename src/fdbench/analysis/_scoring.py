"""Labels of scoring methods: a (training method, CSF) pair under its paper name."""

from __future__ import annotations

import pandas as pd

from fdbench.analysis.scoring_methods import add_scoring_method


def scoring_method_labels(table: pd.DataFrame) -> pd.Series:
    """The scoring method of every row of ``table`` (``"<csf>"`` without a ``method`` column):
    a CSF judged on its own classifier (Traub et al., NeurIPS 2024; Jaeger et al., ICLR 2023,
    Table 1), named as the leaderboard names it
    (:func:`fdbench.analysis.scoring_methods.add_scoring_method`: MSR, DG-Res, DG-MCD-MSR, ...;
    the training-method kind inferred from the method's name)."""
    if "method" not in table.columns:
        return table["csf"].astype(str)
    # a results table of `fdbench evaluate` read back from CSV has NaN for "no method"
    named = add_scoring_method(table[["method", "csf"]].fillna("").astype(str))
    return pd.Series(named["scoring_method"].to_numpy(), index=table.index, name="scoring_method")
