"""Writing and reading back fdbench's files: atomic writes, SHA-256 checksums, no overwrites."""

from __future__ import annotations

import contextvars
import hashlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fdbench.core import written

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: Suffix of the checksum file written beside every file fdbench writes, in the format of
#: ``sha256sum`` (``<hex digest>  <file name>``), so ``sha256sum -c results.parquet.sha256``
#: checks it too.
CHECKSUM_SUFFIX = ".sha256"
#: The marker of a run folder fdbench made (``fdbench benchmark --out``).
RUN_MARKER = "fdbench-run.json"
#: The checksum file inside a directory fdbench writes as a whole (an outputs store): one
#: ``sha256sum`` line per file, with paths relative to the directory.
DIRECTORY_CHECKSUMS = "checksums.sha256"

logger = logging.getLogger("fdbench")
_FORCE: contextvars.ContextVar[bool] = contextvars.ContextVar("fdbench_force", default=False)


class IntegrityError(ValueError):
    """A file fdbench wrote does not match the SHA-256 recorded when it was written."""


class ForeignFileError(FileExistsError):
    """An output path holds a file fdbench did not write (or one changed since)."""


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
    partial file behind. The file gets the process umask's mode (:func:`default_mode`). An
    existing file that fdbench did not write is not replaced (:func:`check_replaceable`); the
    new file's SHA-256 is recorded beside it (:func:`checksum_path`), for :func:`verify_file`,
    and in the folder's record of written files (:mod:`fdbench.core.written`).
    """
    with atomic_paths([path]) as (tmp,):
        yield tmp


@contextmanager
def atomic_paths(paths: Sequence[str | Path]) -> Iterator[list[Path]]:
    """Yield one temporary path beside each of ``paths`` (in one folder); commit them as one
    unit only if the block succeeds.

    Nothing is renamed until every file is written, so a failing write (a full disk, a
    file-size limit) leaves every previous file as it was. The folder's record of written files
    (:mod:`fdbench.core.written`) lists the files as one unit: :func:`verify_file` refuses a
    file of the unit whose partners no longer hold the content written with it (a process
    killed between the renames), so one write's results are never read beside another's.
    """
    targets = [Path(p) for p in paths]
    folders = {t.parent for t in targets}
    if len(folders) != 1 or len({t.name for t in targets}) != len(targets):
        raise ValueError(f"atomic_paths writes distinct files of one folder, got {targets}")
    for target in targets:
        check_replaceable(target)
    folder = folders.pop()
    folder.mkdir(parents=True, exist_ok=True)
    temps: list[Path] = []
    try:
        for target in targets:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
            os.close(fd)
            temps.append(Path(tmp))
            os.chmod(tmp, default_mode())
        yield list(temps)
        new = {t.name: sha256_file(tmp) for t, tmp in zip(targets, temps, strict=True)}
        unit = _unit_token(new) if len(targets) > 1 else None
        written.begin(folder, new, unit, default_mode())
        for target in targets:
            # until the rename, the checksum file accepts the old and the new content, so a
            # process killed between the two renames leaves a file that still verifies
            old = [sha256_file(target)] if target.is_file() and not target.is_symlink() else []
            _write_checksums(target, [*old, new[target.name]])
        for target, tmp in zip(targets, temps, strict=True):
            os.replace(tmp, target)
        for target in targets:
            _write_checksums(target, [new[target.name]])
        written.finish(folder, new, unit, default_mode())
    finally:
        for tmp in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _unit_token(digests: Mapping[str, str]) -> str:
    """The token of a unit of files: the SHA-256 of their names and digests, so writing the
    same files again gives the same record."""
    text = "".join(f"{name}  {digests[name]}\n" for name in sorted(digests))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal_unit(folder: str | Path, names: Sequence[str]) -> None:
    """Record the files ``names`` of ``folder``, as they are now, as one unit in the folder's
    record of written files (:mod:`fdbench.core.written`): files written one by one by one step
    (a run's analysis files) are then read only together, :func:`check_unit` refusing a file
    whose partners were replaced since (a later step interrupted half-way). Every file must
    match its recorded checksum."""
    folder = Path(folder)
    paths = [folder / name for name in dict.fromkeys(names)]
    for path in paths:
        reason = damage(path)
        if reason is not None:
            raise IntegrityError(f"{path} is damaged: {reason}; it cannot be used")
    if len(paths) < 2:
        return
    digests = {path.name: sha256_file(path) for path in paths}
    written.finish(folder, digests, _unit_token(digests), default_mode())


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, with its checksum beside it."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_table(table: pd.DataFrame, path: str | Path) -> Path:
    """Write ``table`` atomically as CSV or Parquet, chosen by the suffix of ``path``, with its
    checksum beside it; Parquet pages carry their CRC32 (:func:`read_parquet` verifies it)."""
    path = _table_path(path)
    with atomic_path(path) as tmp:
        write_table_file(table, path, tmp)
    return path


def write_tables(tables: Mapping[Path, pd.DataFrame | pa.Table]) -> list[Path]:
    """Write several tables (path → table, one folder) as one unit (:func:`atomic_paths`):
    none is replaced unless all are written, and a reader refuses a mix of two writes."""
    paths = [_table_path(p) for p in tables]
    with atomic_paths(paths) as temps:
        for path, tmp in zip(paths, temps, strict=True):
            write_table_file(tables[path], path, tmp)
    return paths


def _table_path(path: str | Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in {".csv", ".parquet", ".pq"}:
        raise ValueError(f"results file must end in .csv or .parquet; got {path.name}")
    return path


def write_table_file(table: pd.DataFrame | pa.Table, path: Path, tmp: Path) -> None:
    """Write ``table`` (a DataFrame or a pyarrow Table) into ``tmp`` (a temporary path of
    :func:`atomic_paths`) in the format the suffix of ``path`` names: CSV (a pyarrow Table as
    its DataFrame, so that both write the same text), or Parquet with page checksums."""
    arrow = not hasattr(table, "to_csv")
    if path.suffix.lower() == ".csv":
        (table.to_pandas() if arrow else table).to_csv(tmp, index=False)
    elif arrow:
        import pyarrow.parquet as pq

        pq.write_table(table, tmp, write_page_checksum=True)
    else:
        table.to_parquet(tmp, index=False, write_page_checksum=True)


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


def read_table(path: str | Path, **kwargs) -> pd.DataFrame:
    """Read a CSV or Parquet table fdbench wrote, after verifying its checksum
    (:func:`verify_file`); ``kwargs`` go to ``pandas.read_parquet``/``read_csv``."""
    import pandas as pd

    path = verify_file(path)
    if path.suffix.lower() == ".csv":
        return pd.read_csv(path, **kwargs)
    return read_parquet(path, **kwargs)


def read_parquet(path: str | Path, **kwargs) -> pd.DataFrame:
    """Read a Parquet file, verifying the CRC32 of every page that has one (fdbench writes them,
    :func:`write_table`; pyarrow checks them only when asked); a damaged page is one
    ``IntegrityError`` naming the file. ``kwargs`` go to ``pandas.read_parquet``."""
    import pandas as pd

    try:
        return pd.read_parquet(path, page_checksum_verification=True, **kwargs)
    except OSError as error:
        if error.errno is not None:
            raise
        reason = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
        raise IntegrityError(f"{path} is damaged: {reason}; it cannot be used") from None


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of the file at ``path``, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksum_path(path: str | Path) -> Path:
    """The checksum file of ``path``: ``<name>.sha256`` beside it."""
    path = Path(path)
    return path.with_name(path.name + CHECKSUM_SUFFIX)


def parse_checksums(text: str, source: str | Path) -> dict[str, str]:
    """Parse ``sha256sum`` lines into relative path → hex digest; ``IntegrityError`` naming
    ``source`` if a line is malformed."""
    digests: dict[str, str] = {}
    for line in text.splitlines():
        digest, sep, name = line.partition("  ")
        valid = len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
        if not sep or not valid or not name or name in digests:
            raise IntegrityError(f"checksum file {source} is damaged (line {line[:80]!r})")
        digests[name] = digest
    return digests


def _write_checksums(path: Path, digests: list[str]) -> Path:
    target = checksum_path(path)
    text = "".join(f"{digest}  {path.name}\n" for digest in dict.fromkeys(digests))
    _write_raw(target, text.encode("utf-8"))
    return target


def _recorded_digests(path: Path) -> set[str]:
    """The digests the checksum file of ``path`` accepts (one, or the old and the new one of
    an interrupted replacement); ``IntegrityError`` if it is damaged or names another file."""
    record = checksum_path(path)
    digests = set()
    for line in record.read_text(encoding="utf-8").splitlines():
        digest, sep, name = line.partition("  ")
        valid = len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
        if not sep or not valid or name != path.name:
            raise IntegrityError(f"checksum file {record} is damaged (line {line[:80]!r})")
        digests.add(digest)
    if not digests:
        raise IntegrityError(f"checksum file {record} is empty")
    return digests


def _write_raw(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, default_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def damage(path: str | Path) -> str | None:
    """Why the file at ``path`` cannot be trusted as fdbench wrote it, or ``None`` if its
    SHA-256 matches the one recorded beside it (:func:`checksum_path`).

    Reasons: the file is missing, its checksum file is missing or damaged, or the digests
    differ. A directory is checked against its :data:`DIRECTORY_CHECKSUMS` file: every file
    listed must match and no other file may be present.
    """
    path = Path(path)
    if path.is_dir():
        return _directory_damage(path)
    if not path.is_file():
        return "the file is missing"
    record = checksum_path(path)
    try:
        digests = _recorded_digests(path)
    except FileNotFoundError:
        return f"no checksum was recorded ({record.name} is missing)"
    except (OSError, UnicodeDecodeError, IntegrityError):
        return f"its checksum file {record.name} is damaged"
    if sha256_file(path) not in digests:
        return "its content does not match the SHA-256 recorded when fdbench wrote it"
    return None


def _directory_damage(directory: Path) -> str | None:
    record = directory / DIRECTORY_CHECKSUMS
    try:
        digests = parse_checksums(record.read_text(encoding="ascii"), record)
    except FileNotFoundError:
        return f"no checksums were recorded ({DIRECTORY_CHECKSUMS} is missing)"
    except (OSError, UnicodeDecodeError, IntegrityError):
        return f"its checksum file {DIRECTORY_CHECKSUMS} is damaged"
    present = set(directory_files(directory)) - {DIRECTORY_CHECKSUMS}
    for name in sorted(present | set(digests)):
        if name not in digests:
            return f"{name} is not recorded in {DIRECTORY_CHECKSUMS}"
        if name not in present:
            return f"{name} is missing"
        if sha256_file(directory / name) != digests[name]:
            return f"{name} does not match the SHA-256 recorded when fdbench wrote it"
    return None


def directory_files(directory: Path) -> list[str]:
    """Every file below ``directory``, as sorted POSIX paths relative to it."""
    return sorted(
        (Path(root) / name).relative_to(directory).as_posix()
        for root, _, names in os.walk(directory)
        for name in names
    )


def record_directory_checksums(directory: str | Path) -> Path:
    """Write the SHA-256 of every file below ``directory`` to its
    :data:`DIRECTORY_CHECKSUMS` file."""
    directory = Path(directory)
    names = [n for n in directory_files(directory) if n != DIRECTORY_CHECKSUMS]
    digests = {name: sha256_file(directory / name) for name in names}
    target = directory / DIRECTORY_CHECKSUMS
    text = "".join(f"{digests[name]}  {name}\n" for name in sorted(digests))
    _write_raw(target, text.encode("utf-8"))
    return target


def verify_file(path: str | Path) -> Path:
    """Return ``path`` if it matches the checksum recorded when fdbench wrote it; otherwise
    raise one ``IntegrityError`` naming the file and what is wrong."""
    path = Path(path)
    reason = damage(path)
    if reason is not None:
        raise IntegrityError(f"{path} is damaged: {reason}; it cannot be used")
    if path.is_file():
        check_unit(path)
    return path


def check_unit(path: Path) -> None:
    """Raise ``IntegrityError`` if ``path`` was written in one unit with other files
    (:func:`atomic_paths`) that no longer hold the content written with it: a mix of two
    writes (one interrupted between its renames), never to be read together."""
    partners = written.recorded_unit(path, sha256_file(path))
    for name, digest in sorted(partners.items()):
        partner = path.with_name(name)
        if not partner.is_file() or _digest_of(partner) != digest:
            raise IntegrityError(
                f"{path} and {partner} are not from the same write (one was replaced or "
                "removed after they were written together); refusing to read them together: "
                "run the command that wrote them again"
            )


_DIGESTS: dict[tuple[str, int, int, int], str] = {}


def _digest_of(path: Path) -> str:
    """:func:`sha256_file` of ``path``, kept per (path, inode, size, mtime): a reader of the
    files of one unit hashes each partner once, not once per file it reads."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = sha256_file(path)
    return _DIGESTS[key]


def verify_if_recorded(path: str | Path, *, required: bool = False) -> Path:
    """Verify ``path`` if a checksum was recorded for it (or ``required``); a file without a
    checksum file is accepted as the user's own input unless ``required``."""
    path = Path(path)
    recorded = (path / DIRECTORY_CHECKSUMS) if path.is_dir() else checksum_path(path)
    if required or recorded.exists():
        verify_file(path)
    return path


def discard_damaged(path: str | Path) -> bool:
    """If ``path`` exists but is damaged (:func:`damage`), log a warning naming it, remove it
    and its checksum file, and return True (the caller recomputes it); False otherwise.

    Used on resume: a cache that fails its checksum is recomputed, never reused.
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return False
    reason = damage(path)
    if reason is None:
        return False
    logger.warning("fdbench: %s is damaged (%s); recomputing it", path, reason)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    checksum_path(path).unlink(missing_ok=True)
    return True


def discard_mixed(paths: Sequence[str | Path]) -> bool:
    """If ``paths`` (files of one folder that one job writes as a unit, :func:`atomic_paths`)
    all exist but were not written together (one was replaced, or they were written apart),
    log a warning naming them, remove them with their checksum files, and return True (the
    caller recomputes them); False otherwise.

    Used on resume after :func:`discard_damaged`: a cache whose files come from two writes is
    recomputed, never reused.
    """
    files = [Path(p) for p in paths]
    if len(files) < 2 or not all(p.is_file() and not p.is_symlink() for p in files):
        return False
    first = files[0]
    partners = written.recorded_unit(first, sha256_file(first))
    together = all(partners.get(p.name) == sha256_file(p) for p in files[1:])
    if together:
        return False
    logger.warning(
        "fdbench: %s were not written together (a mix of two writes); recomputing them",
        " and ".join(str(p) for p in files),
    )
    for path in files:
        path.unlink()
        checksum_path(path).unlink(missing_ok=True)
    return True


@contextmanager
def overwrite_foreign() -> Iterator[None]:
    """Within the block, :func:`check_replaceable` lets files fdbench did not write be replaced
    (the command line's ``--force``)."""
    token = _FORCE.set(True)
    try:
        yield
    finally:
        _FORCE.reset(token)


def owned(path: str | Path) -> bool:
    """Whether ``path`` holds what fdbench wrote there and nothing changed since: a file whose
    SHA-256 matches its checksum file and is listed in the folder's record of written files
    (:mod:`fdbench.core.written`), or a directory fdbench wrote as a whole (an outputs store,
    holding its :data:`DIRECTORY_CHECKSUMS`). A checksum file alone (which anyone can make with
    ``sha256sum``) does not make a file fdbench's."""
    path = Path(path)
    if path.is_symlink():
        return False
    if path.is_dir():
        return (path / DIRECTORY_CHECKSUMS).is_file()
    if damage(path) is not None:
        return False
    return sha256_file(path) in written.recorded_digests(path)


def check_replaceable(path: str | Path) -> None:
    """Raise ``ForeignFileError`` if ``path`` holds something fdbench may not replace.

    fdbench replaces only what it wrote and what is unchanged since (:func:`owned`). Anything
    else at ``path`` (a user's file or folder, one with a ``sha256sum`` file the user made
    beside it, a file edited since, a symlink) is left alone unless :func:`overwrite_foreign`
    is active.
    """
    path = Path(path)
    if _FORCE.get() or not (path.exists() or path.is_symlink()):
        return
    if not owned(path):
        raise ForeignFileError(
            f"{path} exists and was not written by fdbench (or was changed since); "
            "refusing to overwrite it: choose another path or pass --force"
        )


def check_run_folder_claim(run_dir: str | Path) -> Path:
    """Raise what :func:`claim_run_folder` would raise for ``run_dir``, writing nothing: a file
    there (``NotADirectoryError``), or a non-empty folder without an intact :data:`RUN_MARKER`
    (``ForeignFileError``, unless :func:`overwrite_foreign` is active)."""
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise NotADirectoryError(f"run folder {run_dir} exists and is not a directory")
    marker = run_dir / RUN_MARKER
    if marker.exists() and owned(marker):
        return run_dir
    if run_dir.is_dir() and any(run_dir.iterdir()) and not _FORCE.get():
        raise ForeignFileError(
            f"{run_dir} is not empty and is not a run folder of fdbench (no intact "
            f"{RUN_MARKER}); refusing to write into it: choose another --out or pass --force"
        )
    return run_dir


def claim_run_folder(run_dir: str | Path) -> Path:
    """Make ``run_dir`` a run folder of fdbench, or check that it is one.

    A missing or empty folder gets the marker :data:`RUN_MARKER`; a folder with an intact
    marker is fdbench's (a run to resume). Anything else (a non-empty folder without the
    marker, a file) raises ``ForeignFileError``/``NotADirectoryError`` unless
    :func:`overwrite_foreign` is active, so a run never writes into a folder of the user's.
    """
    import json

    from fdbench import __version__

    run_dir = check_run_folder_claim(run_dir)
    marker = run_dir / RUN_MARKER
    if marker.exists() and owned(marker):
        return run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    with overwrite_foreign(), atomic_path(marker) as tmp:
        tmp.write_text(json.dumps({"written_by": "fdbench", "version": __version__}) + "\n")
    return run_dir
