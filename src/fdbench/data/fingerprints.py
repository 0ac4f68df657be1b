"""Fingerprints of an experiment's splits, recorded in a run's provenance."""

from __future__ import annotations

from fdbench.core.provenance import split_fingerprint
from fdbench.data.types import Experiment


def experiment_fingerprints(experiment: Experiment) -> dict[str, str]:
    """Fingerprint (:func:`~fdbench.core.provenance.split_fingerprint`) of every split of
    ``experiment``: ``train``, ``val`` and each study by name."""
    splits = {"train": experiment.train, "val": experiment.val}
    prints = {n: split_fingerprint(s.images, s.labels) for n, s in splits.items()}
    for study in experiment.studies:
        prints[study.name] = split_fingerprint(study.images, study.labels)
    return prints
