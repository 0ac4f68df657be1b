"""The on-disk dataset cache: data directory, atomic writes, checksummed manifests."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from fdbench.core.errors import DataError
from fdbench.core.io import default_mode, sha256_file
from fdbench.core.provenance import record_read

MANIFEST = "manifest.json"


class CorruptedCacheError(DataError):
    """A cached dataset file does not match the checksum recorded when it was written."""


def data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The dataset cache: ``data_dir``, else ``$FDBENCH_DATA``, else ``~/.cache/fdbench``."""
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get("FDBENCH_DATA")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "fdbench"


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, default_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _npy_bytes(array: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def write_cached_dataset(
    folder: Path,
    splits: dict[str, tuple[np.ndarray, np.ndarray]],
    class_names: tuple[str, ...],
    source: str,
) -> None:
    """Store ``splits`` (split → (images, labels)) as ``.npy`` files plus a checksummed manifest.

    Every file is written atomically; the manifest is written last, so a folder without a
    manifest is an interrupted fetch and is rebuilt by the next fetch.
    """
    files: dict[str, str] = {}
    for split, (images, labels) in splits.items():
        for kind, array in (("images", images), ("labels", labels)):
            name = f"{split}_{kind}.npy"
            data = _npy_bytes(array)
            atomic_write_bytes(folder / name, data)
            files[name] = sha256_bytes(data)
    manifest = {"class_names": list(class_names), "files": files, "source": source}
    atomic_write_bytes(folder / MANIFEST, json.dumps(manifest, indent=2).encode())


def is_cached(folder: Path) -> bool:
    """Whether ``folder`` holds a complete cached dataset (its manifest exists)."""
    return (folder / MANIFEST).is_file()


def _read_manifest(folder: Path) -> dict:
    """The manifest of ``folder``; :class:`CorruptedCacheError` if it cannot be parsed."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text())
        files, class_names = manifest["files"], manifest["class_names"]
        if not isinstance(files, dict) or not isinstance(class_names, list):
            raise TypeError("files must be a mapping and class_names a list")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise CorruptedCacheError(
            f"cache manifest {path} is unreadable ({type(exc).__name__}); re-fetch the dataset "
            f"with `fdbench data fetch {folder.name} --force` or delete {folder}"
        ) from exc
    return manifest


def damaged_files(folder: Path) -> list[str]:
    """Names of the files of the cached dataset in ``folder`` that are missing or do not match
    the SHA-256 in its manifest (``[MANIFEST]`` if the manifest itself is unreadable)."""
    try:
        files = _read_manifest(folder)["files"]
    except CorruptedCacheError:
        return [MANIFEST]
    return [
        name
        for name, expected in files.items()
        if not (folder / name).is_file() or sha256_file(folder / name) != expected
    ]


def read_cached_split(folder: Path, split: str, name: str) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Read one split of a cached dataset, verifying each file against the manifest checksum.

    A missing or altered file (or an unreadable manifest) raises :class:`CorruptedCacheError`
    with one line naming the file and how to fetch it again.
    """
    manifest = _read_manifest(folder)
    arrays = []
    for kind in ("images", "labels"):
        fname = f"{split}_{kind}.npy"
        path = folder / fname
        expected = manifest["files"].get(fname)
        if expected is None:
            raise ValueError(f"split must be one of the cached splits of {name!r}; got {split!r}")
        if not path.is_file() or sha256_file(path) != expected:
            raise CorruptedCacheError(
                f"cached file {path} is missing or corrupted (SHA-256 mismatch); re-fetch it with "
                f"`fdbench data fetch {name} --force` (fdbench.data.fetch({name!r}, force=True)) "
                f"or delete {folder}"
            )
        record_read(path, expected)
        arrays.append(np.load(path, allow_pickle=False))
    return arrays[0], arrays[1], tuple(manifest["class_names"])
