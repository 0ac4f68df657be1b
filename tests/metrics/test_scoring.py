"""NLL, Brier, accuracy and balanced accuracy from logits, against scikit-learn and SciPy."""

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.metrics import accuracy_score, balanced_accuracy_score, log_loss

from fdbench import metrics as M


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(200, 5)) * 3
    labels = rng.integers(0, 5, size=200)
    weights = rng.integers(1, 4, size=200).astype(float)
    return labels, logits, weights


def test_against_references(data):
    labels, logits, w = data
    p = softmax(logits, axis=1)
    pred = logits.argmax(axis=1)
    onehot = np.eye(5)[labels]
    for weights in (None, w):
        kw = {"sample_weight": weights}
        assert M.nll(labels, logits, **kw) == pytest.approx(
            log_loss(labels, p, labels=range(5), **kw), abs=1e-12
        )
        brier = np.average(((p - onehot) ** 2).sum(axis=1), weights=weights)
        assert M.brier(labels, logits, **kw) == pytest.approx(brier, abs=1e-12)
        assert M.accuracy(labels, logits, **kw) == pytest.approx(
            accuracy_score(labels, pred, **kw), abs=1e-12
        )
        assert M.balanced_accuracy(labels, logits, **kw) == pytest.approx(
            balanced_accuracy_score(labels, pred, **kw), abs=1e-12
        )


def test_nll_stable_for_huge_logits():
    logits = np.array([[1000.0, 0.0], [0.0, -1000.0]])
    assert M.nll(np.array([1, 1]), logits) == pytest.approx(1000.0)
    np.testing.assert_allclose(np.exp(M.log_softmax(logits)).sum(axis=1), 1.0)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="labels"):
        M.nll(np.array([0, 3]), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="logits"):
        M.brier(np.array([0, 1]), np.zeros(2))
    with pytest.raises(ValueError, match="logits"):
        M.accuracy(np.array([0, 1]), np.array([[0.0, np.nan], [0.0, 0.0]]))
    with pytest.raises(TypeError, match="labels"):
        M.nll(np.array([0.5, 1.0]), np.zeros((2, 2)))
