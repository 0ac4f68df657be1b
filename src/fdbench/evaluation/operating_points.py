"""Certified operating points of stored outputs and confidence tables (``fdbench evaluate
--operating-point``): the request, its declared calibration split, and the table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fdbench.analysis.operating_points import operating_point_table, split_operating_point_table
from fdbench.evaluation.confidences import (
    NON_TEST_SPLITS,
    SUBGROUP_COLUMN,
    TABLE_META_COLUMNS,
    _study_confidences,
    default_studies,
    split_kinds,
    splits_of,
)
from fdbench.evaluation.runs import _run_info, prediction_groups
from fdbench.evaluation.tables import _protocol_pools
from fdbench.outputs import RunOutputs

__all__ = [
    "CONFORMAL_COLUMNS",
    "OperatingPointRequest",
    "parse_operating_point",
    "run_conformal_sets",
    "run_operating_points",
    "table_operating_points",
]


@dataclass(frozen=True)
class OperatingPointRequest:
    """Target risk α, confidence 1 − δ, and the declared calibration split: a split of the
    outputs by name (``calibration="val"``: certified there, checked on every test study), or
    a fraction of each study drawn at random with ``seed`` (``calibration=0.3``: certified on
    it, checked on the disjoint rest of the study)."""

    alpha: float
    delta: float
    calibration: str | float = 0.3
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("alpha", "delta"):
            value = getattr(self, name)
            if not 0 < value < 1:
                raise ValueError(f"--operating-point: {name} must lie in (0, 1); got {value}")
        if isinstance(self.calibration, float) and not 0 < self.calibration < 1:
            raise ValueError(
                f"--operating-point: calibration must be a fraction in (0, 1) or a split name; "
                f"got {self.calibration}"
            )


def parse_operating_point(text: str, *, seed: int = 0) -> OperatingPointRequest:
    """Parse ``alpha=A,delta=D[,calibration=FRACTION|SPLIT]`` (the seed of a random split is
    ``seed``; default calibration: a random 0.3 of each study)."""
    fields: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in ("alpha", "delta", "calibration") or not value:
            raise ValueError(
                f"--operating-point: expected alpha=A,delta=D[,calibration=FRACTION|SPLIT]; "
                f"got {text!r}"
            )
        if key in fields:
            raise ValueError(f"--operating-point: {key} given twice in {text!r}")
        fields[key] = value
    missing = [k for k in ("alpha", "delta") if k not in fields]
    if missing:
        raise ValueError(f"--operating-point: {' and '.join(missing)} missing in {text!r}")
    try:
        alpha, delta = float(fields["alpha"]), float(fields["delta"])
    except ValueError as err:
        raise ValueError(
            f"--operating-point: alpha and delta must be numbers; got {text!r}"
        ) from err
    calibration: str | float = 0.3
    if "calibration" in fields:
        try:
            calibration = float(fields["calibration"])
        except ValueError:
            calibration = fields["calibration"]
    return OperatingPointRequest(alpha, delta, calibration, seed)


def _tables(
    request: OperatingPointRequest,
    labels: Mapping[str, np.ndarray],
    predictions: Mapping[str, np.ndarray],
    confidences: Mapping[str, Mapping[str, np.ndarray]],
    studies: Sequence[str],
    protocol: str,
    iid_split: str,
    pools: Mapping[str, Sequence[str]],
    subgroups: Mapping[str, np.ndarray] | None,
) -> list[pd.DataFrame]:
    samples = {}
    for study in studies:
        es, confs = _study_confidences(
            study, labels, predictions, confidences, protocol, iid_split, pools
        )
        groups = es.gather(subgroups) if subgroups else None
        samples[study] = (es.residuals, confs, groups)
    frames = []
    if isinstance(request.calibration, str):
        if request.calibration not in labels:
            raise ValueError(
                f"--operating-point: calibration split {request.calibration!r} is not in the "
                f"outputs (splits: {', '.join(labels)})"
            )
        cal, cal_confs = _study_confidences(
            request.calibration, labels, predictions, confidences, protocol, iid_split, pools
        )
        cal_groups = cal.gather(subgroups) if subgroups else None
        for csf, conf in cal_confs.items():
            tested = {s: (r, c[csf]) for s, (r, c, _) in samples.items() if csf in c}
            frames.append(
                operating_point_table(
                    (cal.residuals, conf),
                    tested,
                    request.alpha,
                    request.delta,
                    calibration_name=request.calibration,
                    calibration_groups=cal_groups,
                    study_groups={s: g for s, (_, _, g) in samples.items() if g is not None}
                    or None,
                ).assign(csf=csf)
            )
        return frames
    csfs = list(dict.fromkeys(csf for _, c, _ in samples.values() for csf in c))
    for csf in csfs:
        frames.append(
            split_operating_point_table(
                {s: (r, c[csf]) for s, (r, c, _) in samples.items() if csf in c},
                request.alpha,
                request.delta,
                calibration_fraction=request.calibration,
                seed=request.seed,
                groups={s: g for s, (_, c, g) in samples.items() if g is not None and csf in c}
                or None,
            ).assign(csf=csf)
        )
    return frames


def _finish(frames: list[pd.DataFrame], info: Mapping[str, object]) -> pd.DataFrame:
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    for key, value in reversed(list(info.items())):
        table.insert(0, key, value)
    return table


def table_operating_points(
    table: pd.DataFrame,
    request: OperatingPointRequest,
    *,
    protocol: str = "failure_detection",
    iid_split: str = "iid",
    run_info: Mapping[str, object] | None = None,
) -> pd.DataFrame:
    """Operating points of every confidence column of a table from
    :func:`fdbench.evaluation.tables.read_confidence_table`, per study, with Mondrian rows per
    ``subgroup`` value where the table has that column. Columns ``dataset``, ``method``,
    ``seed``, then :data:`fdbench.analysis.OPERATING_POINT_COLUMNS` and ``csf``."""
    csfs = [c for c in table.columns if c not in TABLE_META_COLUMNS]
    labels, predictions, confidences, subgroups = {}, {}, {}, {}
    for study, part in table.groupby("study", sort=False):
        labels[study] = part["label"].to_numpy(dtype=np.int64)
        predictions[study] = part["prediction"].to_numpy(dtype=np.int64)
        confidences[study] = {c: part[c].to_numpy(dtype=np.float64) for c in csfs}
        if SUBGROUP_COLUMN in part.columns:
            subgroups[study] = part[SUBGROUP_COLUMN].astype(str).to_numpy()
    pools = _protocol_pools(protocol, split_kinds(labels))
    studies = [s for s in [*default_studies(list(labels)), *pools] if s != request.calibration]
    frames = _tables(
        request,
        labels,
        predictions,
        confidences,
        studies,
        protocol,
        iid_split,
        pools,
        subgroups or None,
    )
    info = {"dataset": "", "method": "", "seed": 0, **(run_info or {})}
    return _finish(frames, {k: info[k] for k in ("dataset", "method", "seed")})


def run_operating_points(
    run: RunOutputs,
    request: OperatingPointRequest,
    *,
    protocol: str = "failure_detection",
    iid_split: str = "iid",
) -> pd.DataFrame:
    """Operating points of every CSF the stored outputs allow (each with its own classifier's
    failures, as :func:`fdbench.evaluation.runs.evaluate_run` scores them) on every test study,
    with Mondrian rows per group where every split used holds a ``groups`` array. Columns as
    :func:`table_operating_points`."""
    available = list(run.splits)
    kinds = {n: s.kind for n, s in run.splits.items() if n not in NON_TEST_SPLITS}
    pools = _protocol_pools(protocol, kinds)
    studies = [*default_studies(available), *pools]
    extra = [iid_split] if iid_split in run.splits else []
    if isinstance(request.calibration, str):
        extra.append(request.calibration)
    needed = list(dict.fromkeys([*splits_of(studies, available, pools=pools), *extra]))
    missing = [s for s in extra if s not in run.splits]
    if missing:
        raise ValueError(
            f"--operating-point: calibration split {missing[-1]!r} is not in the outputs "
            f"(splits: {', '.join(available)})"
        )
    stored = {s: run.splits[s].groups for s in needed}
    subgroups = stored if all(g is not None for g in stored.values()) else None
    frames = []
    for group in prediction_groups([run], needed):
        frames.extend(
            _tables(
                request,
                group.labels,
                group.predictions,
                group.confidences,
                studies,
                protocol,
                iid_split,
                pools,
                subgroups,
            )
        )
    info = {"dataset": "", "method": "", "seed": 0, **_run_info(run, False)}
    return _finish(frames, {k: info[k] for k in ("dataset", "method", "seed")})


#: Columns of :func:`run_conformal_sets`.
CONFORMAL_COLUMNS = (
    "study",
    "set_method",
    "alpha",
    "calibration",
    "coverage",
    "mean_set_size",
    "worst_class",
    "worst_class_coverage",
)


def run_conformal_sets(
    run: RunOutputs,
    request: OperatingPointRequest,
    *,
    methods: Sequence[str] = ("lac", "aps", "raps"),
) -> pd.DataFrame:
    """Split-conformal prediction sets (:func:`fdbench.metrics.conformal_sets`) at level
    1 − α from the softmax of the stored logits, beside the operating points: per
    in-distribution test study (labels >= 0) and method, the marginal coverage, the mean set
    size and the class with the lowest coverage. Calibrated on the request's declared split:
    the named split, or a random fraction of each study (the rest is its test split)."""
    from fdbench import metrics as M

    def probs(split):
        return np.exp(M.log_softmax(np.asarray(split.logits)))

    named = isinstance(request.calibration, str)
    if named and request.calibration not in run.splits:
        raise ValueError(
            f"--operating-point: calibration split {request.calibration!r} is not in the "
            f"outputs (splits: {', '.join(run.splits)})"
        )
    rows = []
    for study, split in run.splits.items():
        labels = np.asarray(split.labels)
        if study in NON_TEST_SPLITS or study == request.calibration or (labels < 0).any():
            continue
        p = probs(split)
        if named:
            cal = run.splits[request.calibration]
            cal_p, cal_y, test_p, test_y = probs(cal), np.asarray(cal.labels), p, labels
            name = request.calibration
        else:
            mask = M.calibration_split(labels.size, request.calibration, request.seed)
            cal_p, cal_y, test_p, test_y = p[mask], labels[mask], p[~mask], labels[~mask]
            name = f"random {request.calibration:g} (seed {request.seed})"
        for method in methods:
            sets = M.conformal_sets(cal_p, cal_y, test_p, request.alpha, method=method)
            per_class = M.per_class_coverage(sets, test_y)
            worst = min(per_class, key=per_class.get)
            rows.append(
                {
                    "study": study,
                    "set_method": method,
                    "alpha": request.alpha,
                    "calibration": name,
                    "coverage": M.set_coverage(sets, test_y),
                    "mean_set_size": M.mean_set_size(sets),
                    "worst_class": worst,
                    "worst_class_coverage": per_class[worst],
                }
            )
    return pd.DataFrame(rows, columns=list(CONFORMAL_COLUMNS))
