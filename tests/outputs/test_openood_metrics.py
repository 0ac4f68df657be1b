"""An OpenOOD ``scores/`` folder evaluated by fdbench gives OpenOOD's AUROC and, under the
OOD-positive name ``fpr@95tpr_ood_positive``, its FPR@95.

OpenOOD's computation is ported from ``auc_and_fpr_recall`` and ``compute_all_metrics`` of
``openood/evaluators/metrics.py`` (Jingkang50/OpenOOD v1.5), which ``OODEvaluator`` calls on
the concatenation of the in-distribution test scores and one OOD set's scores.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from fdbench.evaluation.tables import evaluate_table
from fdbench.outputs import read_score_dump
from tests._cli import run_cli


def openood_auroc_fpr(conf, label, tpr_th=0.95):
    ood_indicator = np.zeros_like(label)
    ood_indicator[label == -1] = 1
    fpr_list, tpr_list, _ = skm.roc_curve(ood_indicator, -conf)
    fpr = fpr_list[np.argmax(tpr_list >= tpr_th)]
    auroc = skm.auc(fpr_list, tpr_list)
    return auroc, fpr


def _scores_folder(folder, rng):
    """OpenOOD's ``scores/``: ``np.savez(name, pred=, conf=, label=)`` per data set, with
    confidences rounded to 2 decimals (ties, as softmax outputs have)."""
    folder.mkdir()
    label = rng.integers(0, 5, 400)
    pred = np.where(rng.random(400) < 0.8, label, (label + 1) % 5)
    conf = np.round(rng.beta(5, 2, 400), 2)
    np.savez(folder / "cifar10", pred=pred, conf=conf, label=label)
    for name, a in (("svhn", 2.0), ("tin", 4.0)):
        np.savez(folder / name, pred=rng.integers(0, 5, 150),
                 conf=np.round(rng.beta(a, 2, 150), 2), label=np.full(150, -1))  # fmt: skip
    return folder


def _expected(folder, ood_name):
    iid = np.load(folder / "cifar10.npz")
    ood = np.load(folder / f"{ood_name}.npz")
    conf = np.concatenate([iid["conf"], ood["conf"]])
    label = np.concatenate([iid["label"], ood["label"]])
    return openood_auroc_fpr(conf, label)


def _value(rows, study, metric):
    part = rows[(rows.study == study) & (rows.metric == metric) & (rows.csf == "conf")]
    return part["value"].item()


def test_unknown_detection_protocol_gives_openoods_numbers(tmp_path):
    folder = _scores_folder(tmp_path / "scores", np.random.default_rng(0))
    rows = evaluate_table(
        read_score_dump(folder),
        protocol="unknown_detection",
        conventions=("fpr@95tpr_ood_positive",),
    )
    for name in ("svhn", "tin"):
        auroc, fpr = _expected(folder, name)
        assert _value(rows, name, "auroc_out") == pytest.approx(auroc, abs=1e-12)
        assert _value(rows, name, "fpr@95tpr_ood_positive") == pytest.approx(fpr, abs=1e-12)
        # fdbench's own name keeps in-distribution samples positive: another number
        assert abs(_value(rows, name, "fpr@95tpr_out") - fpr) > 1e-3


def test_cli_reports_the_ood_positive_fpr_for_openood_dumps(tmp_path):
    folder = _scores_folder(tmp_path / "scores", np.random.default_rng(1))
    out = tmp_path / "r.csv"
    result = run_cli("evaluate", str(folder), "--protocol", "unknown_detection", "--out", str(out))
    assert result.returncode == 0, result.stderr
    rows = pd.read_csv(out)
    auroc, fpr = _expected(folder, "svhn")
    assert _value(rows, "svhn", "auroc_out") == pytest.approx(auroc, abs=1e-12)
    assert _value(rows, "svhn", "fpr@95tpr_ood_positive") == pytest.approx(fpr, abs=1e-12)
    bad = run_cli("evaluate", str(folder), "--convention", "aurc_galil")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "--convention" in bad.stderr and "aurc_per_sample" in bad.stderr
