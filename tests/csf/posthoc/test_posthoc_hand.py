"""Every post-hoc score against values computed by hand on tiny inputs."""

import numpy as np
import pytest

from fdbench.csf.posthoc.ash import ash_score
from fdbench.csf.posthoc.dice import dice
from fdbench.csf.posthoc.fdbd import fdbd
from fdbench.csf.posthoc.gen import gen
from fdbench.csf.posthoc.gradnorm import gradnorm
from fdbench.csf.posthoc.klm import fit_klm, klm
from fdbench.csf.posthoc.margins import rl_conf_margin, rl_geo_margin
from fdbench.csf.posthoc.react import react
from fdbench.csf.posthoc.residual import ResidualFit, residual
from fdbench.csf.posthoc.rmds import fit_rmds, rmds
from fdbench.csf.posthoc.scale import scale
from fdbench.csf.posthoc.she import fit_she, she
from fdbench.csf.posthoc.sirc import sirc, sirc_parameters

E = np.e
I2, I4 = np.eye(2), np.eye(4)
H4 = np.array([[1.0, 2.0, 3.0, 4.0]])


def test_gen_of_a_uniform_pair():
    # p = (1/2, 1/2): -(2 · (1/2)(1/2)) with γ = 1
    assert gen(np.zeros((1, 2)), gamma=1.0, m=2)[0] == pytest.approx(-0.5)
    # p = (3/4, 1/4), γ = 1, M = 1: only the largest, -(3/4)(1/4)
    assert gen(np.array([[np.log(3.0), 0.0]]), gamma=1.0, m=1)[0] == pytest.approx(-3 / 16)


def test_react_clips_before_the_energy():
    # h = (1, 3) clipped at 2, W = I: logits (1, 2)
    value = react(np.array([[1.0, 3.0]]), I2, np.zeros(2), threshold=2.0)
    assert value[0] == pytest.approx(np.log(E + E**2))


@pytest.mark.parametrize(
    ("variant", "shaped"),
    [
        ("ASH-P-penult", [0, 0, 3, 4]),
        ("ASH-B-penult", [0, 0, 5, 5]),  # s1 = 10 spread over k = 2
        ("ASH-S-penult", [0, 0, 3 * np.exp(10 / 7), 4 * np.exp(10 / 7)]),
    ],
)
def test_ash_variants_keep_the_top_half(variant, shaped):
    value = ash_score(H4, I4, np.zeros(4), percentile=50, variant=variant)
    assert value[0] == pytest.approx(np.log(np.sum(np.exp(shaped))))


def test_scale_multiplies_the_unpruned_features():
    value = scale(H4, I4, np.zeros(4), percentile=50)
    assert value[0] == pytest.approx(np.log(np.sum(np.exp(H4[0] * np.exp(10 / 7)))))


def test_dice_masks_the_small_contributions():
    # contributions m ⊙ W = [[1, 0], [0, 2]]; their 50th percentile is 0.5: W stays I
    value = dice(np.array([[1.0, 1.0]]), I2, np.zeros(2), np.array([1.0, 2.0]), p=50)
    assert value[0] == pytest.approx(np.log(2 * E))
    # p = 80: the 80th percentile is 1.4, only W_11 survives: logits (0, 1)
    value = dice(np.array([[1.0, 1.0]]), I2, np.zeros(2), np.array([1.0, 2.0]), p=80)
    assert value[0] == pytest.approx(np.log(1 + E))


def test_klm_is_the_smallest_kl_to_a_template():
    templates = np.array([[0.25, 0.75], [0.5, 0.5]])
    assert klm(np.zeros((1, 2)), templates)[0] == pytest.approx(0.0)
    only = templates[:1]
    expected = -(0.5 * np.log(0.5 / 0.25) + 0.5 * np.log(0.5 / 0.75))
    assert klm(np.zeros((1, 2)), only)[0] == pytest.approx(expected)
    # no sample predicted as class 1: its template is one-hot
    fitted = fit_klm(np.array([[np.log(3.0), 0.0], [np.log(3.0), 0.0]]))
    np.testing.assert_allclose(fitted, [[0.75, 0.25], [0.0, 1.0]])


def test_gradnorm_of_two_classes():
    # p = (3/4, 1/4): |2p - 1| sums to 1; ‖h‖₁ = 3
    assert gradnorm(np.array([[1.0, -2.0]]), np.array([[np.log(3.0), 0.0]]))[0] == pytest.approx(
        3.0
    )
    assert gradnorm(np.array([[1.0, -2.0]]), np.zeros((1, 2)))[0] == 0.0


def test_residual_is_the_norm_outside_the_kept_directions():
    fit = ResidualFit(origin=np.array([1.0, 0.0]), null_space=np.array([[0.0], [1.0]]))
    assert residual(np.array([[5.0, -3.0]]), fit)[0] == -3.0


def test_rmds_of_two_one_dimensional_classes():
    # class means -1, 1 (within variance 1); background mean 0, variance 2
    fit = fit_rmds(np.array([[-2.0], [0.0], [0.0], [2.0]]), np.array([0, 0, 1, 1]), 2)
    np.testing.assert_allclose(fit.means, [[-1.0], [1.0]])
    # h = 1: class 1 distance 0, background 1²/2
    assert rmds(np.array([[1.0]]), fit)[0] == pytest.approx(0.5)
    # a third class without a training sample has no Gaussian: the same fit
    absent = fit_rmds(np.array([[-2.0], [0.0], [0.0], [2.0]]), np.array([0, 0, 1, 1]), 3)
    np.testing.assert_allclose(absent.means, fit.means)
    assert rmds(np.array([[1.0]]), absent)[0] == pytest.approx(0.5)


def test_fdbd_divides_the_boundary_distance_by_the_feature_distance():
    h = np.array([[1.0, 0.0]])
    assert fdbd(h, I2, np.zeros(2), None)[0] == pytest.approx(1 / np.sqrt(2))
    # distance to the train mean (0, 1) is √2
    assert fdbd(h, I2, np.zeros(2), np.array([0.0, 1.0]))[0] == pytest.approx(0.5)


def test_sirc_at_the_tail_point():
    # MSR 1/2: -log(1/2); S2 = a: -log 2
    assert sirc(np.zeros((1, 2)), np.array([3.0]), a=3.0, b=1.0)[0] == pytest.approx(0.0)
    a, b = sirc_parameters(np.array([1.0, 3.0]))
    assert (a, b) == (pytest.approx(-1.0), pytest.approx(1.0))


def test_margins():
    assert rl_conf_margin(np.array([[3.0, 1.0, 2.0]]))[0] == 1.0
    # ‖(w_c, b_c)‖ = (1, 2): z / norms = (2, 1.5)
    w = np.array([[1.0, 0.0], [0.0, np.sqrt(3.0)]])
    b = np.array([0.0, 1.0])
    assert rl_geo_margin(np.array([[2.0, 3.0]]), w, b)[0] == pytest.approx(0.5)


def test_she_is_the_inner_product_with_the_predicted_class_pattern():
    features = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [9.0, 9.0]])
    logits = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    labels = np.array([0, 0, 1, 0])  # the last is misclassified: left out
    patterns = fit_she(features, labels, logits)
    np.testing.assert_allclose(patterns, [[2.0, 0.0], [0.0, 2.0]])
    assert she(np.array([[1.0, 1.0]]), np.array([[0.0, 1.0]]), patterns)[0] == 2.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: gen(np.zeros((1, 2)), gamma=0.0),
        lambda: ash_score(H4, I4, np.zeros(4), percentile=100, variant="ASH-P-penult"),
        lambda: ash_score(H4, I4, np.zeros(4), percentile=50, variant="ASH"),
        lambda: react(H4, I2, np.zeros(2), 1.0),
        lambda: rl_conf_margin(np.zeros((2, 1))),
    ],
)
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_nnguide_by_hand():
    from fdbench.csf.posthoc.nnguide import nnguide, nnguide_bank

    # bank features (1, 0), (0, 2) with energies log 2 (logits 0, 0) and log 2
    bank = nnguide_bank(np.array([[1.0, 0.0], [0.0, 2.0]]), np.zeros((2, 2)))
    np.testing.assert_allclose(bank, np.log(2) * (np.eye(2) + 1e-10))
    # query (3, 0) normalised (1, 0); its k = 1 nearest guide: log 2; energy log 2
    value = nnguide(np.array([[3.0, 0.0]]), np.zeros((1, 2)), bank, k=1)
    assert value[0] == pytest.approx(np.log(2) ** 2, rel=1e-9)
    with pytest.raises(ValueError, match="k must"):
        nnguide(np.array([[3.0, 0.0]]), np.zeros((1, 2)), bank, k=3)


def test_relation_by_hand():
    from fdbench.csf.posthoc.relation import relation, relation_bank

    # bank: features (1, 0) and (0, 1), logits (0, 0): p_j = (1/2, 1/2) for both
    bank = relation_bank(np.eye(2), np.zeros((2, 2)))
    # query (3, 4): unit (0.6, 0.8); logits (log 3, 0): p = (3/4, 1/4); ⟨p, p_j⟩ = 1/2
    # edges 0.6 · 1/2 = 0.3 and 0.8 · 1/2 = 0.4
    query, logits = np.array([[3.0, 4.0]]), np.array([[np.log(3.0), 0.0]])
    assert relation(query, logits, bank, power=1)[0] == pytest.approx(0.7, rel=1e-9)
    assert relation(query, logits, bank, power=2)[0] == pytest.approx(0.09 + 0.16, rel=1e-9)
    # the edge 0.3 falls below a cut-off of 0.35; a negative cosine is clipped to no edge
    assert relation(query, logits, bank, power=1, threshold=0.35)[0] == pytest.approx(0.4)
    assert relation(-query, logits, bank, power=1)[0] == 0.0
    with pytest.raises(ValueError, match="power"):
        relation(query, logits, bank, power=0)
    with pytest.raises(ValueError, match="bank"):
        relation(query, np.zeros((1, 3)), bank, power=1)
