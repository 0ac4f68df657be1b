"""The zoo's C-OOD class filter (Galil et al., App. L.1) and its ``authors_code`` option."""

from __future__ import annotations

import numpy as np
import pytest

from fdbench import metrics as M
from fdbench.csf.softmax import msr
from fdbench.zoo import discover_members, evaluate_member, parse_zoo_config
from fdbench.zoo.members import declared_val_mask
from fdbench.zoo.synthetic import make_synthetic_zoo

FAST = {"pnorm": {"t_count": 5}, "n_bootstrap": 50}


def _member(tmp_path):
    make_synthetic_zoo(tmp_path, n_members=1, n_test=300, n_ood_classes=30, mcd_members=0)
    (member,) = discover_members(tmp_path)
    return member


def _value(table, csf, study, metric):
    rows = table[(table.csf == csf) & (table.study == study) & (table.metric == metric)]
    return rows[rows.calibration == "none"]["value"].item()


def test_small_classes_are_removed_by_default_and_counted(tmp_path):
    member = _member(tmp_path)  # 20 samples per OOD class
    kept = parse_zoo_config({"name": "t", "zoo": str(tmp_path), **FAST, "cood": {"n_test": 4,
                             "n_estimation": 12}})  # fmt: skip
    table, levels = evaluate_member(member, kept)
    assert _value(table, "", "cood", "classes_removed") == 0
    assert _value(table, "", "cood", "classes_kept") == 30
    assert not levels.empty
    big = {"n_estimation": 16, "n_test": 8}  # 24 > 20: every class is too small
    removed = parse_zoo_config({"name": "t", "zoo": str(tmp_path), **FAST, "cood": big})
    table, levels = evaluate_member(member, removed)  # the zoo run warns once for all members
    assert _value(table, "", "cood", "classes_removed") == 30
    assert _value(table, "", "cood", "classes_kept") == 0
    assert levels.empty and not table["study"].str.startswith("cood/").any()
    keep = {**big, "keep_small_classes": True}
    small = parse_zoo_config({"name": "t", "zoo": str(tmp_path), **FAST, "cood": keep})
    table, levels = evaluate_member(member, small)
    assert _value(table, "", "cood", "classes_removed") == 0
    assert table["study"].str.startswith("cood/").any()


@pytest.mark.parametrize("order", ["stable", "torch"])
def test_authors_code_rows(tmp_path, order):
    member = _member(tmp_path)
    config = parse_zoo_config(
        {"name": "t", "zoo": str(tmp_path), **FAST, "authors_code": order,
         "cood": {"n_estimation": 12, "n_test": 4}}
    )  # fmt: skip
    table, _ = evaluate_member(member, config)
    with np.load(member.path) as data:
        z, y = data["test_logits"], data["test_labels"]
    val = declared_val_mask(y, config.val_fraction, config.seed)
    r = (z[~val].argmax(1) != y[~val]).astype(float)
    c = msr(z[~val])
    c = c.astype(np.float32) if order == "torch" else c
    assert _value(table, "MSR", "iid", "aurc_per_sample") == M.aurc_per_sample(
        r, c, tie_order=order
    )
    assert _value(table, "MSR", "iid", "auroc_f_ordered") == M.auroc_f_ordered(
        r, c, tie_order=order
    )
    assert _value(table, "MSR", "iid", "sac@95_first_drop") == (
        M.coverage_at_accuracy_first_drop(r, c, 0.95, tie_order=order)
    )
    plain = parse_zoo_config({"name": "t", "zoo": str(tmp_path), **FAST,
                              "cood": {"n_estimation": 12, "n_test": 4}})  # fmt: skip
    table, _ = evaluate_member(member, plain)
    assert "aurc_per_sample" not in set(table["metric"])
