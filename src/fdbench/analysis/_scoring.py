"""Labels of scoring methods: a (training method, CSF) pair as ``"method/csf"``."""

from __future__ import annotations

import pandas as pd


def scoring_method_labels(table: pd.DataFrame) -> pd.Series:
    """``"<method>/<csf>"`` for every row of ``table`` (``"<csf>"`` without a ``method``
    column): the scoring method, a CSF judged on its own classifier (Traub et al., NeurIPS
    2024; Jaeger et al., ICLR 2023, Table 1)."""
    csf = table["csf"].astype(str)
    if "method" not in table.columns:
        return csf
    return table["method"].astype(str) + "/" + csf
