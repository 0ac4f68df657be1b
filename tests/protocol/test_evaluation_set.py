"""Tests of the study assembly and filtering rules of both protocols."""

import numpy as np
import pytest

from fdbench.protocol import Protocol, build_evaluation_set

LABELS = {"iid": np.array([0, 1, 2, 1]), "new": np.array([-1, -1, -1])}
PREDS = {"iid": np.array([0, 2, 2, 1]), "new": np.array([0, 1, 1])}


def test_iid_study_residuals_are_misclassifications():
    es = build_evaluation_set("iid", LABELS, PREDS)
    np.testing.assert_array_equal(es.residuals, [0, 1, 0, 0])
    assert not es.is_new_class.any()


def test_failure_detection_drops_inlier_misclassifications():
    es = build_evaluation_set("new", LABELS, PREDS, protocol="failure_detection")
    # iid sample 1 is misclassified and removed; every new-class sample is a failure.
    np.testing.assert_array_equal(es.residuals, [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(es.is_new_class, [0, 0, 0, 1, 1, 1])
    conf = {"iid": np.array([0.9, 0.8, 0.7, 0.6]), "new": np.array([0.5, 0.4, 0.3])}
    np.testing.assert_array_equal(es.gather(conf), [0.9, 0.7, 0.6, 0.5, 0.4, 0.3])


def test_gather_without_copy_views_a_whole_split_and_copies_otherwise():
    conf = {"iid": np.array([0.9, 0.8, 0.7, 0.6]), "new": np.array([0.5, 0.4, 0.3])}
    whole = build_evaluation_set("iid", LABELS, PREDS)
    view = whole.gather(conf, copy=False)
    assert np.shares_memory(view, conf["iid"]) and not view.flags.writeable
    np.testing.assert_array_equal(view, whole.gather(conf))
    assert not np.shares_memory(whole.gather(conf), conf["iid"])
    logits = {"iid": np.arange(8.0).reshape(4, 2)}
    assert np.shares_memory(whole.gather(logits, copy=False), logits["iid"])
    for study in ("new",):  # two splits, one inlier dropped: a copy either way
        es = build_evaluation_set(study, LABELS, PREDS)
        gathered = es.gather(conf, copy=False)
        assert gathered.flags.writeable
        np.testing.assert_array_equal(gathered, [0.9, 0.7, 0.6, 0.5, 0.4, 0.3])
    dropped = build_evaluation_set("mixed", {"mixed": np.array([0, -1])}, {"mixed": [1, 0]})
    assert dropped.gather({"mixed": np.array([0.2, 0.1])}, copy=False).flags.writeable


def test_residuals_of_one_split_do_not_alias_its_inputs():
    es = build_evaluation_set("iid", LABELS, PREDS)
    assert es.residuals.dtype == np.float64 and es.residuals.flags.writeable
    np.testing.assert_array_equal(es.parts[0][1], np.arange(4))
    es.is_new_class[:] = True
    np.testing.assert_array_equal(LABELS["iid"], [0, 1, 2, 1])


def test_unknown_detection_keeps_every_sample():
    es = build_evaluation_set("new", LABELS, PREDS, protocol=Protocol.UNKNOWN_DETECTION)
    np.testing.assert_array_equal(es.residuals, [0, 1, 0, 0, 1, 1, 1])
    assert len(es) == 7


def test_mixed_study_is_not_paired():
    labels = {"mixed": np.array([0, -1, 1])}
    preds = {"mixed": np.array([1, 0, 1])}
    es = build_evaluation_set("mixed", labels, preds)
    # sample 0 is an inlier misclassification and is dropped.
    np.testing.assert_array_equal(es.residuals, [1, 0])
    assert es.parts[0][0] == "mixed"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"study": "missing"}, "not found"),
        ({"study": "new", "iid_split": "nope"}, "in-distribution split"),
        ({"study": "iid", "protocol": "other"}, "protocol must be one of"),
        ({"study": "new", "iid_split": "new"}, "holds only new-class"),
    ],
)
def test_bad_input_is_named(kwargs, match):
    study = kwargs.pop("study")
    with pytest.raises(ValueError, match=match):
        build_evaluation_set(study, LABELS, PREDS, **kwargs)
