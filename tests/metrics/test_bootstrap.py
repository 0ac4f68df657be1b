"""Bootstrap: seeded counts, stratification, pairing, and equality with explicit resampling."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from fdbench import metrics as M


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    n = 60
    r = (rng.random(n) < 0.3).astype(float)
    c = np.round(rng.random(n) - 0.4 * r, 1)  # heavy ties
    return r, c


def test_counts_seeded_and_prefix_stable():
    a = M.bootstrap_counts(50, 20, seed=3)
    b = M.bootstrap_counts(50, 20, seed=3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (20, 50) and np.all(a.sum(axis=1) == 50)
    np.testing.assert_array_equal(M.bootstrap_counts(50, 5, seed=3), a[:5])
    chunks = np.concatenate(list(M.iter_bootstrap_counts(50, 20, 3, chunk_size=7)))
    np.testing.assert_array_equal(chunks, a)
    assert not np.array_equal(M.bootstrap_counts(50, 20, seed=4), a)


def test_repeated_bootstraps_share_counts_without_sharing_state(data):
    r, c = data
    first = M.bootstrap(r, c, metrics=["aurc"], n_resamples=9, seed=11)
    counts = M.bootstrap_counts(r.size, 9, seed=11)
    counts[:] = 0  # a caller's copy: changing it must not change later bootstraps
    again = M.bootstrap(r, c, metrics=["aurc"], n_resamples=9, seed=11)
    pd.testing.assert_frame_equal(first, again)
    other = M.bootstrap(r, c, metrics=["aurc"], n_resamples=9, seed=12)
    assert not first.equals(other)


def test_stratified_counts_keep_group_sizes():
    groups = np.array(["a"] * 10 + ["b"] * 25 + ["c"] * 5)
    counts = M.bootstrap_counts(40, 30, seed=1, stratify=groups)
    for g in "abc":
        np.testing.assert_array_equal(counts[:, groups == g].sum(axis=1), (groups == g).sum())


@pytest.mark.parametrize("ties", [True, False])
def test_weights_bootstrap_equals_explicit_resampling(data, ties):
    r, c = data
    if not ties:  # every sample its own tie group: the failures-only AUGRC/AUROC_f path
        c = c + np.linspace(0, 0.01, c.size)
        assert np.unique(c).size == c.size
    df = M.bootstrap(r, c, metrics=["aurc", "augrc", "eaurc", "auroc_f"], n_resamples=15, seed=2)
    counts = M.bootstrap_counts(r.size, 15, seed=2)
    assert df.index.name == "resample" and list(df.columns) == ["aurc", "augrc", "eaurc", "auroc_f"]
    for b in range(15):
        idx = np.repeat(np.arange(r.size), counts[b])
        rb, cb = r[idx], c[idx]
        assert df.loc[b, "aurc"] == pytest.approx(M.aurc(rb, cb), abs=1e-12)
        assert df.loc[b, "augrc"] == pytest.approx(M.augrc(rb, cb), abs=1e-12)
        assert df.loc[b, "eaurc"] == pytest.approx(M.eaurc(rb, cb), abs=1e-12)
        assert df.loc[b, "auroc_f"] == pytest.approx(M.auroc_f(rb, cb), abs=1e-12)


@pytest.mark.parametrize("soft", [False, True])
def test_every_metric_equals_evaluate_all_of_the_resampled_data(data, soft):
    # a resample is its drawn samples, duplicates included (so the finite-sample optimum of
    # e-AURC/e-AUGRC/NAURC has one step per draw), each carrying its sample weight
    r, c = data
    if soft:
        r = r * 0.5 + np.linspace(0, 0.4, r.size)
    c = (c - c.min()) / np.ptp(c)
    w = np.linspace(0.5, 2.0, r.size)
    df = M.bootstrap(r, c, n_resamples=6, seed=5, sample_weight=w)
    counts = M.bootstrap_counts(r.size, 6, seed=5)
    assert list(df.columns) == list(M.metric_keys(binary=not soft))
    for b in range(6):
        drawn = np.repeat(np.arange(r.size), counts[b])
        expected = M.evaluate_all(r[drawn], c[drawn], sample_weight=w[drawn])
        np.testing.assert_allclose(df.loc[b].to_numpy(), list(expected.values()), atol=1e-12)


def test_mapping_gives_paired_long_table(data):
    r, c = data
    csfs = {"a": c, "b": -c, "c": c + 0.3 * r}
    long = M.bootstrap(r, csfs, metrics=["aurc", "augrc"], n_resamples=10, seed=9)
    assert list(long.columns) == ["resample", "csf", "metric", "value"]
    assert len(long) == 3 * 2 * 10
    for name, conf in csfs.items():
        single = M.bootstrap(r, conf, metrics=["aurc", "augrc"], n_resamples=10, seed=9)
        part = long[long.csf == name].pivot(index="resample", columns="metric", values="value")
        pd.testing.assert_frame_equal(
            part[["aurc", "augrc"]], single, check_names=False, check_exact=True
        )


def test_stratified_bootstrap_and_zero_weights(data):
    r, c = data
    groups = np.arange(r.size) % 2
    w = np.ones(r.size)
    w[:5] = 0
    df = M.bootstrap(
        r, c, metrics=["aurc"], n_resamples=4, seed=1, stratify=groups, sample_weight=w
    )
    counts = M.bootstrap_counts(r.size, 4, seed=1, stratify=groups)
    for b in range(4):
        assert df.loc[b, "aurc"] == pytest.approx(
            M.aurc(r, c, sample_weight=counts[b] * w), abs=1e-12
        )


def test_summary(data):
    r, c = data
    df = M.bootstrap(r, c, metrics=["aurc", "auroc_f"], n_resamples=50, seed=0)
    summary = M.bootstrap_summary(df, confidence_level=0.9)
    assert list(summary.columns) == ["mean", "std", "lower", "upper"]
    assert summary.loc["aurc", "mean"] == pytest.approx(df["aurc"].mean())
    assert summary.loc["aurc", "lower"] == pytest.approx(np.percentile(df["aurc"], 5))
    assert summary.loc["aurc", "upper"] == pytest.approx(np.percentile(df["aurc"], 95))
    long = M.bootstrap(r, {"x": c, "y": -c}, metrics=["aurc"], n_resamples=20, seed=0)
    assert M.bootstrap_summary(long).index.names == ["csf", "metric"]


def test_bad_arguments(data):
    r, c = data
    with pytest.raises(ValueError, match="metrics"):
        M.bootstrap(r, c, metrics=["nope"])
    with pytest.raises(ValueError, match="n_resamples"):
        M.bootstrap(r, c, n_resamples=0)
    with pytest.raises(ValueError, match="seed"):
        M.bootstrap(r, c, n_resamples=2, seed=-1)
    with pytest.raises(TypeError, match="seed"):
        M.bootstrap_counts(5, 2, seed=1.5)
    with pytest.raises(ValueError, match="stratify"):
        M.bootstrap_counts(5, 2, stratify=[0, 1])
    with pytest.raises(ValueError, match="confidence_level"):
        M.bootstrap_summary(pd.DataFrame({"aurc": [0.1]}), confidence_level=1.5)


def test_working_points_equal_explicit_resampling(data):
    """risk@95cov (FD-Shifts' lowest risk with coverage >= 0.95) and selective_risk@95cov on
    resamples with unsampled points (zero-count tie groups) and heavy ties."""
    r, c = data
    keys = ["risk@95cov", "selective_risk@95cov"]
    df = M.bootstrap(r, {"a": c, "b": -c}, metrics=keys, n_resamples=12, seed=4)
    counts = M.bootstrap_counts(r.size, 12, seed=4)
    table = df.set_index(["csf", "metric", "resample"])["value"]
    for b in range(12):
        idx = np.repeat(np.arange(r.size), counts[b])
        for name, conf in (("a", c), ("b", -c)):
            rb, cb = r[idx], conf[idx]
            expected = M.min_selective_risk_at_coverage(rb, cb, 0.95)
            assert table[name, "risk@95cov", b] == pytest.approx(expected, abs=1e-12)
            expected = M.selective_risk_at_coverage(rb, cb, 0.95)
            assert table[name, "selective_risk@95cov", b] == pytest.approx(expected, abs=1e-12)
    assert (
        df.query("metric == 'risk@95cov'")["value"].to_numpy()
        <= df.query("metric == 'selective_risk@95cov'")["value"].to_numpy()
    ).all()


@pytest.mark.parametrize("n", [1, 7, 100, 6001])
@pytest.mark.parametrize("ties", [True, False])
def test_integer_counts_give_the_cumulative_sums_of_their_gathered_values(n, ties):
    """binary_cumulative over int32 counts of a wider set (columns picked by the order) equals
    the float64 cumulative sums of the gathered counts, at every tie-group end."""
    from fdbench.metrics._core import Workspace, binary_cumulative, failure_index, rank

    rng = np.random.default_rng(n)
    counts = rng.integers(0, 5, size=(3, n + 11), dtype=np.int32)
    picked = rng.permutation(n + 11)[:n]
    r = (rng.random(n) < 0.4).astype(float)
    c = np.round(rng.random(n), 1) if ties else rng.random(n)
    ranking = rank(c)
    failures = failure_index(ranking, r)
    ranking = replace(ranking, order=picked[ranking.order])
    work = Workspace(3, n, int(r.sum()), np.int32)
    W, L = binary_cumulative(ranking, failures, counts, work)
    gathered = counts[:, ranking.order].astype(np.float64)
    every_w = np.cumsum(gathered, axis=1)
    every_l = np.cumsum(gathered * r[rank(c).order], axis=1)
    ends = slice(None) if ranking.ends is None else ranking.ends
    np.testing.assert_array_equal(W, every_w[:, ends])
    np.testing.assert_array_equal(L, every_l[:, ends])
    fail_cum = np.cumsum(counts[:, ranking.order[failures.positions]], axis=1)
    np.testing.assert_array_equal(work.fail_cum_float[:3, 1:], fail_cum)


@pytest.mark.parametrize("ties", [True, False])
def test_large_bootstrap_equals_explicit_resampling(ties):
    """Thousands of samples and of failures, each block of resamples holding several rows."""
    rng = np.random.default_rng(5)
    n = 9000
    r = (rng.random(n) < 0.55).astype(float)
    c = rng.random(n) - 0.3 * r
    if ties:
        c = np.round(c, 3)
    df = M.bootstrap(r, c, metrics=["aurc", "augrc", "auroc_f"], n_resamples=3, seed=4)
    counts = M.bootstrap_counts(n, 3, seed=4)
    for b in range(3):
        idx = np.repeat(np.arange(n), counts[b])
        assert df.loc[b, "aurc"] == pytest.approx(M.aurc(r[idx], c[idx]), rel=1e-12)
        assert df.loc[b, "augrc"] == pytest.approx(M.augrc(r[idx], c[idx]), rel=1e-12)
        assert df.loc[b, "auroc_f"] == pytest.approx(M.auroc_f(r[idx], c[idx]), rel=1e-12)
