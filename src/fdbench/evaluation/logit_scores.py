"""The logit metrics of a study (NLL, Brier score, balanced accuracy) computed in row blocks.

:func:`fdbench.metrics.evaluate_all` computes them from a study's N × K logits; gathering those
logits in the study's order copies them (twice: the indexed parts, then their concatenation),
and the NLL and the Brier score each hold N × K temporaries. :func:`study_logit_scores` instead
reads the logits of each split in blocks of rows, keeps each sample's NLL and Brier term
(:func:`fdbench.metrics.per_sample_scores`, from one log-softmax per block) and arg-max
prediction in vectors of the study's length, and averages those vectors as
:func:`fdbench.metrics.nll`, :func:`fdbench.metrics.brier` and
:func:`fdbench.metrics.balanced_accuracy` do. The values are equal bit for bit: every term is
row-wise (a row's log-softmax and sums do not depend on the rows beside it), the vectors hold
the same terms in the same order, and the final mean is the same NumPy reduction of the same
vector, so the summation order is unchanged (``tests/evaluation/test_logit_scores.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fdbench import metrics as M
from fdbench.csf.blocks import BLOCK_BYTES, LogitTerms, row_blocks
from fdbench.protocol import EvaluationSet

__all__ = ["study_logit_scores"]


def study_logit_scores(
    es: EvaluationSet,
    labels: Mapping[str, np.ndarray],
    logits: Mapping[str, np.ndarray],
    *,
    block_bytes: int = BLOCK_BYTES,
    terms: Mapping[str, LogitTerms] | None = None,
) -> dict[str, float]:
    """``nll``, ``brier`` and ``balanced_accuracy`` of the samples of ``es`` (an
    in-distribution study: every label a class index), equal to those of
    ``fdbench.metrics.evaluate_all(..., labels=es.gather(labels), logits=es.gather(logits))``.

    ``labels`` and ``logits`` map split names to per-split arrays; each split's rows are read
    in blocks of ``block_bytes`` of logits (:func:`fdbench.csf.blocks.row_blocks`).

    ``terms`` maps split names to the :class:`fdbench.csf.blocks.LogitTerms` of their logits
    that the logit CSFs' blocks computed (the same terms, from the same log-softmax): they are
    gathered in the study's order instead, unless a label of the study is not a class index
    (then the blocks here compute and report it).
    """
    if terms is not None:
        scores = _scores_from_terms(es, labels, terms)
        if scores is not None:
            return scores
    n = len(es)
    nll_terms, brier_terms = np.empty(n), np.empty(n)
    predicted, study_labels = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    start = 0
    for split, idx in es.parts:
        z, y = np.asarray(logits[split]), np.asarray(labels[split])
        consecutive = idx.size > 0 and int(idx[-1]) - int(idx[0]) + 1 == idx.size
        for block in row_blocks(idx.size, z.shape[1] * z.itemsize, block_bytes):
            if consecutive:
                rows: slice | np.ndarray = slice(
                    int(idx[0]) + block.start, int(idx[0]) + block.stop
                )
            else:
                rows = idx[block]
            out = slice(start + block.start, start + block.stop)
            z_rows, y_rows = z[rows], y[rows]
            nll_terms[out], brier_terms[out] = M.per_sample_scores(y_rows, z_rows)
            predicted[out] = z_rows.argmax(axis=1)
            study_labels[out] = y_rows
        start += idx.size
    return {
        "nll": float(np.average(nll_terms)),
        "brier": float(np.average(brier_terms)),
        "balanced_accuracy": M.balanced_accuracy_of_predictions(study_labels, predicted),
    }


def _scores_from_terms(
    es: EvaluationSet, labels: Mapping[str, np.ndarray], terms: Mapping[str, LogitTerms]
) -> dict[str, float] | None:
    """:func:`study_logit_scores` from the splits' :class:`LogitTerms`, gathered in the
    study's order (the vectors the blocks would write); ``None`` where a term is NaN (a label
    that is not a class index)."""
    nll_terms = es.gather({split: terms[split].nll for split, _ in es.parts}, copy=False)
    if np.isnan(nll_terms).any():
        return None
    brier_terms = es.gather({split: terms[split].brier for split, _ in es.parts}, copy=False)
    predicted = es.gather({split: terms[split].predicted for split, _ in es.parts}, copy=False)
    study_labels = es.gather(
        {split: np.asarray(labels[split]) for split, _ in es.parts}, copy=False
    )
    return {
        "nll": float(np.average(nll_terms)),
        "brier": float(np.average(brier_terms)),
        "balanced_accuracy": M.balanced_accuracy_of_predictions(
            study_labels.astype(np.int64), predicted
        ),
    }
