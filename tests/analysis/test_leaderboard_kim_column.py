"""Kim et al.'s pooled ``unknown`` study as a leaderboard column, only under Kim's protocol."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt

from fdbench.analysis.leaderboard import kim_pooled_rows, seed_summary


def _results(unknown_studies: list[str]) -> pd.DataFrame:
    """Two seeds of two CE CSFs: failure-detection rows on iid and new_class/mnist, and
    unknown-detection rows on ``unknown_studies``; every value distinct."""
    rows = []
    value = iter(np.linspace(0.1, 0.9, 64))
    for seed in (0, 1):
        for csf in ("MSR", "PE"):
            for protocol, studies in (
                ("failure_detection", ["iid", "new_class/mnist"]),
                ("unknown_detection", unknown_studies),
            ):
                for study in studies:
                    rows.append(
                        {
                            "dataset": "d",
                            "method": "baseline",
                            "seed": seed,
                            "csf": csf,
                            "study": study,
                            "metric": "aurc",
                            "value": next(value),
                            "protocol": protocol,
                        }
                    )
    return pd.DataFrame(rows)


KINDS = {"baseline": "ce"}


def test_kim_protocol_adds_the_pooled_unknown_column_with_its_seed_statistics():
    results = _results(["new_class/mnist", "unknown", "near_ood", "far_ood"])
    summary = seed_summary(results, KINDS)
    assert set(summary["study"]) == {"iid", "new-class non-semantic", "unknown"}
    pooled = results[(results["protocol"] == "unknown_detection") & (results["study"] == "unknown")]
    for csf, part in pooled.groupby("csf"):
        row = summary[(summary["study"] == "unknown") & summary["scoring_method"].str.endswith(csf)]
        assert len(row) == 1
        assert row["mean"].iloc[0] == np.mean(part["value"])
        assert row["std"].iloc[0] == np.std(part["value"], ddof=1)
        assert row["n_seeds"].iloc[0] == 2
    # the unknown-detection rows of other studies and of the views stay out
    per_study = seed_summary(results, KINDS, by_column=False)
    assert set(per_study["study"]) == {"iid", "new_class/mnist", "unknown"}


def test_fdshifts_pooled_study_leaves_the_leaderboard_as_it_was():
    """Without near/far-OoD views (FD-Shifts' new-class studies pooled), the summary equals
    the one of the failure-detection rows alone: the default benchmark's files do not change."""
    results = _results(["new_class/mnist", "unknown"])
    assert not kim_pooled_rows(results).any()
    alone = results[results["protocol"] == "failure_detection"]
    for by_column in (True, False):
        pdt.assert_frame_equal(
            seed_summary(results, KINDS, by_column=by_column),
            seed_summary(alone, KINDS, by_column=by_column),
        )


def test_kim_pooled_rows_needs_a_protocol_column():
    results = _results(["unknown", "near_ood"]).drop(columns="protocol")
    assert not kim_pooled_rows(results).any()


def test_report_leaderboard_shows_the_unknown_column_and_says_it_is_not_ranked():
    from fdbench.analysis.leaderboard import ALL_STUDIES
    from fdbench.report.sections.leaderboard import _note, leaderboard_frame

    summary = seed_summary(_results(["unknown", "near_ood"]), KINDS)
    names = list(dict.fromkeys(summary["scoring_method"]))
    ranks = pd.DataFrame(
        {
            "dataset": "d",
            "study": ALL_STUDIES,
            "scoring_method": names,
            "metric": "aurc",
            "mean_rank": [1.0, 2.0],
            "rank_lower": [1.0, 1.0],
            "rank_upper": [2.0, 2.0],
        }
    )
    frame = leaderboard_frame(summary, ranks, "d", metric="aurc")
    assert list(frame.columns[:3]) == ["iid", "new-class non-semantic", "unknown"]
    note = _note(["d"], list(frame.columns))
    assert "enters neither the ranks nor all studies" in note
    assert "stores none for this pooled study" in note
    assert "enters neither" not in _note(["d"], ["iid", "new-class non-semantic"])
