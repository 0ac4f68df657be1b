"""The record of the files fdbench wrote in a folder: the mark of ownership only fdbench makes,
and the units of files that were written together.

Every folder fdbench writes a file into (through :func:`fdbench.core.io.atomic_path` or
:func:`fdbench.core.io.atomic_paths`) holds :data:`RECORD_NAME`, a JSON file that lists, per
file name, the SHA-256 digests fdbench wrote under that name and, for files written together
(``fdbench evaluate --out``: the results and the curves), the unit they belong to. A file is
fdbench's to replace only if its digest is listed there: a ``sha256sum`` sidecar a user made
beside their own file does not make it fdbench's. A reader of a file that belongs to a unit
checks that the other files of the unit still hold the content written with it, so one
evaluation's results are never read beside another's curves.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["RECORD_NAME", "begin", "finish", "recorded_digests", "recorded_unit"]

#: The record of written files, one per folder fdbench writes into.
RECORD_NAME = ".fdbench-written.json"

#: How many digests a file name keeps (the newest last).
KEPT_DIGESTS = 4

_Record = dict[str, dict]


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``folder`` (concurrent writers of one folder update its
    record one at a time)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def read_record(folder: str | Path) -> _Record:
    """The record of ``folder``: ``{"files": {name: {digest: unit or None}}, "units": {unit:
    {name: digest}}}``; empty if there is none or it cannot be read (then nothing in the folder
    counts as fdbench's)."""
    path = Path(folder) / RECORD_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {"files": {}, "units": {}}
    valid = (
        isinstance(data, dict)
        and isinstance(data.get("files"), dict)
        and isinstance(data.get("units"), dict)
        and all(isinstance(v, dict) for v in data["files"].values())
        and all(isinstance(v, dict) for v in data["units"].values())
    )
    return data if valid else {"files": {}, "units": {}}


def _write(folder: Path, record: _Record, mode: int) -> None:
    referenced = {u for digests in record["files"].values() for u in digests.values() if u}
    record["units"] = {u: m for u, m in record["units"].items() if u in referenced}
    fd, tmp = tempfile.mkstemp(prefix=f"{RECORD_NAME}.", suffix=".tmp", dir=folder)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=1, sort_keys=True)
        os.replace(tmp, folder / RECORD_NAME)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def begin(folder: Path, digests: dict[str, str], unit: str | None, mode: int) -> None:
    """Before the renames: record the new ``digests`` (file name → SHA-256) beside the ones
    already recorded, so a process killed between the renames leaves files that still count
    as fdbench's. ``mode``: the record file's mode
    (:func:`fdbench.core.io.default_mode`)."""
    with _locked(folder):
        record = read_record(folder)
        for name, digest in digests.items():
            record["files"].setdefault(name, {})[digest] = unit
        if unit is not None:
            record["units"][unit] = dict(digests)
        _write(folder, record, mode)


def finish(folder: Path, digests: dict[str, str], unit: str | None, mode: int) -> None:
    """After the renames: each file name keeps its new digest last, and at most
    :data:`KEPT_DIGESTS` digests in all (a reader that hashed the old content while a
    concurrent writer replaced it still finds it fdbench's)."""
    with _locked(folder):
        record = read_record(folder)
        for name, digest in digests.items():
            kept = record["files"].get(name, {})
            kept.pop(digest, None)
            kept = dict(list(kept.items())[-(KEPT_DIGESTS - 1) :])
            kept[digest] = unit
            record["files"][name] = kept
        if unit is not None:
            record["units"][unit] = dict(digests)
        _write(folder, record, mode)


def recorded_digests(path: str | Path) -> set[str]:
    """The digests fdbench recorded for the file (or outputs store) at ``path``."""
    path = Path(path)
    return set(read_record(path.parent)["files"].get(path.name, {}))


def recorded_unit(path: str | Path, digest: str) -> dict[str, str]:
    """The other files written in one unit with the content ``digest`` of ``path`` (name →
    SHA-256); empty if it was written alone."""
    path = Path(path)
    record = read_record(path.parent)
    unit = record["files"].get(path.name, {}).get(digest)
    members = record["units"].get(unit, {}) if unit else {}
    return {name: d for name, d in members.items() if name != path.name}
