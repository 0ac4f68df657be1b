"""Probabilities in, probabilities used: ``probs`` files and ``prob_<k>`` tables evaluated as
given (no re-normalisation, ties at 1.0 kept), validation, and the metrics of probabilities."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.csf.probabilities import LOGIT_ONLY_CSFS, probability_csfs
from fdbench.csf.softmax import msr
from fdbench.evaluation.probabilities import (
    is_probs_file,
    probability_table,
    read_probs_file,
    table_from_probability_columns,
)
from fdbench.evaluation.tables import evaluate_table
from tests._cli import run_cli


def saturated_float32(n=3000, k=10, seed=0):
    """A saturated float32 softmax: 40 % of the rows round to exactly 1.0 at their arg-max
    (the others ~1e-9, not 0), so that the rows do not sum to 1 exactly."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 2, (n, k))
    z[: int(0.4 * n), 0] += 40.0
    z = z[rng.permutation(n)]
    p = np.exp(z - z.max(1, keepdims=True))
    p = (p / p.sum(1, keepdims=True)).astype(np.float32)
    labels = np.where(rng.random(n) < 0.85, p.argmax(1), rng.integers(0, k, n))
    return p, labels.astype(np.int64)


def test_float32_ties_at_one_give_the_aurc_of_the_probabilities_as_given(tmp_path):
    p, y = saturated_float32()
    top = p.max(1)
    assert (top == 1.0).sum() > 1000
    residuals = (p.argmax(1) != y).astype(float)
    expected = M.aurc(residuals, top.astype(np.float64))
    # the detour through log(p) re-normalises in float64 and splits the ties at 1.0
    renormalised = M.aurc(residuals, msr(np.log(p.astype(np.float64))))
    assert renormalised != pytest.approx(expected, abs=1e-6)
    path = tmp_path / "probs.npz"
    np.savez(path, probs=p, labels=y)
    assert is_probs_file(path)
    with pytest.warns(UserWarning, match="MLS, energy, TEMP-MLS need logits"):
        table = read_probs_file(path)
    rows = evaluate_table(table)
    got = rows[(rows.csf == "MSR") & (rows.metric == "aurc")]["value"].item()
    assert got == expected
    out = tmp_path / "r.csv"
    done = run_cli("evaluate", str(path), "--out", str(out))
    assert done.returncode == 0, done.stderr
    cli = pd.read_csv(out)
    assert set(cli["csf"]) == {"MSR", "PE", "DOCTOR"}
    assert cli[(cli.csf == "MSR") & (cli.metric == "aurc")]["value"].item() == pytest.approx(
        expected, abs=1e-15
    )


def test_probability_table_columns_and_validation(tmp_path):
    p, y = saturated_float32(n=200, k=4, seed=1)
    frame = pd.DataFrame({f"prob_{k}": p[:, k] for k in range(4)})
    frame.insert(0, "label", y)
    frame.insert(1, "prediction", p.argmax(1))
    frame["extra"] = np.linspace(0, 1, 200)
    frame.to_parquet(tmp_path / "t.parquet")
    out = tmp_path / "r.csv"
    done = run_cli("evaluate", str(tmp_path / "t.parquet"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = pd.read_csv(out)
    assert set(rows["csf"]) == {"MSR", "PE", "DOCTOR", "extra"}
    residuals = (p.argmax(1) != y).astype(float)
    got = rows[(rows.csf == "MSR") & (rows.metric == "aurc")]["value"].item()
    assert got == pytest.approx(M.aurc(residuals, p.max(1).astype(np.float64)), abs=1e-15)
    bad = p.copy()
    bad[3, 0] += 0.01
    np.savez(tmp_path / "bad.npz", probs=bad, labels=y)
    done = run_cli("evaluate", str(tmp_path / "bad.npz"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "rows summing to 1" in done.stderr
    frame = pd.DataFrame({"label": [0, 1], "prediction": [0, 1], "prob_0": [1.0, 0.0]})
    frame["prob_2"] = [0.0, 1.0]
    with pytest.raises(ValueError, match=r"prob_0 \.\. prob_1"):
        table_from_probability_columns(frame.assign(study="iid"))


@pytest.mark.parametrize(
    ("probs", "needle"),
    [
        ([[0.5, np.nan]], "finite"),
        ([[1.5, -0.5]], r"in \[0, 1\]"),
        ([[0.6, 0.6]], "summing to 1"),
        ([0.5, 0.5], "N x K"),
        ([["a", "b"]], "real numbers"),
    ],
)
def test_check_probs_rejects_bad_probabilities(probs, needle):
    with pytest.raises((ValueError, TypeError), match=needle):
        M.check_probs(probs)


def test_float32_rows_pass_the_tolerance():
    p, _ = saturated_float32(n=500, k=1000, seed=2)
    assert M.check_probs(p).dtype == np.float64
    np.testing.assert_array_equal(M.check_probs(p), p.astype(np.float64))


@st.composite
def probability_rows(draw):
    n = draw(st.integers(1, 12))
    k = draw(st.integers(2, 5))
    raw = draw(
        st.lists(
            st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 7.0]), min_size=k, max_size=k).filter(
                lambda r: sum(r) > 0
            ),
            min_size=n,
            max_size=n,
        )
    )
    p = np.array(raw)
    labels = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    return p / p.sum(1, keepdims=True), labels


@settings(max_examples=60, deadline=None)
@given(probability_rows())
def test_probability_csfs_and_scores_against_brute_force(data):
    p, y = data
    csfs = probability_csfs(p)
    for i, row in enumerate(p.tolist()):
        assert csfs["MSR"][i] == max(row)
        entropy = sum(v * math.log(v) for v in row if v > 0)
        assert csfs["PE"][i] == pytest.approx(entropy, abs=1e-12)
        assert csfs["DOCTOR"][i] == pytest.approx(1 - 1 / sum(v * v for v in row), abs=1e-12)
    nll = -sum(math.log(p[i, y[i]]) if p[i, y[i]] > 0 else -math.inf for i in range(y.size))
    assert M.nll_from_probs(y, p) == pytest.approx(nll / y.size, abs=1e-12)
    brier = sum(sum((p[i, c] - (c == y[i])) ** 2 for c in range(p.shape[1])) for i in range(y.size))
    assert M.brier_from_probs(y, p) == pytest.approx(brier / y.size, abs=1e-12)
    residuals = (p.argmax(1) != y).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        suite = M.evaluate_all(residuals, csfs["MSR"], labels=y, probs=p)
    assert suite["nll"] == M.nll_from_probs(y, p)
    assert suite["brier"] == M.brier_from_probs(y, p)


def test_probability_table_skips_the_logit_csfs():
    p, y = saturated_float32(n=50, k=3, seed=3)
    with pytest.warns(UserWarning) as caught:
        table = probability_table(y, p)
    assert all(name in str(caught[0].message) for name in LOGIT_ONLY_CSFS)
    assert list(table.columns) == ["study", "label", "prediction", "MSR", "PE", "DOCTOR"]
    np.testing.assert_array_equal(table["prediction"], p.argmax(1))
    with pytest.raises(ValueError, match="probs"):
        M.evaluate_all([0.0], [0.5], labels=[0], probs=[[0.5, 0.5]], logits=[[0.0, 0.0]])
