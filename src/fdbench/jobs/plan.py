"""What a benchmark plans and what each of its evaluation jobs leaves: its configuration
validated against the training methods, the plan of jobs, and the per-sample scores file
(``scores.npz``) the report inputs are computed from."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fdbench.config import BenchmarkConfig, read_yaml, validate_config
from fdbench.core.io import verify_file
from fdbench.core.runner import Job

SCORES_FILE = "scores.npz"


@dataclass(frozen=True)
class BenchmarkPlan:
    """The jobs of a benchmark and where their files go, and the metric each CSF's grid
    candidate is selected by (:func:`fdbench.jobs.benchmark.select_candidates`), and the
    fingerprints of the splits (experiment, or experiment/run → split → fingerprint,
    :func:`fdbench.data.fingerprints.experiment_fingerprints`)."""

    training: list[Job]
    evaluation: list[Job]
    selection_metric: str = "augrc"
    fingerprints: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class StudyScores:
    """What one run yields on one study for one prediction group (``source``, see
    :func:`fdbench.evaluation.runs.prediction_groups`): residuals, each CSF's confidence, and where
    each sample comes from."""

    study: str
    source: str
    residuals: np.ndarray
    confidences: dict[str, np.ndarray]
    parts: tuple[tuple[str, np.ndarray], ...]


def write_scores(path: Path, scores: Sequence[StudyScores]) -> None:
    """Write the per-sample scores of a run for the bootstrap and report stages into ``path``
    (a temporary path of :func:`fdbench.core.io.atomic_paths`, which commits it with the
    results it belongs to)."""
    arrays: dict[str, np.ndarray] = {}
    index = []
    for i, s in enumerate(scores):
        arrays[f"{i}/residuals"] = s.residuals
        for j, conf in enumerate(s.confidences.values()):
            arrays[f"{i}/csf{j}"] = conf
        for j, (_, idx) in enumerate(s.parts):
            arrays[f"{i}/part{j}"] = idx
        index.append(
            {
                "study": s.study,
                "source": s.source,
                "csfs": list(s.confidences),
                "parts": [n for n, _ in s.parts],
            }
        )
    arrays["index"] = np.array(json.dumps(index))
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def load_scores(path: Path) -> list[StudyScores]:
    """Read the scores written by :func:`save_scores`, after verifying their checksum."""
    with np.load(verify_file(path), allow_pickle=False) as data:
        index = json.loads(str(data["index"]))
        return [
            StudyScores(
                study=entry["study"],
                source=entry["source"],
                residuals=data[f"{i}/residuals"],
                confidences={c: data[f"{i}/csf{j}"] for j, c in enumerate(entry["csfs"])},
                parts=tuple((n, data[f"{i}/part{j}"]) for j, n in enumerate(entry["parts"])),
            )
            for i, entry in enumerate(index)
        ]


def parse_config(data: Any, *, source: str = "config") -> BenchmarkConfig:
    """Validate a mapping (e.g. parsed YAML) into a :class:`~fdbench.config.BenchmarkConfig`,
    its methods against fdbench's training methods and the plug-ins registered with them
    (:func:`fdbench.training.methods.get_method`; see
    :func:`fdbench.config.validate_config`)."""
    from fdbench.training.methods import get_method

    return validate_config(data, methods=get_method, source=source)


def load_config(path: str | os.PathLike[str]) -> BenchmarkConfig:
    """Read and validate a YAML benchmark configuration file (:func:`fdbench.config.read_yaml`,
    then :func:`parse_config`)."""
    return parse_config(read_yaml(path), source=os.fspath(path))
