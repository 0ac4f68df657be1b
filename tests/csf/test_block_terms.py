"""The logit-metric terms of the CSF row blocks equal ``fdbench.metrics.per_sample_scores`` and
the arg-max bit for bit, the CSFs of the same pass equal ``softmax_csfs``, and a study's NLL,
Brier score and balanced accuracy from those terms equal the blocks of
``study_logit_scores`` of its own."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fdbench import metrics as M
from fdbench.csf.blocks import softmax_csfs, softmax_csfs_and_terms
from fdbench.evaluation.logit_scores import study_logit_scores
from fdbench.outputs import load_outputs
from fdbench.protocol import EvaluationSet

_LOGITS = st.integers(1, 40).flatmap(
    lambda n: st.integers(1, 12).flatmap(
        lambda k: st.tuples(
            arrays(
                np.float64,
                (n, k),
                elements=st.one_of(
                    st.sampled_from([0.0, -0.0, 1.0, -1.0, 30.0, 5e-324, 700.0, -745.0]),
                    st.floats(-1e300, 1e300, allow_nan=False),
                ),
            ),
            arrays(np.int64, n, elements=st.integers(0, k - 1)),
        )
    )
)


@settings(max_examples=80, deadline=None)
@given(data=_LOGITS, rows=st.integers(1, 45), temperature=st.one_of(st.none(), st.floats(0.1, 9)))
def test_terms_equal_per_sample_scores(data, rows, temperature):
    """Any block size, N = 1, K = 1, ties, extreme and subnormal logits."""
    z, y = data
    with np.errstate(all="ignore"):
        block_bytes = rows * z.shape[1] * 8
        csfs, terms = softmax_csfs_and_terms(z, y, temperature=temperature, block_bytes=block_bytes)
        expected = softmax_csfs(z, temperature=temperature, block_bytes=block_bytes)
        nll, brier = M.per_sample_scores(y, z)
    assert list(csfs) == list(expected)
    for name, values in expected.items():
        np.testing.assert_array_equal(csfs[name], values, err_msg=name)
    assert terms is not None
    np.testing.assert_array_equal(terms.nll, nll)
    np.testing.assert_array_equal(terms.brier, brier)
    np.testing.assert_array_equal(terms.predicted, z.argmax(axis=1))
    assert terms.predicted.dtype == np.int64


def test_terms_only_for_c_contiguous_logits_and_integer_labels():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((50, 4))
    y = rng.integers(0, 4, 50)
    assert softmax_csfs_and_terms(np.asfortranarray(z), y)[1] is None
    assert softmax_csfs_and_terms(z, y.astype(np.float64))[1] is None
    assert softmax_csfs_and_terms(z, y[:-1])[1] is None
    assert softmax_csfs_and_terms(z, None)[1] is None
    y[:3] = [-1, 4, 7]
    terms = softmax_csfs_and_terms(z, y)[1]
    assert terms is not None
    assert np.isnan(terms.nll[:3]).all() and np.isnan(terms.brier[:3]).all()
    assert not np.isnan(terms.nll[3:]).any()


def _evaluation_set(parts: dict[str, np.ndarray]) -> EvaluationSet:
    total = sum(idx.size for idx in parts.values())
    return EvaluationSet("study", tuple(parts.items()), np.zeros(total), np.zeros(total, bool))


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 60), min_size=1, max_size=3),
    k=st.integers(2, 9),
    ties=st.booleans(),
    subset=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_study_scores_from_terms_equal_own_blocks(sizes, k, ties, subset, seed):
    """Several splits, every sample or a non-consecutive subset of each, tied logits, one
    class."""
    rng = np.random.default_rng(seed)
    labels, logits, terms, parts = {}, {}, {}, {}
    for i, n in enumerate(sizes):
        name = f"s{i}"
        z = rng.standard_normal((n, k)) * 5
        z = np.round(z) if ties else z
        labels[name] = rng.integers(0, 1 if i == 0 else k, n)
        logits[name] = z
        terms[name] = softmax_csfs_and_terms(z, labels[name], block_bytes=7 * k * 8)[1]
        idx = np.arange(n)
        parts[name] = np.sort(rng.permutation(idx)[: max(1, n // 2)]) if subset else idx
    es = _evaluation_set(parts)
    from_terms = study_logit_scores(es, labels, logits, terms=terms)
    assert from_terms == study_logit_scores(es, labels, logits)


def test_a_label_outside_the_classes_is_reported_as_before():
    z = np.zeros((4, 3))
    y = np.array([0, 1, 2, 3])
    terms = {"iid": softmax_csfs_and_terms(z, y)[1]}
    es = _evaluation_set({"iid": np.arange(4)})
    with pytest.raises(ValueError, match="labels: expected class indices"):
        study_logit_scores(es, {"iid": y}, {"iid": z}, terms=terms)


def test_evaluate_run_uses_the_block_terms(tmp_path, monkeypatch):
    """The CLI path: ``evaluate_run`` gets the terms of every split from the CSF pass, and its
    results equal those computed without them."""
    from fdbench.evaluation import logit_scores, runs

    rng = np.random.default_rng(9)
    y = rng.integers(0, 5, 900)
    z = rng.standard_normal((900, 5)) + 2 * np.eye(5)[y]
    study = np.array(["val"] * 200 + ["iid"] * 400 + ["corruption/blur/1"] * 300)
    np.savez(tmp_path / "out.npz", logits=z, labels=y, study=study)
    used = []
    original = logit_scores._scores_from_terms

    def spy(*args):
        used.append(1)
        return original(*args)

    monkeypatch.setattr(logit_scores, "_scores_from_terms", spy)
    with_terms = runs.evaluate_run(load_outputs(tmp_path / "out.npz"))
    assert len(used) == 3  # iid, corruption/blur/1 and the pooled corruption/1
    monkeypatch.setattr(runs, "_split_terms", lambda run, splits: None)
    without = runs.evaluate_run(load_outputs(tmp_path / "out.npz"))
    assert len(used) == 3
    import pandas as pd

    pd.testing.assert_frame_equal(with_terms, without, check_exact=True)
