"""``fdbench evaluate --binary-fpr`` on a constructed two-class outputs file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.protocol.test_binary import TEST_P1, TEST_Y, VAL_P1, VAL_Y, _logits

from .test_evaluate import run_cli


def test_binary_fpr_option(tmp_path):
    path = tmp_path / "binary.npz"
    np.savez(
        path,
        logits=np.vstack([_logits(VAL_P1), _logits(TEST_P1)]),
        labels=np.array(VAL_Y + TEST_Y),
        study=np.array(["val"] * len(VAL_Y) + ["iid"] * len(TEST_Y)),
    )
    out = tmp_path / "results.csv"
    done = run_cli("evaluate", str(path), "--binary-fpr", "0.2", "-o", str(out))
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(out)
    msr = table[(table["csf"] == "MSR") & (table["study"] == "iid")].set_index("metric")["value"]
    # The hand-computed case of tests/protocol/test_binary.py: threshold 0.4, not 0.5.
    assert msr["auroc_f"] == pytest.approx(6 / 9)
    assert msr["roc_auc"] == pytest.approx(5 / 9)
    assert "PE" not in set(table["csf"])


def test_binary_fpr_rejects_a_confidence_table(tmp_path):
    path = tmp_path / "table.csv"
    pd.DataFrame({"label": [0, 1], "prediction": [0, 1], "MSR": [0.9, 0.8]}).to_csv(path)
    done = run_cli("evaluate", str(path), "--binary-fpr", "0.2")
    assert done.returncode != 0
    assert "--binary-fpr needs logits" in done.stderr + done.stdout
