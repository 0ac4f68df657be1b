"""Last-layer KFAC Laplace against brute-force dense matrices (closed-form cases)."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fdbench.models.laplace import (  # noqa: E402
    LaplaceHead,
    kfac_factors,
    log_marginal_likelihood,
    logit_variance,
    optimal_prior_precision,
    probit_log_probabilities,
    sampled_log_probabilities,
)


def _data(n=5, d=3, k=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, d, generator=g, dtype=torch.float64),
            torch.randn(n, k, generator=g, dtype=torch.float64))  # fmt: skip


def _jacobian(a):
    """∂f/∂vec(W) of f = W [a, 1] in the row-major vectorisation (K × K(D+1))."""
    return lambda k: torch.kron(torch.eye(k, dtype=torch.float64),
                                torch.cat([a, torch.ones(1, dtype=a.dtype)])[None])  # fmt: skip


def test_one_sample_kfac_is_the_exact_ggn():
    a, f = _data(n=1)
    k = f.shape[1]
    jac = _jacobian(a[0])(k)
    p = torch.softmax(f[0], 0)
    ggn = jac.T @ (torch.diag(p) - torch.outer(p, p)) @ jac
    big_a, big_g = kfac_factors(a, f)
    torch.testing.assert_close(torch.kron(big_g, big_a), ggn)


def test_factors_of_several_samples():
    a, f = _data(n=6)
    big_a, big_g = kfac_factors(a, f)
    at = torch.cat([a, torch.ones(6, 1, dtype=a.dtype)], 1)
    torch.testing.assert_close(big_a, sum(torch.outer(r, r) for r in at))
    p = torch.softmax(f, 1)
    torch.testing.assert_close(big_g, sum(torch.diag(q) - torch.outer(q, q) for q in p) / 6)


def _posterior(a, f, delta):
    big_a, big_g = kfac_factors(a, f)
    h = torch.kron(big_g, big_a)
    return big_a, big_g, torch.linalg.inv(h + delta * torch.eye(len(h), dtype=h.dtype))


def test_logit_variance_is_j_sigma_jt():
    a, f = _data(n=7)
    test, _ = _data(n=3, seed=1)
    delta = 0.37
    big_a, big_g, sigma = _posterior(a, f, delta)
    la, ua = torch.linalg.eigh(big_a)
    lg, ug = torch.linalg.eigh(big_g)
    var = logit_variance(test, ua, la, ug, lg, delta)
    for i, x in enumerate(test):
        jac = _jacobian(x)(f.shape[1])
        torch.testing.assert_close(var[i], jac @ sigma @ jac.T)


def _brute_marglik(a, f, norm, delta):
    big_a, big_g = kfac_factors(a, f)
    h = torch.kron(big_g, big_a)
    logdet = torch.linalg.slogdet(h + delta * torch.eye(len(h), dtype=h.dtype))[1]
    return float(-0.5 * (logdet - len(h) * math.log(delta) + delta * norm))


def test_prior_precision_maximises_the_marginal_likelihood():
    a, f = _data(n=20)
    norm = 2.5
    big_a, big_g = kfac_factors(a, f)
    ea, eg = torch.linalg.eigvalsh(big_a), torch.linalg.eigvalsh(big_g)
    delta = optimal_prior_precision(ea, eg, norm)
    assert log_marginal_likelihood(ea, eg, norm, delta) == pytest.approx(
        _brute_marglik(a, f, norm, delta), abs=1e-8
    )
    grid = np.exp(np.linspace(np.log(delta) - 3, np.log(delta) + 3, 601))
    values = [_brute_marglik(a, f, norm, d) for d in grid]
    assert grid[int(np.argmax(values))] == pytest.approx(delta, rel=0.011)
    for other in (delta * 0.99, delta * 1.01):
        assert _brute_marglik(a, f, norm, other) < _brute_marglik(a, f, norm, delta)


def test_probit_and_mc_predictive():
    f = torch.tensor([[2.0, 0.0, -1.0]], dtype=torch.float64)
    var = torch.diag(torch.tensor([8 / math.pi * 3, 0.0, 8 / math.pi * 8], dtype=torch.float64))
    logp = probit_log_probabilities(f, var[None])
    # κ = 1/2, 1, 1/3: softmax([1, 0, -1/3])
    scaled = torch.tensor([[1.0, 0.0, -1 / 3]], dtype=torch.float64)
    torch.testing.assert_close(logp, torch.log_softmax(scaled, 1))
    tiny = 1e-12 * torch.eye(3, dtype=torch.float64)[None]
    mc = sampled_log_probabilities(f, tiny, 5, torch.Generator().manual_seed(0))
    torch.testing.assert_close(mc, torch.log_softmax(f, 1), atol=1e-5, rtol=0)
    wide = torch.eye(3, dtype=torch.float64)[None]
    draws = sampled_log_probabilities(f, wide, 20000, torch.Generator().manual_seed(0)).exp()
    assert float(draws.sum()) == pytest.approx(1.0)
    assert float(draws[0, 0]) < float(torch.softmax(f, 1)[0, 0])  # uncertainty flattens


def test_head_fit_and_variance():
    a, f = _data(n=30, d=2, k=3)
    head = LaplaceHead(2, 3)
    head.fit(a, f, weight_norm=1.7)
    big_a, big_g = kfac_factors(a, f)
    delta = optimal_prior_precision(torch.linalg.eigvalsh(big_a), torch.linalg.eigvalsh(big_g),
                                    1.7)  # fmt: skip
    assert float(head.prior_precision) == pytest.approx(delta)
    _, _, sigma = _posterior(a, f, delta)
    jac = _jacobian(a[0])(3)
    torch.testing.assert_close(head.variance(a[:1])[0], jac @ sigma @ jac.T)
