"""EDL (Sensoy et al. 2018): losses, KL term and K / S by hand; one epoch on the tiny task."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import digamma, gammaln

torch = pytest.importorskip("torch")

from fdbench.csf import compute_csfs, edl_msr, edl_uncertainty  # noqa: E402
from fdbench.outputs import read_outputs  # noqa: E402
from fdbench.training import run_training_job  # noqa: E402
from fdbench.training.methods.edl import (  # noqa: E402
    EDLParams,
    annealing_coefficient,
    dirichlet_kl_to_uniform,
    edl_loss,
    evidence,
)

ALPHA = [[2.0, 3.0, 5.0], [1.5, 1.0, 4.0]]
TARGETS = [2, 0]


def _alpha():
    return torch.tensor(ALPHA, dtype=torch.float64)


def _targets():
    return torch.tensor(TARGETS)


def _kl_by_hand(a):
    """KL(Dir(a) || Dir(1)) written out for one row."""
    s = sum(a)
    return (
        gammaln(s) - gammaln(len(a)) - sum(gammaln(x) for x in a)
        + sum((x - 1) * (digamma(x) - digamma(s)) for x in a)
    )  # fmt: skip


def test_kl_to_uniform_by_hand_and_by_entropy():
    kl = dirichlet_kl_to_uniform(_alpha()).numpy()
    np.testing.assert_allclose(kl, [_kl_by_hand(a) for a in ALPHA], rtol=1e-12)
    # KL(p || Dir(1)) = -H(p) - log Gamma(K): the density of Dir(1) is the constant (K - 1)!
    for value, a in zip(kl, ALPHA, strict=True):
        assert value == pytest.approx(-stats.dirichlet(a).entropy() - math.log(2.0), rel=1e-10)
    assert dirichlet_kl_to_uniform(torch.ones(1, 4, dtype=torch.float64)).item() == pytest.approx(
        0.0, abs=1e-12
    )


def test_type2_maximum_likelihood_by_hand():
    # sum_j y_j (log S - log alpha_j): row 0 target 2 (S = 10), row 1 target 0 (S = 6.5)
    expected = ((math.log(10) - math.log(5)) + (math.log(6.5) - math.log(1.5))) / 2
    got = edl_loss(_alpha(), _targets(), "type2_ml", 0.0).item()
    assert got == pytest.approx(expected, rel=1e-12)


def test_bayes_risk_cross_entropy_by_hand():
    expected = ((digamma(10) - digamma(5)) + (digamma(6.5) - digamma(1.5))) / 2
    got = edl_loss(_alpha(), _targets(), "bayes_ce", 0.0).item()
    assert got == pytest.approx(expected, rel=1e-12)


def test_bayes_risk_squared_error_by_hand():
    rows = []
    for a, t in zip(ALPHA, TARGETS, strict=True):
        s = sum(a)
        rows.append(
            sum((float(j == t) - x / s) ** 2 + (x / s) * (1 - x / s) / (s + 1)
                for j, x in enumerate(a))
        )  # fmt: skip
    got = edl_loss(_alpha(), _targets(), "bayes_mse", 0.0).item()
    assert got == pytest.approx(sum(rows) / 2, rel=1e-12)


@pytest.mark.parametrize("loss", ["type2_ml", "bayes_ce", "bayes_mse"])
def test_kl_term_uses_the_misleading_evidence_only(loss):
    # alpha-tilde = y + (1 - y) alpha removes the target's evidence: [2, 3, 1] and [1, 1, 4]
    kl = (_kl_by_hand([2.0, 3.0, 1.0]) + _kl_by_hand([1.0, 1.0, 4.0])) / 2
    base = edl_loss(_alpha(), _targets(), loss, 0.0).item()
    assert edl_loss(_alpha(), _targets(), loss, 0.3).item() == pytest.approx(
        base + 0.3 * kl, rel=1e-12
    )


def test_uncertainty_and_expected_msr_by_hand():
    np.testing.assert_allclose(edl_uncertainty(ALPHA), [-3 / 10, -3 / 6.5], rtol=1e-15)
    np.testing.assert_allclose(edl_msr(ALPHA), [5 / 10, 4 / 6.5], rtol=1e-15)
    with pytest.raises(ValueError, match="positive"):
        edl_msr([[1.0, 0.0]])
    with pytest.raises(ValueError, match="2-dimensional"):
        edl_uncertainty([1.0, 2.0])


def test_evidence_activations_and_annealing():
    z = torch.tensor([[-1.0, 0.5, 20.0]], dtype=torch.float64)
    np.testing.assert_allclose(evidence(z, "relu").numpy(), [[0.0, 0.5, 20.0]])
    np.testing.assert_allclose(
        evidence(z, "softplus").numpy(), [[math.log1p(math.exp(v)) for v in (-1.0, 0.5, 20.0)]]
    )
    # the exponential's input is clamped to [-10, 10], as Kim et al.'s exp_evidence
    np.testing.assert_allclose(
        evidence(z, "exp").numpy(), [[math.exp(-1.0), math.exp(0.5), math.exp(10.0)]]
    )
    with pytest.raises(ValueError, match="activation"):
        evidence(z, "tanh")
    assert [annealing_coefficient(e, 10) for e in (0, 5, 10, 30)] == [0.0, 0.5, 1.0, 1.0]
    assert annealing_coefficient(0, 0) == 1.0
    assert EDLParams() == EDLParams(activation="exp", loss="type2_ml", annealing_epochs=10)


@pytest.mark.parametrize(
    "params",
    [{}, {"activation": "relu", "loss": "bayes_mse"}, {"activation": "softplus",
                                                       "loss": "bayes_ce"}],
)  # fmt: skip
def test_edl_trains_one_epoch_and_stores_alpha(tmp_path, experiment, make_config, params):
    config = make_config(methods=[{"name": "edl", "kind": "edl", "seeds": [0], "params": params}])
    run = read_outputs(run_training_job(config, experiment, "edl", 0, tmp_path))
    iid = run.splits["iid"]
    assert list(iid.heads) == ["edl_alpha"]
    alpha = iid.heads["edl_alpha"]
    assert alpha.shape == iid.logits.shape and np.all(alpha >= 1.0)
    expected = evidence(torch.from_numpy(iid.logits), params.get("activation", "exp")) + 1.0
    np.testing.assert_allclose(alpha, expected.numpy(), rtol=1e-12)
    scores = compute_csfs(run, "iid")
    np.testing.assert_allclose(scores["EDL-Unc"], -3.0 / alpha.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(scores["EDL-MSR"], alpha.max(axis=1) / alpha.sum(axis=1))


def test_edl_learns_the_tiny_task(tmp_path, experiment, make_config):
    config = make_config(training={"epochs": 3, "batch_size": 16, "lr": 0.05, "threads": 1},
                         methods=[{"name": "m", "kind": "edl", "seeds": [0]}])  # fmt: skip
    iid = read_outputs(run_training_job(config, experiment, "m", 0, tmp_path)).splits["iid"]
    assert np.mean(iid.logits.argmax(axis=1) == iid.labels) >= 0.8
