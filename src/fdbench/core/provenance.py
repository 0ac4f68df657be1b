"""Provenance of a run folder: fdbench version and commit, config, data files read, splits."""

from __future__ import annotations

import contextvars
import hashlib
import json
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


#: Version of the layout of :data:`PROVENANCE_FILE`; raised when a key changes meaning.
SCHEMA_VERSION = 1
#: The provenance record of a run folder.
PROVENANCE_FILE = "provenance.json"
#: The results column holding the fingerprint of the splits a row was evaluated on.
FINGERPRINT_COLUMN = "split_fingerprint"
_READS: contextvars.ContextVar[dict[str, str | None] | None] = contextvars.ContextVar(
    "fdbench_data_reads", default=None
)


def record_read(path: str | Path, sha256: str | None = None) -> None:
    """Note that a data reader read the file at ``path`` (its SHA-256 if already known).

    Does nothing outside :func:`recording_reads`; the data readers of :mod:`fdbench.data` call it
    for every file they read.
    """
    reads = _READS.get()
    if reads is not None:
        key = str(Path(path).resolve())
        reads[key] = sha256 if sha256 is not None else reads.get(key)


@contextmanager
def recording_reads() -> Iterator[dict[str, str | None]]:
    """Within the block, collect every data file read (:func:`record_read`): path → SHA-256 or
    ``None`` until :func:`data_files` computes it. Nested blocks share the outer record."""
    outer = _READS.get()
    if outer is not None:
        yield outer
        return
    reads: dict[str, str | None] = {}
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


def data_files(reads: Mapping[str, str | None]) -> list[dict[str, str]]:
    """``[{"path", "sha256"}]`` of every file in ``reads`` (from :func:`recording_reads`), sorted
    by path; digests not recorded at read time are computed now."""
    from fdbench.core.io import sha256_file

    return [
        {"path": path, "sha256": digest if digest is not None else sha256_file(path)}
        for path, digest in sorted(reads.items())
    ]


def split_fingerprint(images: np.ndarray, labels: np.ndarray) -> str:
    """Hex SHA-256 identifying a split by its samples: shapes, dtypes and the bytes of its
    images and labels, in order.

    The data builders keep the selected samples, not their indices into the source files; with
    the source files' own SHA-256 (:func:`data_files`) the samples identify the selection as the
    indices would, and two splits have one fingerprint only if they hold the same samples in the
    same order.
    """
    digest = hashlib.sha256()
    for array in (np.ascontiguousarray(images), np.ascontiguousarray(labels)):
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(memoryview(array).cast("B"))
    return digest.hexdigest()


def combined_fingerprint(fingerprints: Mapping[str, str], splits: list[str]) -> str:
    """One fingerprint for a study made of several splits (a pooled corruption study): the
    SHA-256 of their names and fingerprints in order (``null`` for a split without one)."""
    text = json.dumps([[s, fingerprints.get(s)] for s in splits])
    return hashlib.sha256(text.encode()).hexdigest()


def check_same_splits(results: pd.DataFrame, what: str = "results") -> None:
    """Refuse to merge results evaluated on different splits.

    Rows of one (dataset, study, seed) are compared with each other in every table and ranking,
    so they must carry one :data:`FINGERPRINT_COLUMN` value; rows without a fingerprint (outputs
    of other tools) are not checked. Raises one ``ValueError`` naming the first study whose
    rows differ.
    """
    if FINGERPRINT_COLUMN not in results.columns:
        return
    keys = [c for c in ("dataset", "study", "seed") if c in results.columns]
    known = results[results[FINGERPRINT_COLUMN].notna()]
    counts = known.groupby(keys, sort=False)[FINGERPRINT_COLUMN].nunique()
    differ = counts[counts > 1]
    if differ.empty:
        return
    key = differ.index[0] if isinstance(differ.index[0], tuple) else (differ.index[0],)
    where = ", ".join(f"{k} {v!r}" for k, v in zip(keys, key, strict=True))
    rows = known.set_index(keys).loc[key] if len(keys) > 1 else known.set_index(keys).loc[key[0]]
    prints = sorted({p[:12] for p in rows[FINGERPRINT_COLUMN]})
    raise ValueError(
        f"{what} of {where} come from different splits (fingerprints {', '.join(prints)}); "
        "refusing to merge results evaluated on different samples"
    )


def source_version() -> dict[str, str]:
    """fdbench's version and commit: ``git describe --always --dirty`` of the source tree
    fdbench is imported from when it is a git checkout, else ``"unknown"``."""
    from fdbench import __version__

    source = Path(__file__).resolve().parent
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=source,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        done = None
    commit = done.stdout.strip() if done is not None and done.returncode == 0 else ""
    return {"version": __version__, "commit": commit or "unknown"}


def provenance_record(
    config: Mapping[str, Any],
    reads: Mapping[str, str | None],
    fingerprints: Mapping[str, Mapping[str, str]],
) -> dict[str, Any]:
    """The provenance of a run: schema version, fdbench version and commit, the resolved
    ``config``, path and SHA-256 of every data file read and the fingerprint of every split
    (experiment → split → fingerprint)."""
    return {
        "schema": SCHEMA_VERSION,
        "fdbench": source_version(),
        "config": dict(config),
        "data_files": data_files(reads),
        "split_fingerprints": {e: dict(p) for e, p in fingerprints.items()},
    }
