"""The headline of a benchmark: per data set the best scoring methods, the papers' reference
methods and the methods not distinguishable from the best, read from the leaderboard files.

The page shows it first (:mod:`fdbench.report.sections.headline`), the console prints it after a
run (:func:`fdbench.report.console.print_headline`); the full ranking stays one click (the
collapsed leaderboard) or one flag (``--full-ranking``) away.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fdbench.analysis.leaderboard import ALL_STUDIES, STUDY_COLUMNS
from fdbench.analysis.scoring_methods import BASELINE
from fdbench.metrics import metric_spec
from fdbench.report.selection import top_and_references

#: How many of the best scoring methods the headline shows.
TOP = 10
#: The papers' reference scoring methods, shown in the headline wherever they were run: the
#: softmax response of the cross-entropy baseline (FD-Shifts' and the AUGRC paper's reference),
#: DeepGamblers' reservation score, ConfidNet's and DeVries' own confidence.
REFERENCES = (BASELINE, "DG-Res", "ConfidNet", "DeVries")
#: The headline's column marking a method whose 95 % rank interval overlaps the best's.
TIED = "vs best"
TIED_TEXT = "≈ best"


@dataclass(frozen=True)
class Headline:
    """One data set's headline by one metric.

    ``frame``: the shown scoring methods (index), best first, with their place in the full
    ranking (``#``), mean bootstrap rank over all studies and its 95 % interval, the seed mean
    of the metric per study column (display scale: AURC-type ×1000, AUROC_f in per cent), and
    :data:`TIED`. ``tied``: every scoring method whose 95 % rank interval overlaps the best's
    (the best included), in ranking order. ``n_methods``: how many were ranked.
    """

    dataset: str
    metric: str
    frame: pd.DataFrame
    best: str
    tied: list[str]
    references: list[str]
    n_methods: int


def overall_ranking(ranks: pd.DataFrame, dataset: str, metric: str = "augrc") -> pd.DataFrame:
    """The ``all studies`` rows of ``ranks`` for ``dataset`` and ``metric``, indexed by scoring
    method, best (lowest mean rank) first."""
    mine = ranks[
        (ranks["dataset"] == dataset)
        & (ranks["metric"] == metric)
        & (ranks["study"] == ALL_STUDIES)
    ]
    return mine.set_index("scoring_method").sort_values("mean_rank", kind="stable")


def tied_with_best(overall: pd.DataFrame) -> list[str]:
    """The scoring methods of ``overall`` (:func:`overall_ranking`) whose 95 % rank interval
    ``[rank_lower, rank_upper]`` overlaps that of the best one (the best included)."""
    if overall.empty:
        return []
    best_upper = float(overall["rank_upper"].iloc[0])
    lower = overall["rank_lower"].to_numpy(np.float64)
    return [str(n) for n, lo in zip(overall.index, lower, strict=True) if lo <= best_upper]


def headline(
    summary: pd.DataFrame, ranks: pd.DataFrame, dataset: str, metric: str = "augrc", top: int = TOP
) -> Headline:
    """The headline of ``dataset`` by ``metric``: its ``top`` best scoring methods and the
    :data:`REFERENCES` that were run, from the leaderboard's seed summary and ranks
    (:func:`fdbench.report.sections.leaderboard.read_leaderboard`)."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top: expected a positive integer, got {top!r}")
    overall = overall_ranking(ranks, dataset, metric)
    if overall.empty:
        raise ValueError(f"ranks: no '{ALL_STUDIES}' rows for dataset {dataset!r}, {metric}")
    names = [str(n) for n in overall.index]
    references = [r for r in REFERENCES if r in names]
    shown = top_and_references(names, references, top)
    tied = tied_with_best(overall)
    spec = metric_spec(metric)
    scale = spec.factor(per_cent=True)
    frame = pd.DataFrame(index=pd.Index(shown, name="scoring method"))
    frame["#"] = [names.index(n) + 1 for n in shown]
    frame["mean rank"] = overall.loc[shown, "mean_rank"].to_numpy(np.float64)
    frame["95 % rank interval"] = [
        f"[{lo:.1f}, {hi:.1f}]"
        for lo, hi in overall.loc[shown, ["rank_lower", "rank_upper"]].to_numpy(np.float64)
    ]
    frame[TIED] = [TIED_TEXT if n in tied else "" for n in shown]
    rows = summary[(summary["dataset"] == dataset) & (summary["metric"] == metric)]
    present = set(rows["study"])
    columns = [c for c in STUDY_COLUMNS if c in present] + sorted(
        c for c in present if c not in STUDY_COLUMNS and c != ALL_STUDIES
    )
    for column in columns:
        means = rows[rows["study"] == column].set_index("scoring_method")["mean"]
        frame[column] = [scale * float(means.get(n, np.nan)) for n in shown]
    return Headline(str(dataset), metric, frame, names[0], tied, references, len(names))
