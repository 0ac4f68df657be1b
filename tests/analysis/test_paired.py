"""Tests of the paired bootstrap across scoring methods (one resample per study, shared)."""

import numpy as np
import pytest

from fdbench import metrics as M
from fdbench.analysis.paired import PairedSamples, paired_bootstrap, unfiltered_positions

N, B, SEED = 240, 25, 7


def _values(table, name, metric="augrc"):
    rows = table[(table["scoring_method"] == name) & (table["metric"] == metric)]
    return rows.sort_values("resample")["value"].to_numpy()


def _brute(residuals, confidence, positions, n, metric=M.augrc):
    """Metric on every materialised resample of the n unfiltered samples (one shared draw of
    counts), keeping the drawn samples at ``positions`` only."""
    counts = M.bootstrap_counts(n, B, SEED)
    where = np.full(n, -1)
    where[positions] = np.arange(positions.size)
    out = []
    for b in range(B):
        drawn = where[np.repeat(np.arange(n), counts[b])]
        drawn = drawn[drawn >= 0]
        out.append(metric(residuals[drawn], confidence[drawn]))
    return np.array(out)


@pytest.fixture
def shared():
    rng = np.random.default_rng(0)
    tasks = []
    for method, shift in (("ce", 1.0), ("deepgamblers", 0.4)):
        r = (rng.uniform(size=N) < 0.25).astype(float)
        conf = {"MSR": rng.normal(size=N) - shift * r, "PE": rng.normal(size=N) - r}
        tasks.append(PairedSamples("d", method, 0, "iid", r, conf))
    return tasks


def test_shared_test_set_uses_one_draw_for_every_scoring_method(shared):
    table = paired_bootstrap(shared, n_resamples=B, seed=SEED)
    everything = np.arange(N)
    for task, prefix in zip(shared, ("", "DG-"), strict=True):
        for csf in ("MSR", "PE"):
            expected = _brute(task.residuals, task.confidences[csf], everything, N)
            np.testing.assert_allclose(_values(table, prefix + csf), expected, atol=1e-12)


def test_new_class_resamples_the_unfiltered_set_then_filters_per_classifier():
    rng = np.random.default_rng(1)
    n_in, n_new = 180, 60
    n = n_in + n_new
    tasks = []
    for method, wrong_rate in (("ce", 0.1), ("deepgamblers", 0.3)):
        correct = np.flatnonzero(rng.uniform(size=n_in) >= wrong_rate)
        parts = (("iid", correct), ("new_class/semantic", np.arange(n_new)))
        positions, size = unfiltered_positions(parts, {"iid": n_in, "new_class/semantic": n_new})
        assert size == n
        r = np.r_[np.zeros(correct.size), np.ones(n_new)]
        conf = {"MSR": rng.normal(size=r.size) - r}
        tasks.append(PairedSamples("d", method, 0, "new_class/semantic", r, conf, positions, n))
    table = paired_bootstrap(tasks, n_resamples=B, seed=SEED, metrics=("augrc", "aurc"))
    assert tasks[0].residuals.size != tasks[1].residuals.size
    for task, name in zip(tasks, ("MSR", "DG-MSR"), strict=True):
        conf = task.confidences["MSR"]
        for metric, fn in (("augrc", M.augrc), ("aurc", M.aurc)):
            expected = _brute(task.residuals, conf, task.positions, n, fn)
            np.testing.assert_allclose(_values(table, name, metric), expected, atol=1e-12)


def test_filtered_runs_with_other_metrics_take_the_sample_weight_path():
    rng = np.random.default_rng(2)
    keep = np.flatnonzero(rng.uniform(size=N) < 0.7)
    r = (rng.uniform(size=keep.size) < 0.3).astype(float)
    conf = rng.normal(size=keep.size) - r
    task = PairedSamples("d", "ce", 0, "new_class/x", r, {"MSR": conf}, keep, N)
    table = paired_bootstrap([task], n_resamples=B, seed=SEED, metrics=("augrc", "accuracy"))
    expected = _brute(r, conf, keep, N)
    np.testing.assert_allclose(_values(table, "MSR"), expected, atol=1e-12)
    accuracy = _brute(r, conf, keep, N, lambda res, _: 1 - res.mean())
    np.testing.assert_allclose(_values(table, "MSR", "accuracy"), accuracy, atol=1e-12)


def test_identical_scoring_methods_differ_by_exactly_zero(shared):
    task = shared[0]
    twin = PairedSamples("d", "devries", 0, "iid", task.residuals, dict(task.confidences))
    table = paired_bootstrap([task, twin], n_resamples=B, seed=SEED)
    for metric in ("augrc", "aurc", "auroc_f"):
        delta = _values(table, "MSR", metric) - _values(table, "DeVries-MSR", metric)
        assert np.all(delta == 0)


def test_values_are_means_over_seeds(shared):
    task = shared[0]
    other = PairedSamples("d", "ce", 1, "iid", task.residuals, {"MSR": -task.confidences["MSR"]})
    table = paired_bootstrap([task, other], n_resamples=B, seed=SEED)
    alone = [paired_bootstrap([t], n_resamples=B, seed=SEED) for t in (task, other)]
    expected = (_values(alone[0], "MSR") + _values(alone[1], "MSR")) / 2
    np.testing.assert_allclose(_values(table, "MSR"), expected, rtol=0, atol=1e-15)
    assert set(table.loc[table["scoring_method"] == "MSR", "n_seeds"]) == {2}


def test_runs_must_agree_on_the_unfiltered_set(shared):
    short = PairedSamples("d", "devries", 0, "iid", np.zeros(N - 1), {"MSR": np.ones(N - 1)})
    with pytest.raises(ValueError, match="disagree"):
        paired_bootstrap([shared[0], short], n_resamples=B)
    twice = np.array([0, 0, 1])
    bad = PairedSamples("d", "ce", 0, "iid", np.zeros(3), {"MSR": np.ones(3)}, twice, 5)
    with pytest.raises(ValueError, match="repeat"):
        paired_bootstrap([bad], n_resamples=B)
    with pytest.raises(ValueError, match="at least one"):
        paired_bootstrap([], n_resamples=B)


def test_unfiltered_positions_by_hand():
    positions, n = unfiltered_positions(
        (("iid", np.array([0, 2])), ("new", np.array([0, 1]))), {"iid": 4, "new": 2}
    )
    assert n == 6
    assert positions.tolist() == [0, 2, 4, 5]
    with pytest.raises(ValueError, match="size"):
        unfiltered_positions((("x", np.array([0])),), {})
    with pytest.raises(ValueError, match="lie in"):
        unfiltered_positions((("x", np.array([3])),), {"x": 3})


def test_dask_workers_give_the_same_values(shared):
    pytest.importorskip("dask.distributed")
    here = paired_bootstrap(shared, n_resamples=B, seed=SEED)
    there = paired_bootstrap(shared, n_resamples=B, seed=SEED, workers=1)
    keys = ["study", "scoring_method", "metric", "resample"]
    here, there = (t.sort_values(keys).reset_index(drop=True) for t in (here, there))
    assert here.equals(there)


def _new_class_task(method, rng):
    n_in, n_new = 180, 60
    correct = np.flatnonzero(rng.uniform(size=n_in) >= 0.2)
    parts = (("iid", correct), ("new_class/semantic", np.arange(n_new)))
    positions, size = unfiltered_positions(parts, {"iid": n_in, "new_class/semantic": n_new})
    r = np.r_[np.zeros(correct.size), np.ones(n_new)]
    conf = {"MSR": rng.normal(size=r.size) - r}
    return PairedSamples("d", method, 0, "new_class/semantic", r, conf, positions, size)


def test_known_values_of_the_per_run_bootstrap_give_the_same_table(shared):
    from fdbench.analysis import StudySamples, bootstrap_analysis
    from fdbench.analysis.paired import known_values

    rng = np.random.default_rng(3)
    tasks = [*shared, _new_class_task("ce", rng)]
    runs = [
        StudySamples(t.dataset, t.method, t.seed, t.study, t.residuals, t.confidences)
        for t in tasks
    ]
    boot = bootstrap_analysis(runs, metrics=("aurc", "augrc", "auroc_f"), n_resamples=B, seed=SEED)
    known = known_values(boot)
    assert set(known) == {
        ("d", "ce", 0, "iid"),
        ("d", "deepgamblers", 0, "iid"),
        ("d", "ce", 0, "new_class/semantic"),
    }
    plain = paired_bootstrap(tasks, n_resamples=B, seed=SEED)
    reused = paired_bootstrap(tasks, n_resamples=B, seed=SEED, known=known)
    assert plain.equals(reused)


def test_known_values_serve_unfiltered_runs_only(shared):
    from fdbench.analysis.paired import known_values

    rng = np.random.default_rng(4)
    new = _new_class_task("ce", rng)
    fake = [
        {
            "dataset": "d",
            "method": t.method,
            "seed": 0,
            "study": t.study,
            "csf": c,
            "metric": m,
            "resample": b,
            "value": 5.0,
        }
        for t in (*shared, new)
        for c in t.confidences
        for m in ("augrc", "aurc", "auroc_f")
        for b in range(B)
    ]
    import pandas as pd

    known = known_values(pd.DataFrame(fake))
    table = paired_bootstrap([*shared, new], n_resamples=B, seed=SEED, known=known)
    iid = table[table["study"] == "iid"]
    assert (iid["value"] == 5.0).all()
    filtered = table[table["study"] == "new_class/semantic"]
    assert (filtered["value"] < 5.0).all()
    # a known table with other resamples is not used
    short = known_values(pd.DataFrame([row for row in fake if row["resample"] < B - 1]))
    again = paired_bootstrap(shared, n_resamples=B, seed=SEED, known=short)
    assert again.equals(paired_bootstrap(shared, n_resamples=B, seed=SEED))
