"""A member's evaluation in bounded memory: scoring a block a few rows at a time changes no
number, and the evaluation's Python allocations stay near one member's logits."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pandas as pd

from fdbench.zoo import discover_members, evaluate_member, parse_zoo_config
from fdbench.zoo import evaluate as E
from fdbench.zoo.synthetic import make_synthetic_zoo

FAST = {"pnorm": {"t_count": 5}, "n_bootstrap": 50}


def _evaluate(member, folder, **overrides):
    config = parse_zoo_config({"name": "t", "zoo": str(folder), **FAST, **overrides})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_member(member, config)


def test_rows_scored_together_change_no_number(tmp_path, monkeypatch):
    make_synthetic_zoo(tmp_path, n_members=1, n_test=400, n_ood_per_class=20, mcd_members=1)
    (member,) = discover_members(tmp_path)
    settings = {"cood": {"n_estimation": 12, "n_test": 4}, "chunk_size": 128}
    whole = _evaluate(member, tmp_path, **settings)
    monkeypatch.setattr(E, "SCORE_BYTES", 1000)
    sliced = _evaluate(member, tmp_path, **settings)
    pd.testing.assert_frame_equal(sliced[0], whole[0], check_exact=True)
    pd.testing.assert_frame_equal(sliced[1], whole[1], check_exact=True)


def test_block_scores_equal_their_definitions():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(50, 7)) * 3
    labels = rng.integers(0, 7, 50)
    fits = E.MemberFits(1.7, None, None, 1.0, 10, 7, "val")
    scores = E.block_scores(logits, fits, labels=labels)
    for suffix, z in (("", logits), ("@ts", logits / 1.7)):
        probs = np.exp(z - z.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(scores[f"MSR{suffix}"], probs.max(axis=1), rtol=1e-12)
        picked = probs[np.arange(50), labels]
        np.testing.assert_allclose(scores[f"nll{suffix}"], -np.log(picked), rtol=1e-12)
        brier = ((probs - np.eye(7)[labels]) ** 2).sum(axis=1)
        np.testing.assert_allclose(scores[f"brier{suffix}"], brier, rtol=1e-12, atol=1e-15)
        if not suffix:
            np.testing.assert_allclose(scores["PE"], (probs * np.log(probs)).sum(axis=1))


def test_evaluation_allocates_about_one_members_logits(tmp_path):
    make_synthetic_zoo(
        tmp_path, n_members=1, n_test=8000, n_classes=50, n_ood_per_class=40, mcd_members=0
    )
    (member,) = discover_members(tmp_path)
    with np.load(member.path) as data:
        size = sum(data[k].nbytes for k in data.files if k.endswith("_logits"))
    _evaluate(member, tmp_path)
    tracemalloc.start()
    try:
        _evaluate(member, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * size
