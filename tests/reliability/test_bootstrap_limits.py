"""The bootstrap refuses what cannot fit and gives no interval from one resample (issue #25, 6)."""

from __future__ import annotations

import importlib
import time

import numpy as np
import pandas as pd
import pytest

from fdbench import analysis as A
from fdbench import metrics as M
from fdbench.analysis.bootstrap import StudySamples, bootstrap_analysis

from ._cli import assert_one_line_error, outputs_npz, run_cli

B = importlib.import_module("fdbench.metrics.bootstrap")  # the module, not the function
RNG = np.random.default_rng(0)
R = (RNG.random(300) < 0.3).astype(float)
C = RNG.random(300)


@pytest.mark.parametrize(
    "call",
    [
        lambda n: M.bootstrap(R, C, n_resamples=n),
        lambda n: M.bootstrap(R, {"a": C, "b": 1 - C}, n_resamples=n, metrics=["aurc"]),
        lambda n: M.bootstrap_counts(300, n),
        lambda n: next(M.iter_bootstrap_counts(300, n)),
        lambda n: bootstrap_analysis(
            [StudySamples("d", "m", 0, "iid", R, {"a": C})], n_resamples=n
        ),
    ],
)
def test_resamples_that_cannot_fit_are_refused_up_front(call):
    # 10^12 resamples used to grow to 24 GB before the kernel killed the process
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"n_resamples: 1000000000000 resamples.*GiB.*available"):
        call(10**12)
    assert time.perf_counter() - start < 5


def test_the_limit_is_the_available_memory(monkeypatch):
    monkeypatch.setattr(B, "available_memory", lambda: 10 * 2**20)
    M.bootstrap(R, C, n_resamples=50, metrics=["aurc"])
    with pytest.raises(ValueError, match=r"need about .* MiB of memory, more than the 10 MiB"):
        M.bootstrap(R, C, n_resamples=10**6, metrics=["aurc"])
    monkeypatch.setattr(B, "available_memory", lambda: None)
    M.bootstrap(R, C, n_resamples=50, metrics=["aurc"])


def test_the_command_refuses_before_evaluating(tmp_path):
    path = outputs_npz(tmp_path / "outputs.npz")
    result = run_cli("evaluate", str(path), "--bootstrap", str(10**12))
    assert_one_line_error(result, "--bootstrap", "GiB")
    assert result.stdout == ""


def test_one_resample_gives_no_interval():
    draws = M.bootstrap(R, C, n_resamples=1, metrics=["aurc", "augrc"])
    summary = M.bootstrap_summary(draws)
    assert summary["lower"].isna().all() and summary["upper"].isna().all()
    assert summary["std"].isna().all()
    assert summary.loc["aurc", "mean"] == draws.loc[0, "aurc"]
    two = M.bootstrap_summary(M.bootstrap(R, C, n_resamples=2, metrics=["aurc"]))
    assert two["lower"].notna().all() and (two["lower"] < two["upper"]).all()


def test_one_resample_gives_no_rank_interval():
    table = M.bootstrap(R, {"a": C, "b": 1 - C}, n_resamples=1, metrics=["aurc"])
    table = table.assign(dataset="d", method="m", seed=0, study="iid")
    ranks = A.rank_then_aggregate(table, "aurc")
    assert ranks["rank_lower"].isna().all() and ranks["rank_upper"].isna().all()


def test_the_command_shows_no_interval_from_one_resample(tmp_path):
    path = outputs_npz(tmp_path / "outputs.npz")
    out = tmp_path / "results.csv"
    result = run_cli("evaluate", str(path), "--bootstrap", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out)
    assert table["ci_lower"].isna().all() and table["ci_upper"].isna().all()
    assert " [" not in result.stdout  # no "value [low, high]" cell in the printed tables
    result = run_cli("evaluate", str(path), "--bootstrap", "20")
    assert " [" in result.stdout
