"""What a dense figure draws (issue #35): a figure that would hold more scoring methods or CSFs
than it can label draws the top k of a ranking plus the references, states that selection in its
caption and leaves every item to a table.

One rule, :func:`top_and_references`, chooses for every such figure: the headline and the
leaderboard's forest plot and significance maps (scoring methods by mean bootstrap rank), the
medical box plots (scores by seed-mean AUGRC), and the figures of each dataset × training method
(rank distributions and significance maps by mean bootstrap rank, reliability diagrams and
risk-coverage curves by :func:`csf_ranking`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

#: How many of the best a selection draws besides the references.
TOP = 10
#: The baseline CSF of a training run: the softmax response, ENS-MSR for a deep ensemble.
BASELINE_CSFS = ("MSR", "ENS-MSR")
#: The metrics that rank the CSFs of a run group in :func:`csf_ranking`, the first one present.
RANKING_METRICS = ("augrc", "aurc")


def top_and_references(
    ranked: Sequence[str], references: Iterable[str], top: int = TOP
) -> list[str]:
    """The first ``top`` of ``ranked`` (best first) and every one of ``references`` ranked
    below them, in ranking order."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top: expected a positive integer, got {top!r}")
    wanted = set(references)
    ranked = [str(name) for name in ranked]
    return ranked[:top] + [name for name in ranked[top:] if name in wanted]


@dataclass(frozen=True)
class Selection:
    """The items a figure draws (``shown``, in ranking order) out of ``total`` ranked by
    ``by``: the ``top`` best and the ``references`` that were ranked."""

    shown: list[str]
    total: int
    top: int
    by: str
    references: list[str]

    @property
    def partial(self) -> bool:
        """Whether the figure leaves some items out."""
        return len(self.shown) < self.total

    def caption(self, noun: str = "CSFs") -> str:
        """The selection in words: ``all N <noun>``, or ``the top k of N <noun> by <by>, plus
        the references A, B`` (``the reference A`` for one)."""
        if not self.partial:
            return f"all {self.total} {noun}"
        text = f"the top {self.top} of {self.total} {noun} by {self.by}"
        if self.references:
            noun = "references" if len(self.references) > 1 else "reference"
            text += f", plus the {noun} " + ", ".join(self.references)
        return text


def select(ranked: Sequence[str], references: Iterable[str], by: str, top: int = TOP) -> Selection:
    """:func:`top_and_references` of ``ranked`` as a :class:`Selection` (``by``: what ranks
    them, for the caption)."""
    ranked = [str(name) for name in ranked]
    present = [name for name in dict.fromkeys(references) if name in set(ranked)]
    return Selection(top_and_references(ranked, present, top), len(ranked), top, by, present)


def csf_references(csfs: Iterable[str]) -> list[str]:
    """The references among the CSFs ``csfs`` of one training run: its own confidence, a
    learned head judged on the network's prediction (DG-Res, DeVries, ConfidNet, ...:
    :attr:`fdbench.csf.CSFSpec.head`), and its baseline (:data:`BASELINE_CSFS`)."""
    from fdbench.csf import csf_specs

    own = [s.name for s in csf_specs().values() if s.head is not None and s.judged_by != "mcd"]
    present = set(csfs)
    return [name for name in (*own, *BASELINE_CSFS) if name in present]


def csf_ranking(
    results: pd.DataFrame | None, csfs: Sequence[str], studies: Iterable[str] | None = None
) -> tuple[list[str], str | None]:
    """The CSFs ``csfs`` of one dataset × training method, best first, and what ranks them.

    On each of ``studies`` (default: every study of ``results``) the CSFs are ranked by their
    seed-mean value of the first of :data:`RANKING_METRICS` in ``results``
    (:func:`fdbench.analysis.rank_csfs`, failure-detection rows), and ordered by their mean rank
    over those studies (ties and CSFs without a value keep the order of ``csfs``, the latter
    last). Without such rows: ``csfs`` as given and ``None``.
    """
    from fdbench.analysis import rank_csfs
    from fdbench.metrics import metric_spec

    csfs = [str(c) for c in csfs]
    if results is None or results.empty:
        return csfs, None
    rows = results[results["csf"].isin(csfs)]
    if "protocol" in rows.columns:
        rows = rows[rows["protocol"] == "failure_detection"]
    if studies is not None:
        rows = rows[rows["study"].isin(set(studies))]
    metric = next((m for m in RANKING_METRICS if (rows["metric"] == m).any()), None)
    if metric is None:
        return csfs, None
    ranks = rank_csfs(rows, metric)
    n_studies = ranks["study"].nunique() if "study" in ranks.columns else 1
    mean = ranks.groupby("csf", sort=False)["rank"].mean()
    position = {c: i for i, c in enumerate(csfs)}
    known = sorted(mean.index, key=lambda c: (float(mean[c]), position[str(c)]))
    ranked = [str(c) for c in known] + [c for c in csfs if c not in mean.index]
    studies_text = "1 study" if n_studies == 1 else f"{n_studies} studies"
    return ranked, f"mean rank of the seed-mean {metric_spec(metric).label} over {studies_text}"
