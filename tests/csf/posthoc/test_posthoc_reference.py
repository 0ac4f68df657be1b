"""Every post-hoc score against a transcription of the authors' / OpenOOD's code (torch,
scipy, sklearn, per-sample loops) on random stored outputs."""

import numpy as np
import pytest
import scipy.stats
import torch
import torch.nn.functional as F
from scipy.special import logsumexp
from sklearn.covariance import EmpiricalCovariance
from sklearn.metrics import pairwise_distances_argmin_min

from fdbench.csf.posthoc import PostHocInputs, posthoc_score

from .conftest import make_run

RUN = make_run(seed=3)
W, B = RUN.meta["fc_weight"], RUN.meta["fc_bias"]
TRAIN, VAL, TEST = RUN.splits["train"], RUN.splits["val"], RUN.splits["iid"]
H, Z = TEST.features, TEST.logits


def score(name, **params):
    return posthoc_score(name).compute(PostHocInputs(RUN), "iid", **params)


def energy_of(features):
    return torch.logsumexp(torch.from_numpy(features @ W.T + B), dim=1).numpy()


def openood_topk(x, percentile):
    """ash_net.py's pruning on a (B, D, 1, 1) view: keep the top k, zero the rest."""
    t = torch.from_numpy(x.copy())
    n = t.shape[1]
    k = n - int(np.round(n * percentile / 100.0))
    v, i = torch.topk(t, k, dim=1)
    return torch.zeros_like(t).scatter_(1, i, v), k


@pytest.mark.parametrize(("gamma", "m"), [(0.1, 100), (2.0, 2), (0.5, 3)])
def test_gen_matches_openood(gamma, m):
    probs = torch.softmax(torch.from_numpy(Z), dim=1)
    top = torch.sort(probs, dim=1)[0][:, -m:]
    expected = -torch.sum(top**gamma * (1 - top) ** gamma, dim=1).numpy()
    np.testing.assert_allclose(score("GEN", gamma=gamma, m=m), expected, rtol=1e-12)


@pytest.mark.parametrize("percentile", [85, 99])
def test_react_matches_openood(percentile):
    threshold = np.percentile(VAL.features.flatten(), percentile)
    expected = energy_of(np.clip(H, None, threshold))
    np.testing.assert_allclose(score("ReAct", percentile=percentile), expected, rtol=1e-12)


@pytest.mark.parametrize("percentile", [65, 90])
def test_ash_variants_match_openood(percentile):
    pruned, k = openood_topk(H, percentile)
    s1 = torch.from_numpy(H).sum(1)
    mask = (pruned != 0).double()
    ash_b = mask * (s1 / k)[:, None]
    ash_s = pruned * torch.exp(s1 / pruned.sum(1))[:, None]
    for name, shaped in (
        ("ASH-P-penult", pruned),
        ("ASH-B-penult", ash_b),
        ("ASH-S-penult", ash_s),
    ):
        expected = energy_of(shaped.numpy())
        np.testing.assert_allclose(score(name, percentile=percentile), expected, rtol=1e-12)


@pytest.mark.parametrize("percentile", [65, 85])
def test_scale_matches_openood(percentile):
    pruned, _ = openood_topk(H, percentile)
    x = torch.from_numpy(H)
    expected = energy_of((x * torch.exp(x.sum(1) / pruned.sum(1))[:, None]).numpy())
    np.testing.assert_allclose(score("SCALE", percentile=percentile), expected, rtol=1e-12)


@pytest.mark.parametrize("p", [10, 90])
def test_dice_matches_openood(p):
    mean_act = TRAIN.features.mean(0)
    contrib = mean_act[None, :] * W
    masked = W * (contrib > np.percentile(contrib, p))
    vote = H[:, None, :] * masked
    expected = logsumexp(vote.sum(2) + B, axis=1)
    np.testing.assert_allclose(score("DICE", p=p), expected, rtol=1e-12)


def test_klm_matches_openood():
    val_probs = torch.softmax(torch.from_numpy(VAL.logits), 1)
    preds = VAL.logits.argmax(1)
    templates = []
    for c in range(Z.shape[1]):
        if np.sum(preds == c) == 0:
            templates.append(np.eye(Z.shape[1])[c])
        else:
            templates.append(val_probs[preds == c].mean(0).numpy())
    softmax = torch.softmax(torch.from_numpy(Z), 1).numpy()
    kl = lambda p, q: scipy.stats.entropy(p, q)  # noqa: E731
    expected = -pairwise_distances_argmin_min(softmax, np.array(templates), metric=kl)[1]
    np.testing.assert_allclose(score("KLM"), expected, rtol=1e-10)


def test_gradnorm_matches_backpropagation():
    fc = torch.nn.Linear(W.shape[1], W.shape[0]).double()
    fc.weight.data[...] = torch.from_numpy(W)
    fc.bias.data[...] = torch.from_numpy(B)
    targets = torch.ones((1, W.shape[0]), dtype=torch.float64)
    expected = []
    for row in torch.from_numpy(H):
        fc.zero_grad()
        loss = torch.mean(torch.sum(-targets * F.log_softmax(fc(row[None]), dim=-1), dim=-1))
        loss.backward()
        expected.append(torch.sum(torch.abs(fc.weight.grad.data)).item())
    np.testing.assert_allclose(score("GradNorm"), expected, rtol=1e-10)


def openood_residual(fit_features, dim):
    u = -np.matmul(np.linalg.pinv(W), B)
    ec = EmpiricalCovariance(assume_centered=True)
    ec.fit(fit_features - u)
    eig_vals, eigen_vectors = np.linalg.eig(ec.covariance_)
    ns = np.ascontiguousarray((eigen_vectors.T[np.argsort(eig_vals * -1)[dim:]]).T)
    return lambda x: -np.linalg.norm(np.matmul(x - u, ns), axis=-1)


@pytest.mark.parametrize("fraction", [0.25, 0.5])
def test_residual_matches_openood(fraction):
    dim = round(fraction * H.shape[1])
    expected = openood_residual(VAL.features, dim)(H)
    np.testing.assert_allclose(score("Residual", dim_fraction=fraction), expected, rtol=1e-8)


def test_rmds_matches_openood():
    feats, labels = torch.from_numpy(TRAIN.features), torch.from_numpy(TRAIN.labels)
    k = Z.shape[1]
    means = [feats[labels.eq(c)].mean(0) for c in range(k)]
    centred = torch.cat([feats[labels.eq(c)] - means[c].view(1, -1) for c in range(k)])
    precision = torch.from_numpy(EmpiricalCovariance().fit(centred.numpy()).precision_)
    whole_mean = feats.mean(0)
    whole_precision = torch.from_numpy(
        EmpiricalCovariance().fit((feats - whole_mean).numpy()).precision_
    )
    x = torch.from_numpy(H)
    t1 = x - whole_mean
    background = -torch.matmul(torch.matmul(t1, whole_precision), t1.t()).diag()
    class_scores = torch.zeros((x.shape[0], k), dtype=torch.float64)
    for c in range(k):
        t = x - means[c].view(1, -1)
        class_scores[:, c] = -torch.matmul(torch.matmul(t, precision), t.t()).diag() - background
    expected = torch.max(class_scores, dim=1)[0].numpy()
    np.testing.assert_allclose(score("RMDS"), expected, rtol=1e-7)


@pytest.mark.parametrize("distance", [True, False])
def test_fdbd_matches_openood(distance):
    k = W.shape[0]
    denominator = np.zeros((k, k))
    for p in range(k):
        norms = np.linalg.norm(W - W[p, :], axis=1)
        norms[p] = 1
        denominator[p, :] = norms
    output = torch.from_numpy(H @ W.T + B)
    values, nn_idx = output.max(1)
    logits_sub = torch.abs(output - values.repeat(k, 1).T)
    feature = torch.from_numpy(H)
    norm = feature - torch.from_numpy(TRAIN.features.mean(0)) if distance else feature
    expected = (
        torch.sum(logits_sub / torch.from_numpy(denominator)[nn_idx], axis=1)
        / torch.norm(norm, dim=1)
    ).numpy()
    np.testing.assert_allclose(score("fDBD", distance_as_normalizer=distance), expected, rtol=1e-10)


def authors_sirc(s1, s2, a, b):
    soft = torch.from_numpy(1 - s1).log()
    additional = torch.logaddexp(
        torch.zeros(len(s2), dtype=torch.float64), -b * (torch.from_numpy(s2) - a)
    )
    return (-soft - additional).numpy()


def test_sirc_matches_the_authors_code():
    msp = torch.softmax(torch.from_numpy(Z), 1).max(1)[0].numpy()
    train_l1 = np.abs(TRAIN.features).sum(1)
    a, b = train_l1.mean() - 3 * train_l1.std(), 1 / (train_l1.std() + 1e-12)
    expected = authors_sirc(msp, np.abs(H).sum(1), a, b)
    np.testing.assert_allclose(score("SIRC-MSR-L1"), expected, rtol=1e-9)
    res = openood_residual(TRAIN.features, 4)
    train_res = res(TRAIN.features)
    a, b = train_res.mean() - 3 * train_res.std(), 1 / (train_res.std() + 1e-12)
    expected = authors_sirc(msp, res(H), a, b)
    np.testing.assert_allclose(score("SIRC-MSR-Res", dim_fraction=0.5), expected, rtol=1e-8)


def test_margins_match_the_authors_code():
    values, _ = torch.topk(torch.from_numpy(Z), 2, axis=1)
    np.testing.assert_allclose(score("RL-conf-M"), (values[:, 0] - values[:, 1]).numpy())
    norms = np.linalg.norm(np.concatenate([W, B[:, None]], axis=1), axis=1, ord=2)
    geo, _ = torch.topk(torch.from_numpy(Z / norms[None, :]), 2, axis=1)
    np.testing.assert_allclose(score("RL-geo-M"), (geo[:, 0] - geo[:, 1]).numpy(), rtol=1e-12)


def test_she_matches_openood():
    preds = TRAIN.logits.argmax(1)
    patterns = np.stack(
        [TRAIN.features[(TRAIN.labels == c) & (preds == c)].mean(0) for c in range(Z.shape[1])]
    )
    expected = np.sum(H * patterns[Z.argmax(1)], axis=1)
    np.testing.assert_allclose(score("SHE"), expected, rtol=1e-12)


@pytest.mark.parametrize(("k", "alpha"), [(10, 1.0), (10, 0.1)])
def test_nnguide_matches_openood(k, alpha):
    normalizer = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True) + 1e-10  # noqa: E731
    n = int(np.ceil(alpha * len(TRAIN.labels)))
    bank_feas = normalizer(TRAIN.features[:n])
    bank_confs = logsumexp(TRAIN.logits[:n], axis=-1)
    bank_guide = bank_feas * bank_confs[:, None]
    inner = normalizer(H) @ bank_guide.T  # faiss.IndexFlatIP: the k largest inner products
    conf = np.array([np.mean(sorted(row, reverse=True)[:k]) for row in inner])
    expected = conf * logsumexp(Z, axis=-1)
    np.testing.assert_allclose(score("NNGuide", k=k, alpha=alpha), expected, rtol=1e-12)


def openood_relation(power):
    """relation_postprocessor.py: normalise, kernel = clamp(dot, 0) · (prob · prob_t), cut the
    edges ≤ 0.03, sum sign · |edge|^pow; one query row at a time."""

    def normalise(x):
        x = torch.from_numpy(x.copy())
        return x / torch.sqrt((x**2).sum(-1) + 1e-10).reshape(-1, 1)

    feat_train = normalise(TRAIN.features)
    prob_train = torch.softmax(torch.from_numpy(TRAIN.logits), dim=1)
    feat, prob = normalise(H), torch.softmax(torch.from_numpy(Z), dim=1)
    scores = []
    for i in range(feat.shape[0]):
        dot = torch.clamp(feat[i : i + 1] @ feat_train.T, min=0.0)
        rel = dot * (prob[i : i + 1] @ prob_train.T)
        rel_mask = (rel.abs() > 0.03) * rel
        scores.append((rel_mask.sign() * rel_mask.abs() ** power).sum(-1).item())
    return np.array(scores)


@pytest.mark.parametrize("power", [1, 2, 8])
def test_relation_matches_openood(power):
    expected = openood_relation(power)
    assert (expected > 0).any()
    np.testing.assert_allclose(score("Relation", power=power), expected, rtol=1e-12)
