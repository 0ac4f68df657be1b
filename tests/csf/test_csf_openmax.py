"""OpenMax (Bendale & Boult, 2016) against hand-computed values on a 2-class toy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import weibull_min

from fdbench.csf import compute_csfs
from fdbench.csf.openmax import (
    OpenMaxFit,
    OpenMaxParams,
    WeibullTail,
    fit_openmax,
    fit_weibull_high,
    openmax_distances,
    openmax_probabilities,
    openmax_score,
)
from fdbench.outputs import RunOutputs, SplitOutputs


def toy_fit(rank_weights: str = "linear") -> OpenMaxFit:
    """Two classes, MAVs (2, 0) and (0, 2), Euclidean distance, α = 2 and known Weibulls:
    class 0 shape 2 scale 1 (CDF 1 − exp(−d²)), class 1 shape 1 scale 2 (CDF 1 − exp(−d/2)),
    no translation."""
    params = OpenMaxParams(tail_size=2, alpha=2, distance="euclidean", rank_weights=rank_weights)
    tails = (
        WeibullTail(shape=2.0, scale=1.0, small_score=0.0, translate=0.0),
        WeibullTail(shape=1.0, scale=2.0, small_score=0.0, translate=0.0),
    )
    return OpenMaxFit(mavs=np.array([[2.0, 0.0], [0.0, 2.0]]), tails=tails, params=params)


def test_recalibration_of_a_two_class_toy_by_hand():
    # v = (3, 1): class 0 ranks first (weight (α+1−1)/α = 1), class 1 second (weight 1/2).
    # d0 = ‖(1, 1)‖ = √2 → w0 = 1 − e^−2 = 0.8646647167633873
    # d1 = ‖(3, −1)‖ = √10 → w1 = 1 − e^−√10/2 = 0.7942593389161856
    # v̂0 = 3 (1 − w0) = 0.4060058497098381, v̂1 = 1 (1 − w1 / 2) = 0.6028703305419072
    # v̂_unknown = (3 − v̂0) + (1 − v̂1) = 2.991123819748255; softmax of the three:
    fit = toy_fit()
    logits = np.array([[3.0, 1.0]])
    assert fit.tails[0].cdf([math.sqrt(2)])[0] == pytest.approx(0.8646647167633873, rel=1e-15)
    assert fit.tails[1].cdf([math.sqrt(10)])[0] == pytest.approx(0.7942593389161856, rel=1e-15)
    probs = openmax_probabilities(logits, fit)
    expected = [0.06458933217605743, 0.07864261604649185, 0.8567680517774509]
    np.testing.assert_allclose(probs[0], expected, rtol=1e-13)
    assert openmax_score(logits, fit)[0] == pytest.approx(1 - 0.8567680517774509, rel=1e-12)


def test_half_rank_weights_as_kims_cifar_code():
    # Kim et al.'s CIFAR setting weights both top-α classes by 0.5:
    # v̂0 = 3 (1 − w0 / 2), v̂1 = 1 (1 − w1 / 2)
    probs = openmax_probabilities(np.array([[3.0, 1.0]]), toy_fit("half"))
    expected = [0.4302944418732481, 0.14321358660948522, 0.42649197151726653]
    np.testing.assert_allclose(probs[0], expected, rtol=1e-13)


def test_translated_weibull_cdf_as_libmr():
    # libMR: t = d + translate − small_score; at t = scale the CDF is 1 − 1/e
    tail = WeibullTail(shape=3.0, scale=10_000.5, small_score=0.5, translate=10_000.0)
    np.testing.assert_allclose(tail.cdf([1.0, -20_000.0]), [1 - math.exp(-1), 0.0], rtol=1e-15)


def test_fit_high_uses_the_largest_distances_and_the_mle():
    rng = np.random.default_rng(0)
    d = rng.gamma(2.0, size=200)
    tail = fit_weibull_high(d, 20)
    top = np.sort(d)[-20:]
    assert tail.small_score == top[0]
    shape, _, scale = weibull_min.fit(top + 10_000.0 - top[0], floc=0)
    assert tail.shape == pytest.approx(shape, rel=1e-4)
    assert tail.scale == pytest.approx(scale, rel=1e-9)
    plain = fit_weibull_high(d, 30, translate=1.0)
    shape, _, scale = weibull_min.fit(np.sort(d)[-30:] - np.sort(d)[-30] + 1.0, floc=0)
    assert plain.shape == pytest.approx(shape, rel=1e-4)
    assert plain.scale == pytest.approx(scale, rel=1e-4)
    with pytest.raises(ValueError, match="distinct"):
        fit_weibull_high(np.ones(5), 3)
    with pytest.raises(ValueError, match="translate"):
        fit_weibull_high(d, 3, translate=0.0)


def test_fit_uses_correctly_classified_training_samples_only():
    logits = np.array(
        [[2.0, 0.0], [4.0, 0.0], [3.0, 1.0], [0.0, 1.0], [0.0, 2.0], [0.0, 6.0], [5.0, 0.0]]
    )
    labels = np.array([0, 0, 0, 1, 1, 1, 1])  # the last one is misclassified
    fit = fit_openmax(logits, labels, OpenMaxParams(tail_size=3, distance="euclidean"))
    np.testing.assert_allclose(fit.mavs, [[3.0, 1 / 3], [0.0, 3.0]])
    assert fit.tails[1].small_score == 1.0  # distances 2, 1, 3 to (0, 3)


def test_a_class_without_a_correct_training_sample_is_left_unrevised():
    # class 1's only sample (3, 1) is predicted 0: class 1 gets no MAV and no Weibull, and a
    # warning names it; class 0 keeps its model
    logits = np.array([[2.0, 0.0], [4.0, 0.0], [5.0, 0.0], [3.0, 1.0]])
    params = OpenMaxParams(tail_size=3, alpha=2, distance="euclidean")
    with pytest.warns(RuntimeWarning, match="class 1 has no correctly classified"):
        fit = fit_openmax(logits, np.array([0, 0, 0, 1]), params)
    assert fit.unmodelled == (1,)
    assert np.isnan(fit.mavs[1]).all() and fit.tails[1] is None
    np.testing.assert_allclose(fit.mavs[0], [11 / 3, 0.0])
    # class 1's activation is kept (w_1 = 0); class 0's is revised with its rank weight,
    # 1/2 in the first row (ranked second of α = 2), 1 in the second (ranked first)
    v = np.array([[1.0, 2.0], [6.0, 0.0]])
    w0 = fit.tails[0].cdf(np.linalg.norm(v - fit.mavs[0], axis=1))
    assert np.all(w0 > 0)
    scaled = np.column_stack([v[:, 0] * (1 - np.array([0.5, 1.0]) * w0), v[:, 1]])
    unknown = v[:, 0] - scaled[:, 0]
    expected = np.exp(np.column_stack([scaled, unknown]))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(openmax_probabilities(v, fit), expected, rtol=1e-13)


def test_a_class_with_one_correct_training_sample_has_no_weibull():
    # one correct sample: its distance to its own MAV is 0, no Weibull fits; the MAV is kept
    logits = np.array([[2.0, 0.0], [4.0, 0.0], [5.0, 0.0], [0.0, 1.0]])
    params = OpenMaxParams(tail_size=3, distance="euclidean")
    with pytest.warns(RuntimeWarning, match="class 1 has 1 correctly classified"):
        fit = fit_openmax(logits, np.array([0, 0, 0, 1]), params)
    np.testing.assert_array_equal(fit.mavs[1], [0.0, 1.0])
    assert fit.unmodelled == (1,)


def test_fit_refuses_when_no_class_has_a_model():
    with pytest.raises(ValueError, match="no class to model: class 0 has no correctly"):
        fit_openmax(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0, 1]))


def test_distances():
    v = np.array([[3.0, 4.0]])
    mav = np.array([3.0, 0.0])
    assert openmax_distances(v, mav, distance="euclidean")[0] == pytest.approx(4.0)
    assert openmax_distances(v, mav, distance="cosine")[0] == pytest.approx(1 - 9 / 15)
    eucos = openmax_distances(v, mav, distance="eucos", eu_weight=0.5)[0]
    assert eucos == pytest.approx(2.0 + 1 - 9 / 15)


def test_params_are_validated():
    with pytest.raises(ValueError, match="tail_size"):
        OpenMaxParams(tail_size=1)
    with pytest.raises(ValueError, match="distance"):
        OpenMaxParams(distance="manhattan")
    with pytest.raises(ValueError, match="alpha"):
        OpenMaxParams(alpha=0)


def test_registry_computes_openmax_only_when_asked():
    rng = np.random.default_rng(1)
    train_logits = rng.normal(size=(300, 3)) * 2
    train_labels = train_logits.argmax(axis=1)
    train_labels[:10] = (train_labels[:10] + 1) % 3
    test_logits = rng.normal(size=(40, 3))
    run = RunOutputs(
        {
            "train": SplitOutputs(train_labels, train_logits, kind="train"),
            "iid": SplitOutputs(test_logits.argmax(axis=1), test_logits),
        }
    )
    assert "OpenMax" not in compute_csfs(run, "iid")
    params = OpenMaxParams(tail_size=10, alpha=2)
    scores = compute_csfs(run, "iid", openmax=params)["OpenMax"]
    fit = fit_openmax(train_logits, train_labels, params)
    np.testing.assert_array_equal(scores, openmax_score(test_logits, fit))
    assert np.all((scores > 0) & (scores <= 1))


def test_score_is_a_probability_when_the_unknown_class_underflows(monkeypatch):
    # log-probabilities whose known part rounds above 0: exp would give 1 + 4 ulp
    from fdbench.csf import openmax

    rounded = np.array([[5e-16, -np.inf, -np.inf], [np.log(0.25), np.log(0.25), np.log(0.5)]])
    monkeypatch.setattr(openmax, "_openmax_log_probabilities", lambda logits, fit: rounded)
    score = openmax_score(np.zeros((2, 2)), toy_fit())
    assert score[0] == 1.0
    assert score[1] == pytest.approx(0.5, rel=1e-15)


def test_weibull_cdf_of_a_huge_power_is_one_without_a_warning():
    import warnings

    tail = WeibullTail(shape=400.0, scale=1.0, small_score=0.0, translate=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = tail.cdf([0.0, 0.5, 1e3])
    assert scores[0] == 0.0 and 0.0 <= scores[1] < 1e-100 and scores[2] == 1.0
