"""SWAG moments on known weight vectors and DUQ's kernel and gradient penalty, by hand."""

import math

import pytest

torch = pytest.importorskip("torch")

from fdbench.models.duq import DUQHead, gradient_penalty  # noqa: E402
from fdbench.models.swag import SWAGMoments, bn_state, recompute_batch_norm  # noqa: E402

T = torch.float64


def test_swag_moments_of_known_vectors():
    m = SWAGMoments(2, rank=2)
    for w in ([1.0, 2.0], [3.0, 2.0], [5.0, 8.0]):
        m.collect(torch.tensor(w))
    assert m.count == 3
    torch.testing.assert_close(m.mean, torch.tensor([3.0, 4.0], dtype=T))
    # second moments (1 + 9 + 25)/3, (4 + 4 + 64)/3
    torch.testing.assert_close(m.sq_mean, torch.tensor([35 / 3, 24.0], dtype=T))
    torch.testing.assert_close(m.variance, torch.tensor([35 / 3 - 9, 8.0], dtype=T))
    # deviations from the running mean after each vector: mean (2, 2) then (3, 4); rank 2
    # keeps the last two
    torch.testing.assert_close(m.deviations, torch.tensor([[1.0, 0.0], [2.0, 4.0]], dtype=T))


def test_swag_sample_is_the_stated_combination():
    m = SWAGMoments(2, rank=3)
    for w in ([1.0, 2.0], [3.0, 2.0], [5.0, 8.0]):
        m.collect(torch.tensor(w))
    draw = m.sample(torch.Generator().manual_seed(4), scale=0.5)
    g = torch.Generator().manual_seed(4)
    z1 = torch.randn(2, generator=g, dtype=T)
    z2 = torch.randn(3, generator=g, dtype=T)
    dev = torch.tensor([[0.0, 0.0], [1.0, 0.0], [2.0, 4.0]], dtype=T)
    expected = m.mean + math.sqrt(0.5) * (m.variance.sqrt() * z1 + dev.T @ z2 / math.sqrt(2))
    torch.testing.assert_close(draw, expected)
    assert torch.equal(m.sample(torch.Generator(), scale=0.0), m.mean)


def test_swag_rejects_bad_input():
    m = SWAGMoments(2)
    with pytest.raises(ValueError, match="no weights"):
        m.sample(torch.Generator())
    with pytest.raises(ValueError, match="2 entries"):
        m.collect(torch.zeros(3))


def test_batch_norm_recomputed_as_the_cumulative_average():
    bn = torch.nn.BatchNorm1d(1)
    net = torch.nn.Sequential(bn)
    batches = [torch.tensor([[0.0], [2.0]]), torch.tensor([[4.0], [6.0], [8.0], [10.0]])]
    recompute_batch_norm(net, batches)
    # means 1 and 7 averaged over batches; unbiased variances 2 and 20/3
    torch.testing.assert_close(bn_state(net), torch.tensor([4.0, (2 + 20 / 3) / 2]))
    assert not net.training


def _duq():
    torch.manual_seed(0)
    head = DUQHead(2, 2, embedding=1, length_scale=0.5, gamma=0.9).double()
    with torch.no_grad():
        head.W.copy_(torch.tensor([[[1.0, 0.0], [0.0, 2.0]]], dtype=T))  # J=1, K=2, D=2
        head.N.copy_(torch.tensor([2.0, 4.0]))
        head.m.copy_(torch.tensor([[2.0, 4.0]]))  # centroids 1 and 1
    return head


def test_duq_kernel_by_hand():
    head = _duq()
    a = torch.tensor([[1.0, 1.0], [3.0, 0.0]], dtype=T)
    # embeddings: class 0: a_0; class 1: 2 a_1; centroids 1: K = exp(-(e - 1)² / (2 · 0.25))
    e = torch.tensor([[1.0, 2.0], [3.0, 0.0]], dtype=T)
    torch.testing.assert_close(head(a), torch.exp(-((e - 1) ** 2) / 0.5))
    head.update(a, torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=T))
    torch.testing.assert_close(head.N, torch.tensor([0.9 * 2 + 0.1, 0.9 * 4 + 0.1], dtype=T))
    expected_m = torch.tensor([[0.9 * 2 + 0.1 * 1, 0.9 * 4 + 0.1 * 0]], dtype=T)
    torch.testing.assert_close(head.m, expected_m)


def test_duq_gradient_penalty_analytic():
    head = _duq()
    x = torch.tensor([[1.0, 1.0], [3.0, 0.5]], dtype=T, requires_grad=True)
    kernels = head(x)  # features = the inputs (identity network)
    # ∂K_0/∂x = K_0 · (−(x_0 − 1)/0.25, 0); ∂K_1/∂x = K_1 · (0, −2 (2 x_1 − 1)/0.25)
    k = kernels.detach()
    grads = torch.stack([-k[:, 0] * (x[:, 0] - 1) / 0.25,
                         -k[:, 1] * 2 * (2 * x[:, 1] - 1) / 0.25], 1).detach()  # fmt: skip
    expected = ((grads.norm(dim=1) - 1) ** 2).mean()
    torch.testing.assert_close(gradient_penalty(x, kernels), expected)


def test_duq_rejects_bad_parameters():
    with pytest.raises(ValueError, match="length_scale"):
        DUQHead(2, 2, length_scale=0.0)
    with pytest.raises(ValueError, match="gamma"):
        DUQHead(2, 2, gamma=1.0)
