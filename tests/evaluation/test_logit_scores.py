"""A study's NLL, Brier score and balanced accuracy computed in row blocks equal the
whole-array metrics of the gathered logits bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdbench import metrics as M
from fdbench.evaluation.logit_scores import study_logit_scores
from fdbench.protocol import EvaluationSet


def _split(rng: np.random.Generator, n: int, k: int, ties: bool):
    z = rng.standard_normal((n, k)) * 5
    if ties:
        z = np.round(z)
    return rng.integers(0, k, n), z


def _evaluation_set(sizes: dict[str, int], rng: np.random.Generator, subset: bool):
    parts = []
    for name, n in sizes.items():
        idx = np.arange(n)
        if subset:
            idx = np.sort(rng.choice(n, size=max(1, n // 2), replace=False))
        parts.append((name, idx))
    total = sum(idx.size for _, idx in parts)
    return EvaluationSet("study", tuple(parts), np.zeros(total), np.zeros(total, dtype=bool))


def _whole(es, labels, logits):
    y, z = es.gather(labels), es.gather(logits)
    return {
        "nll": M.nll(y, z),
        "brier": M.brier(y, z),
        "balanced_accuracy": M.balanced_accuracy(y, z),
    }


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 60), min_size=1, max_size=3),
    k=st.integers(2, 9),
    rows=st.integers(1, 70),
    subset=st.booleans(),
    ties=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_blocks_equal_whole_array(sizes, k, rows, subset, ties, seed):
    """One or several splits, every sample or a non-consecutive subset, odd block sizes, one
    block, N = 1, tied logits."""
    rng = np.random.default_rng(seed)
    named = {f"s{i}": n for i, n in enumerate(sizes)}
    data = {name: _split(rng, n, k, ties) for name, n in named.items()}
    labels = {name: y for name, (y, _) in data.items()}
    logits = {name: z for name, (_, z) in data.items()}
    es = _evaluation_set(named, rng, subset)
    blocked = study_logit_scores(es, labels, logits, block_bytes=rows * k * 8)
    assert blocked == _whole(es, labels, logits)


@pytest.mark.parametrize("n, k", [(1, 1000), (2049, 1000), (30001, 10)])
@pytest.mark.parametrize("rows", [1, 7, 4096])
def test_wide_and_tall(n, k, rows):
    rng = np.random.default_rng(n)
    y, z = _split(rng, n, k, ties=False)
    es = _evaluation_set({"iid": n}, rng, subset=False)
    blocked = study_logit_scores(es, {"iid": y}, {"iid": z}, block_bytes=rows * k * 8)
    assert blocked == _whole(es, {"iid": y}, {"iid": z})


def test_per_sample_terms_average_to_the_metrics():
    rng = np.random.default_rng(3)
    y, z = _split(rng, 501, 6, ties=False)
    nll_terms, brier_terms = M.per_sample_scores(y, z)
    assert float(np.average(nll_terms)) == M.nll(y, z)
    assert float(np.average(brier_terms)) == M.brier(y, z)
    p = np.exp(M.log_softmax(z))
    np.testing.assert_allclose(nll_terms, -np.log(p[np.arange(501), y]))
    expected = ((p - np.eye(6)[y]) ** 2).sum(axis=1)
    np.testing.assert_allclose(brier_terms, expected, rtol=1e-12, atol=1e-12)
    predicted = z.argmax(axis=1)
    assert M.balanced_accuracy_of_predictions(y, predicted) == M.balanced_accuracy(y, z)
    with pytest.raises(ValueError, match="predictions"):
        M.balanced_accuracy_of_predictions(y, predicted[:-1])
    with pytest.raises(ValueError, match="labels"):
        M.balanced_accuracy_of_predictions(y - 10, predicted)


@pytest.mark.parametrize("order", ["C", "F"])
def test_prediction_group_takes_the_arg_max_of_the_logit_terms(order):
    """The logits group's predictions are the arg-max the CSF blocks wrote into the logit
    terms (C-ordered logits) or ``np.argmax`` of the logits (no terms): equal either way,
    tied rows included (the first maximum)."""
    from fdbench.evaluation.runs import prediction_groups
    from fdbench.outputs import RunOutputs, SplitOutputs

    rng = np.random.default_rng(4)
    labels, z = _split(rng, 500, 4, ties=True)
    z = np.asarray(z, order=order)
    run = RunOutputs(splits={"iid": SplitOutputs(labels, z)}, meta={})
    (group,) = [g for g in prediction_groups([run], ["iid"]) if g.source == "logits"]
    np.testing.assert_array_equal(group.predictions["iid"], np.argmax(z, axis=1))
    if order == "C":
        assert group.predictions["iid"] is group.logit_terms["iid"].predicted
    else:
        assert group.logit_terms is None
