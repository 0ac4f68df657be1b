"""The authors' code conventions (``fdbench.metrics.conventions``) against ports of the released
code and against brute-force definitions; the defaults' values on the same ties cases.

Ported code (definitions copied into this file, cited by repository and path):
- Galil et al., ICLR 2023: ``AURC_calc``, ``AUROC`` and ``coverage_for_desired_accuracy`` of
  ``utils/uncertainty_metrics.py``, IdoGalil/benchmarking-uncertainty-estimation-performance
  (commit 502812c);
- Kim et al., 2023: ``aurc_eaurc`` and its caller ``md_metrics`` of ``metrics_md.py``,
  daintlab/unknown-detection-benchmarks;
- OpenOOD v1.5: ``auc_and_fpr_recall`` of ``openood/evaluators/metrics.py``, Jingkang50/OpenOOD.
"""

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from fdbench import metrics as M
from fdbench.protocol.binary import fpr_threshold, fpr_threshold_roc_curve

from .strategies import both_classes, confidences, residuals

SETTINGS = settings(max_examples=60, deadline=None)


# ---- ports of the released code ---------------------------------------------------------


def galil_samples_certainties(confidence, correct):
    """Galil's ``benchmark_models.py``: a float32 (N, 2) tensor of (confidence, correct)."""
    return torch.stack(
        (torch.as_tensor(confidence, dtype=torch.float32), torch.as_tensor(correct).float())
    ).transpose(0, 1)


def galil_aurc_calc(samples_certainties, sort=True):
    if sort:
        indices_sorting_by_confidence = torch.argsort(samples_certainties[:, 0], descending=True)
        samples_certainties = samples_certainties[indices_sorting_by_confidence]
    total_samples = samples_certainties.shape[0]
    AURC = 0
    incorrect_num = 0
    for i in range(total_samples):
        incorrect_num += 1 - int(samples_certainties[i][1])
        AURC += incorrect_num / (i + 1)
    AURC = AURC / total_samples
    return AURC


def galil_auroc(samples_certainties, sort=True):
    if sort:
        indices_sorting_by_confidence = torch.argsort(samples_certainties[:, 0], descending=True)
        samples_certainties = samples_certainties[indices_sorting_by_confidence]
    total_samples = samples_certainties.shape[0]
    incorrect_after_i = np.zeros(total_samples)
    for i in range(total_samples - 1, -1, -1):
        if i == total_samples - 1:
            incorrect_after_i[i] = 0
        else:
            incorrect_after_i[i] = incorrect_after_i[i + 1] + (
                1 - int(samples_certainties[i + 1][1])
            )
    n_d = 0
    n_s = 0
    incorrect_before_i = 0
    for i in range(total_samples):
        if i != 0:
            incorrect_before_i += 1 - int(samples_certainties[i - 1][1])
        if samples_certainties[i][1]:
            n_s += incorrect_after_i[i]
            n_d += incorrect_before_i
        else:
            n_d += (total_samples - i - 1) - incorrect_after_i[i]
            n_s += i - incorrect_before_i
    return n_s / (n_s + n_d)


def galil_coverage_for_desired_accuracy(
    samples_certainties, accuracy=0.95, sort=False, start_index=200
):
    if sort:
        indices_sorting_by_confidence = torch.argsort(samples_certainties[:, 0], descending=True)
        samples_certainties = samples_certainties[indices_sorting_by_confidence]
    correctness = samples_certainties.transpose(0, 1)[1]
    cumsum_correctness = torch.cumsum(correctness, dim=0)
    num_samples = cumsum_correctness.shape[0] + 1
    cummean_correctness = cumsum_correctness / torch.arange(1, num_samples)
    coverage_for_accuracy = np.argmax(cummean_correctness < accuracy).item()
    coverage_for_accuracy_nonstrict = (
        np.argmax(cummean_correctness[start_index:] < accuracy).item() + start_index
    )
    if coverage_for_accuracy_nonstrict > start_index:
        coverage_for_accuracy = coverage_for_accuracy_nonstrict
    coverage_for_accuracy = coverage_for_accuracy / num_samples
    return coverage_for_accuracy


def galil_sorted(samples_certainties):
    """``benchmark_models.py`` sorts once before ``metrics_calculations``."""
    order = torch.argsort(samples_certainties[:, 0], descending=True)
    return samples_certainties[order]


def kim_aurc(scores, correct):
    conf_corr = sorted(zip(scores, correct, strict=True), key=lambda x: x[0], reverse=True)
    _, rank_corr = zip(*conf_corr, strict=True)
    risk = 0
    li_risk = []
    for i in range(len(rank_corr)):
        if rank_corr[i] == 0:
            risk += 1
        li_risk.append(risk / (i + 1))
    area = 0
    for risk_value in li_risk:
        area += risk_value * (1 / len(li_risk))
    return area


def openood_auroc_fpr(conf, label, tpr_th=0.95):
    ood_indicator = np.zeros_like(label)
    ood_indicator[label == -1] = 1
    fpr_list, tpr_list, _ = skm.roc_curve(ood_indicator, -conf)
    fpr = fpr_list[np.argmax(tpr_list >= tpr_th)]
    auroc = skm.auc(fpr_list, tpr_list)
    return auroc, fpr


def bernhardt_get_threshold(probas, targets, target_fpr):
    """``get_threshold`` of ``failure_detection/gather_results_utils.py``,
    melanibe/failure_detection_benchmark."""
    fpr, _, thres = skm.roc_curve(targets, probas[:, 1])
    return thres[np.argmin(np.abs(fpr - target_fpr))]


# ---- a saturated classifier: ties at confidence 1.0 -----------------------------------------


def saturated(n=2000, seed=0):
    """A saturated model: 60 % of the samples at confidence 1.0 (2 % of them wrong)."""
    rng = np.random.default_rng(seed)
    n_top = int(0.6 * n)
    conf = np.concatenate([np.ones(n_top), rng.uniform(0.3, 0.999, n - n_top)])
    wrong = np.concatenate([rng.random(n_top) < 0.02, rng.random(n - n_top) < 1.2 - conf[n_top:]])
    perm = rng.permutation(n)
    return wrong[perm].astype(np.float64), conf[perm].astype(np.float32)


def test_aurc_per_sample_reproduces_galils_code_on_ties():
    r, c = saturated()
    sc = galil_samples_certainties(c, 1 - r)
    expected = galil_aurc_calc(sc)
    assert M.aurc_per_sample(r, c, tie_order="torch") == pytest.approx(expected, abs=1e-12)
    # the default (tie groups, end point) is another number on the same data
    assert M.aurc(r, c) != pytest.approx(expected, abs=1e-4)
    assert M.aurc(r, c) == pytest.approx(brute_aurc_tie_groups(r, c), abs=1e-12)


def test_aurc_per_sample_reproduces_kims_code_on_ties():
    r, c = saturated(seed=1)
    expected = kim_aurc(c.tolist(), (1 - r).tolist())
    assert M.aurc_per_sample(r, c) == pytest.approx(expected, abs=1e-12)
    assert abs(M.aurc(r, c) - expected) > 1e-4


def test_auroc_f_ordered_reproduces_galils_code_on_ties():
    r, c = saturated(n=600, seed=2)
    sc = galil_samples_certainties(c, 1 - r)
    expected = galil_auroc(sc)
    assert M.auroc_f_ordered(r, c, tie_order="torch") == pytest.approx(expected, abs=1e-12)
    assert M.auroc_f(r, c) == pytest.approx(skm.roc_auc_score(1 - r, c), abs=1e-12)
    assert abs(M.auroc_f(r, c) - expected) > 1e-4


def test_first_drop_reproduces_galils_code_on_ties():
    r, c = saturated(n=3000, seed=3)
    sc = galil_sorted(galil_samples_certainties(c, 1 - r))
    for accuracy in (0.99, 0.95, 0.9):
        expected = galil_coverage_for_desired_accuracy(sc, accuracy=accuracy, start_index=200)
        got = M.coverage_at_accuracy_first_drop(r, c, accuracy, tie_order="torch")
        assert got == pytest.approx(expected, abs=1e-12)
    # the paper's definition: the largest coverage whose selective risk is within the target
    default = M.coverage_at_risk(r, c, 0.01)
    assert default != pytest.approx(galil_coverage_for_desired_accuracy(sc, 0.99), abs=1e-4)


def test_roc_curve_threshold_reproduces_bernhardts_code():
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    labels = np.array([1, 0, 0, 0, 0, 0])
    probas = np.stack([1 - scores, scores], axis=1)
    assert bernhardt_get_threshold(probas, labels, 0.2) == np.inf
    assert fpr_threshold_roc_curve(scores, labels, 0.2) == np.inf
    assert fpr_threshold(scores, labels, 0.2) == 0.8


@SETTINGS
@given(st.data())
def test_roc_curve_threshold_against_sklearn(data):
    n = data.draw(st.integers(2, 30))
    scores = data.draw(confidences(n))
    labels = data.draw(st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n))
    labels = np.array(labels)
    assume(labels.min() == 0 and labels.max() == 1)
    target = data.draw(st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0]))
    probas = np.stack([1 - scores, scores], axis=1)
    assert fpr_threshold_roc_curve(scores, labels, target) == bernhardt_get_threshold(
        probas, labels, target
    )


def test_openood_fpr_is_ood_positive():
    rng = np.random.default_rng(4)
    conf = np.round(np.concatenate([rng.normal(1, 1, 300), rng.normal(0, 1, 200)]), 1)
    label = np.concatenate([rng.integers(0, 10, 300), -np.ones(200, dtype=np.int64)])
    is_ood = (label == -1).astype(float)
    auroc, fpr = openood_auroc_fpr(conf, label)
    assert M.fpr_at_tpr_ood_positive(is_ood, conf) == pytest.approx(fpr, abs=1e-12)
    assert M.auroc_out(is_ood, conf) == pytest.approx(auroc, abs=1e-12)
    assert abs(M.fpr_at_tpr_out(is_ood, conf) - fpr) > 1e-3


# ---- brute-force definitions ----------------------------------------------------------------


def brute_aurc_tie_groups(r, c):
    taus = sorted(set(c.tolist()))
    pts = []
    for tau in taus:
        acc = [i for i in range(len(c)) if c[i] >= tau]
        pts.append((len(acc) / len(c), sum(r[i] for i in acc) / len(acc)))
    pts.append((0.0, pts[-1][1]))
    return sum(
        (pts[k][0] - pts[k + 1][0]) * (pts[k][1] + pts[k + 1][1]) / 2 for k in range(len(pts) - 1)
    )


def stable_positions(c):
    """Brute-force stable descending order: by confidence, ties by input index."""
    return sorted(range(len(c)), key=lambda i: (-c[i], i))


def brute_aurc_per_sample(r, c):
    order = stable_positions(c)
    return sum(sum(r[j] for j in order[: i + 1]) / (i + 1) for i in range(len(c))) / len(c)


def brute_auroc_ordered(r, c):
    pos = {i: k for k, i in enumerate(stable_positions(c))}
    ok = [i for i in range(len(r)) if r[i] == 0]
    bad = [i for i in range(len(r)) if r[i] == 1]
    return sum(pos[i] < pos[j] for i in ok for j in bad) / (len(ok) * len(bad))


def brute_first_drop(r, c, target, start):
    order = stable_positions(c)
    acc = [sum(1 - r[j] for j in order[: i + 1]) / (i + 1) for i in range(len(c))]
    first = next((i for i in range(len(acc)) if acc[i] < target), 0)
    after = next((i for i in range(start, len(acc)) if acc[i] < target), start)
    return (after if after > start else first) / (len(c) + 1)


def brute_fpr_ood_positive(is_ood, c, tpr):
    n_ood = sum(is_ood)
    n_id = len(is_ood) - n_ood
    best = None
    for t in set(c.tolist()):
        flagged = [i for i in range(len(c)) if c[i] <= t]
        if sum(is_ood[i] for i in flagged) / n_ood >= tpr:
            fpr = sum(1 - is_ood[i] for i in flagged) / n_id
            best = fpr if best is None else min(best, fpr)
    return best


@SETTINGS
@given(st.data())
def test_per_sample_conventions_against_brute_force(data):
    n = data.draw(st.integers(1, 25))
    r = data.draw(residuals(n, "binary"))
    c = data.draw(confidences(n))
    assert M.aurc_per_sample(r, c) == pytest.approx(brute_aurc_per_sample(r, c), abs=1e-12)
    if both_classes(r):
        assert M.auroc_f_ordered(r, c) == pytest.approx(brute_auroc_ordered(r, c), abs=1e-12)
        assert M.fpr_at_tpr_ood_positive(r, c, 0.8) == pytest.approx(
            brute_fpr_ood_positive(r, c, 0.8), abs=1e-12
        )
    start = data.draw(st.integers(0, n - 1))
    target = data.draw(st.sampled_from([0.5, 0.8, 0.99]))
    got = M.coverage_at_accuracy_first_drop(r, c, target, start_index=start)
    assert got == pytest.approx(brute_first_drop(r, c, target, start), abs=1e-12)


@SETTINGS
@given(st.data())
def test_aurc_per_sample_soft_residuals_and_no_ties(data):
    n = data.draw(st.integers(1, 25))
    r = data.draw(residuals(n, "soft"))
    c = np.arange(n, dtype=np.float64)[data.draw(st.permutations(range(n)))]
    assert M.aurc_per_sample(r, c) == pytest.approx(brute_aurc_per_sample(r, c), abs=1e-12)
    # without ties: the paper's AURC exceeds it by (r_(1) - mean residual) / (2N)
    top = r[np.argmax(c)]
    assert M.aurc(r, c) - M.aurc_per_sample(r, c) == pytest.approx(
        (top - r.mean()) / (2 * n), abs=1e-12
    )


def test_tie_order_matters_and_is_validated():
    r = np.array([1.0, 0.0])
    c = np.array([0.5, 0.5])
    assert M.aurc_per_sample(r, c) == 0.75
    assert M.aurc_per_sample(r[::-1], c) == 0.25
    assert M.aurc(r, c) == 0.5
    with pytest.raises(ValueError, match="tie_order"):
        M.aurc_per_sample(r, c, tie_order="random")
    with pytest.raises(ValueError, match="start_index"):
        M.coverage_at_accuracy_first_drop(r, c, 0.9)
    with pytest.raises(ValueError, match="residuals"):
        M.auroc_f_ordered([0.5, 0.0], c)
    with pytest.warns(M.UndefinedMetricWarning):
        assert np.isnan(M.auroc_f_ordered([0.0, 0.0], c))


def test_evaluate_conventions_matches_the_functions():
    r, c = saturated(n=500, seed=5)
    values = M.evaluate_conventions(r, c)
    assert list(values) == list(M.CONVENTION_KEYS)
    assert values["aurc_per_sample"] == M.aurc_per_sample(r, c)
    assert values["auroc_f_ordered"] == M.auroc_f_ordered(r, c)
    assert values["coverage@acc99_first_drop"] == M.coverage_at_accuracy_first_drop(r, c, 0.99)
    assert np.isnan(M.evaluate_conventions(r[:100], c[:100])["coverage@acc99_first_drop"])
    with pytest.raises(ValueError, match="conventions"):
        M.evaluate_conventions(r, c, ("aurc",))


def saturated_example():
    """The seeded saturated example of docs/metrics.md ("When ties make them differ")."""
    rng = np.random.default_rng(2026)
    n = 10_000
    top = rng.random(n) < 0.7
    conf = np.where(top, 1.0, rng.uniform(0.2, 1.0, n)).astype(np.float32)
    wrong = np.where(top, rng.random(n) < 0.005, rng.random(n) < 0.9 * (1 - conf) + 0.02)
    return wrong.astype(np.float64), conf


def test_docs_saturated_example_numbers():
    r, c = saturated_example()
    assert (c == 1).sum() == 6930 and r[c == 1].sum() == 28
    assert round(1 - r.mean(), 4) == 0.8792
    assert round(M.aurc(r, c) * 1000, 3) == 17.152
    assert round(M.aurc_per_sample(r, c) * 1000, 3) == 16.783
    best = np.lexsort((r, -c.astype(np.float64)))
    worst = np.lexsort((-r, -c.astype(np.float64)))
    assert round(M.aurc_per_sample(r[best], c[best]) * 1000, 3) == 14.364
    assert round(M.aurc_per_sample(r[worst], c[worst]) * 1000, 3) == 32.540
    assert round(M.auroc_f(r, c), 5) == 0.93634
    assert round(M.auroc_f_ordered(r, c), 5) == 0.93644
    assert round(M.coverage_at_risk(r, c, 0.01), 4) == 0.7487
    assert round(M.coverage_at_accuracy_first_drop(r, c, 0.99), 5) == 0.74863
    if torch.__version__.startswith("2.13"):
        assert round(M.aurc_per_sample(r, c, tie_order="torch") * 1000, 3) == 16.852
        assert round(M.auroc_f_ordered(r, c, tie_order="torch"), 5) == 0.93657
