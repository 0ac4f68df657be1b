"""The zoo page shows tables as a reader wants them: pairs as row labels, integer ranks."""

from __future__ import annotations

import pandas as pd

from fdbench.report.zoo_page import display_frame, member_display


def test_a_pair_table_has_its_pairs_as_row_labels():
    frame = pd.DataFrame({"x": ["accuracy"], "y": ["aurc"], "members": [6], "spearman": [0.5]})
    shown = display_frame(frame)
    assert list(shown.index) == ["accuracy ~ aurc"] and shown.index.name == "pair"
    assert list(shown.columns) == ["members", "spearman"]


def test_whole_number_columns_are_integers():
    ranks = pd.DataFrame({10.0: [1.0, 2.0, 3.0], 50.0: [1.5, 1.5, 3.0]}, index=["a", "b", "c"])
    shown = display_frame(ranks)
    assert shown["10.0"].dtype.kind == "i" and shown["50.0"].dtype.kind == "f"


def test_member_display_keeps_the_key_columns():
    members = pd.DataFrame(
        {"accuracy": [0.9], "nll": [0.3], "family": ["vit"]}, index=pd.Index(["m0"], name="member")
    )
    assert list(member_display(members).columns) == ["family", "accuracy"]
