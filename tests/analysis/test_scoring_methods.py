"""Tests of the scoring-method names (training method × CSF, as the papers name them)."""

import pandas as pd
import pytest

from fdbench.analysis.scoring_methods import add_scoring_method, method_kind, scoring_method_name

# The display prefixes (DG-, ConfidNet-, DeVries-) are declared by the training methods, which
# enter them when their registry is imported (as the benchmark and the report do).
pytest.importorskip("fdbench.training.methods")


@pytest.mark.parametrize(
    ("method", "csf", "name"),
    [
        ("ce", "MSR", "MSR"),
        ("ce_dropout", "MCD-PE", "MCD-PE"),
        ("ce_dropout", "TEMP-MLS", "TEMP-MLS"),
        ("ce_dropout", "Mahalanobis", "Mahalanobis"),
        ("deepgamblers", "DG-Res", "DG-Res"),
        ("deepgamblers", "PE", "DG-PE"),
        ("deepgamblers", "MCD-MSR", "DG-MCD-MSR"),
        ("confidnet", "ConfidNet", "ConfidNet"),
        ("confidnet", "MSR", "ConfidNet-MSR"),
        ("devries", "DeVries", "DeVries"),
        ("devries", "MLS", "DeVries-MLS"),
        ("ensemble(ce_dropout)", "ENS-MSR", "ENS-MSR"),
        ("ensemble(deepgamblers)", "ENS-PE", "DG-ENS-PE"),
        ("ensemble(ce_dropout)", "Mahalanobis", "ENS-Mahalanobis"),
        ("my_method", "MSR", "my_method-MSR"),
    ],
)
def test_paper_names(method, csf, name):
    assert scoring_method_name(method, csf) == name


def test_configured_kinds_win():
    assert method_kind("baseline", {"baseline": "ce"}) == "ce"
    assert scoring_method_name("dg_big", "MSR", {"dg_big": "deepgamblers"}) == "DG-MSR"
    assert method_kind("ensemble(baseline)", {"baseline": "ce"}) == "ce"


def test_bad_inputs():
    with pytest.raises(ValueError, match="csf"):
        scoring_method_name("ce", "")
    with pytest.raises(TypeError, match="method"):
        method_kind(3)


def test_add_column_and_clashes():
    table = pd.DataFrame(
        {
            "method": ["ce", "ce", "ce_dropout", "deepgamblers", "ce"],
            "csf": ["MSR", "PE", "MSR", "DG-Res", "MSR"],
        }
    )
    out = add_scoring_method(table)
    expected = ["MSR (ce)", "PE", "MSR (ce_dropout)", "DG-Res", "MSR (ce)"]
    assert list(out["scoring_method"]) == expected
    assert list(out.columns) == ["method", "csf", "scoring_method"]
    with pytest.raises(ValueError, match="csf"):
        add_scoring_method(table[["method"]])


def test_empty_table_gets_an_empty_scoring_method_column():
    import pandas as pd

    from fdbench.analysis.scoring_methods import add_scoring_method

    empty = pd.DataFrame({"method": pd.Series([], dtype=str), "csf": pd.Series([], dtype=str)})
    out = add_scoring_method(empty)
    assert list(out.columns) == ["method", "csf", "scoring_method"] and out.empty


def test_labels_of_results_without_a_method_are_the_csfs():
    # `fdbench evaluate --out results.csv` read back: the empty method column is NaN
    import numpy as np
    import pandas as pd

    from fdbench.analysis._scoring import scoring_method_labels

    table = pd.DataFrame({"method": [np.nan, np.nan], "csf": ["MSR", "PE"]}, index=[3, 7])
    labels = scoring_method_labels(table)
    assert list(labels) == ["MSR", "PE"] and list(labels.index) == [3, 7]
