"""Atomic writes of files and tables: a temporary file beside the target, renamed when complete."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_mode(*, directory: bool = False) -> int:
    """The mode ``open()`` (``0o666``) or ``mkdir()`` (``0o777``) would give under the process
    umask. ``tempfile.mkstemp``/``mkdtemp`` create 0600/0700 whatever the umask, so the files
    fdbench writes through a temporary name get this mode before the rename: a report or a
    results table is as readable as any file the user's other tools write.
    """
    return (0o777 if directory else 0o666) & ~_umask()


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds.

    An interrupted or failing write leaves any previous file at ``path`` untouched and no
    partial file behind. The file gets the process umask's mode (:func:`default_mode`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        os.chmod(tmp, default_mode())
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_table(table: pd.DataFrame, path: str | Path) -> Path:
    """Write ``table`` atomically as CSV or Parquet, chosen by the suffix of ``path``."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".parquet", ".pq"}:
        raise ValueError(f"results file must end in .csv or .parquet; got {path.name}")
    with atomic_path(path) as tmp:
        if suffix == ".csv":
            table.to_csv(tmp, index=False)
        else:
            table.to_parquet(tmp, index=False)
    return path


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def _check_writable_folder(folder: Path, path: Path, option: str) -> None:
    existing = _nearest_existing(folder)
    if not existing.is_dir():
        raise NotADirectoryError(
            f"{option}: cannot write {str(path)!r}: {str(existing)!r} is a file, not a folder"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(
            f"{option}: cannot write {str(path)!r}: folder {str(existing)!r} is not writable "
            "(permission denied or read-only file system)"
        )


def check_output_file(
    path: str | Path, option: str, suffixes: tuple[str, ...] | None = None
) -> Path:
    """Check, before any work, that a file can be written at ``path`` (the value of ``option``).

    Refuses a suffix not in ``suffixes``, a path that is a folder, a parent that is a file, and
    a folder that is not writable (permission denied, read-only file system), each with an
    error naming ``option`` and the path. A full disk can only show when writing.
    """
    path = Path(path)
    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise ValueError(f"{option}: {str(path)!r} must end in {' or '.join(suffixes)}")
    if path.is_dir():
        raise IsADirectoryError(f"{option}: {str(path)!r} is a folder, expected a file name")
    _check_writable_folder(path.parent, path, option)
    return path


def check_output_folder(path: str | Path, option: str) -> Path:
    """Check, before any work, that the folder ``path`` (the value of ``option``) exists or can
    be created, and that files can be written in it (see :func:`check_output_file`)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"{option}: {str(path)!r} is a file, expected a folder")
    _check_writable_folder(path, path, option)
    return path
