"""Tables of losses compared: operating points per model and confidence, and the paired
leaderboard (ranks, paired Δ, significance) across confidence estimators and models."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fdbench.analysis import leaderboard as lb
from fdbench.analysis.operating_points import operating_point_table, split_operating_point_table
from fdbench.analysis.paired import PAIRED_METRICS, PairedSamples, paired_bootstrap
from fdbench.evaluation.confidences import SUBGROUP_COLUMN
from fdbench.evaluation.loss_tables import LOSS_TABLE_META, loss_table_groups
from fdbench.evaluation.operating_points import OperatingPointRequest

__all__ = ["loss_table_leaderboard", "loss_table_operating_points", "paired_tasks"]


def _unweighted(table: pd.DataFrame, what: str) -> None:
    if not np.all(table["weight"].to_numpy() == 1.0):
        raise ValueError(f"weight: {what} take unweighted samples; drop the weight column")


def loss_table_operating_points(
    table: pd.DataFrame, request: OperatingPointRequest, *, dataset: str = ""
) -> pd.DataFrame:
    """Certified operating points of every model and confidence of a table from
    :func:`fdbench.evaluation.loss_tables.loss_table`, per study, with Mondrian rows per
    ``subgroup`` where the table has one
    (:func:`fdbench.analysis.operating_point_table` on a named calibration study,
    :func:`fdbench.analysis.split_operating_point_table` on a random fraction of each study).
    The risk is the mean residual of the accepted samples. Returns ``dataset``, ``method``
    (the model), ``seed``, then :data:`fdbench.analysis.OPERATING_POINT_COLUMNS` and ``csf``.
    """
    _unweighted(table, "operating points")
    csfs = [c for c in table.columns if c not in LOSS_TABLE_META]
    grouped = (table[SUBGROUP_COLUMN] != "").any()
    frames = []
    for model in dict.fromkeys(table["model"]):
        samples = {}
        for _, study, part in loss_table_groups(table[table["model"] == model]):
            groups = part[SUBGROUP_COLUMN].to_numpy() if grouped else None
            samples[study] = (part["residual"].to_numpy(dtype=np.float64), part, groups)
        calibration = request.calibration
        if isinstance(calibration, str) and calibration not in samples:
            raise ValueError(
                f"--operating-point: calibration study {calibration!r} is not in the table "
                f"(studies of model {model!r}: {', '.join(samples)})"
            )
        for csf in csfs:
            tested = {
                s: (r, part[csf].to_numpy(dtype=np.float64))
                for s, (r, part, _) in samples.items()
                if s != calibration
            }
            groups = {s: g for s, (_, _, g) in samples.items() if g is not None}
            if isinstance(calibration, str):
                r, part, g = samples[calibration]
                frame = operating_point_table(
                    (r, part[csf].to_numpy(dtype=np.float64)),
                    tested,
                    request.alpha,
                    request.delta,
                    calibration_name=calibration,
                    calibration_groups=g,
                    study_groups={s: v for s, v in groups.items() if s != calibration} or None,
                )
            else:
                frame = split_operating_point_table(
                    tested,
                    request.alpha,
                    request.delta,
                    calibration_fraction=calibration,
                    seed=request.seed,
                    groups=groups or None,
                )
            info = pd.DataFrame({"dataset": dataset, "method": model, "seed": 0}, frame.index)
            frames.append(pd.concat([info, frame.assign(csf=csf)], axis=1))
    return pd.concat(frames, ignore_index=True)


def paired_tasks(table: pd.DataFrame, *, dataset: str = "") -> list[PairedSamples]:
    """The runs of a table from :func:`fdbench.evaluation.loss_tables.loss_table` as
    :class:`fdbench.analysis.PairedSamples`: one per model and study, every confidence of it.

    The models of a study are paired sample by sample: by ``sample_id`` where the table has
    one (a model's samples are placed among the ids of all models of the study, so a model
    that lacks some samples keeps the others), else by row order, which needs the same number
    of rows per model.
    """
    csfs = [c for c in table.columns if c not in LOSS_TABLE_META]
    by_id = (table["sample_id"] != "").any()
    tasks = []
    for study in dict.fromkeys(table["study"]):
        rows = table[table["study"] == study]
        ids = pd.Index(pd.unique(rows["sample_id"])) if by_id else None
        sizes = rows.groupby("model", sort=False).size()
        if not by_id and sizes.nunique() > 1:
            counts = ", ".join(f"{m!r}: {n}" for m, n in sizes.items())
            raise ValueError(
                f"study {study!r}: the models have different numbers of samples ({counts}); "
                "add a sample_id column to pair them"
            )
        for model, part in rows.groupby("model", sort=False):
            positions = ids.get_indexer(part["sample_id"]) if ids is not None else None
            tasks.append(
                PairedSamples(
                    dataset=dataset,
                    method=str(model),
                    seed=0,
                    study=str(study),
                    residuals=part["residual"].to_numpy(dtype=np.float64),
                    confidences={c: part[c].to_numpy(dtype=np.float64) for c in csfs},
                    positions=positions,
                    n_unfiltered=len(ids) if ids is not None else None,
                )
            )
    return tasks


def loss_table_leaderboard(
    table: pd.DataFrame,
    results: pd.DataFrame,
    *,
    n_bootstrap: int = 500,
    seed: int = 0,
    dataset: str = "",
) -> dict[str, pd.DataFrame]:
    """The leaderboard of every (model, confidence) of a table of losses, with the analysis
    package's leaderboard code (:mod:`fdbench.analysis.leaderboard`), as the benchmark writes it.

    The paired bootstrap (:func:`fdbench.analysis.paired_bootstrap`, samples paired across
    models by :func:`paired_tasks`) draws each study's resamples once and evaluates every
    confidence of every model on them; a scoring method is a (model, confidence) pair
    (``<model>-<confidence>``, the confidence alone for a table of one model). Metrics: AUGRC,
    AURC and, for 0/1 residuals, AUROC_f. ``results`` is :func:`evaluate_loss_table`'s table.

    Returns ``{"bootstrap", "summary", "ranks", "significance", "deltas"}``: the paired
    resamples, the values per study (:func:`fdbench.analysis.seed_summary`), the bootstrap
    ranks, the Holm-corrected significance maps and the paired Δ of every ordered pair with
    its percentile interval (``fdbench report`` reads the last four as ``leaderboard.csv``,
    ``leaderboard_ranks.csv``, ``leaderboard_significance.csv`` and ``paired_deltas.csv``).
    """
    _unweighted(table, "paired comparisons")
    if n_bootstrap < 2:
        raise ValueError(f"n_bootstrap: paired comparisons need >= 2 resamples; got {n_bootstrap}")
    residuals = table["residual"].to_numpy()
    binary = bool(np.all((residuals == 0) | (residuals == 1)))
    metrics = PAIRED_METRICS if binary else tuple(m for m in PAIRED_METRICS if m != "auroc_f")
    paired = paired_bootstrap(
        paired_tasks(table, dataset=dataset), metrics=metrics, n_resamples=n_bootstrap, seed=seed
    )
    summary = lb.seed_summary(results)
    columns = lb.column_bootstrap(paired)
    ranks = [lb.leaderboard_ranks(columns, m).assign(metric=m) for m in metrics]
    maps = [lb.leaderboard_significance(columns, m).assign(metric=m) for m in metrics]
    return {
        "bootstrap": paired,
        "summary": summary,
        "ranks": pd.concat(ranks, ignore_index=True),
        "significance": pd.concat(maps, ignore_index=True),
        "deltas": lb.paired_deltas(columns, metrics, reference=None, estimates=summary),
    }
