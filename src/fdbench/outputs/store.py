"""Reading and writing the outputs store: one Zarr v3 directory per run, written atomically,
every file checksummed and verified on read."""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import zarr
from zarr.codecs import BloscCodec, Crc32cCodec
from zarr.storage import LocalStore

from fdbench.core.io import (
    DIRECTORY_CHECKSUMS,
    IntegrityError,
    check_replaceable,
    default_mode,
    parse_checksums,
    record_directory_checksums,
)
from fdbench.core.validation import check_allocation

from .schema import RunOutputs, SplitOutputs, validate_run

__all__ = ["FORMAT_VERSION", "iter_sample_chunks", "read_outputs", "write_outputs"]

#: Version 2 adds the checksum file of every file of the store (:data:`DIRECTORY_CHECKSUMS`).
FORMAT_VERSION = 2
_T = TypeVar("_T")
#: How often a reader re-reads a store that a concurrent writer replaced while it was read.
_READ_ATTEMPTS = 50
#: How many reads in a row must find the same file damaged in an unchanged store before it is
#: reported (a writer may have put identical content back in place meanwhile).
_DAMAGE_CONFIRMATIONS = 3
_FORMAT_KEY = "fdbench_outputs"
_TARGET_CHUNK_BYTES = 8 * 2**20
_SPLIT_ARRAYS = ("labels", "logits", "mcd_logits", "features", "groups")


def _rows_per_chunk(shape: tuple[int, ...], itemsize: int) -> int:
    row_bytes = itemsize * int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else itemsize
    return max(1, min(max(shape[0], 1), _TARGET_CHUNK_BYTES // max(row_bytes, 1)))


def _write_array(group: zarr.Group, name: str, array: np.ndarray) -> None:
    chunks = (_rows_per_chunk(array.shape, array.dtype.itemsize), *array.shape[1:])
    chunks = tuple(max(1, c) for c in chunks)
    target = group.create_array(
        name,
        shape=array.shape,
        dtype=array.dtype,
        chunks=chunks,
        compressors=(BloscCodec(cname="zstd", clevel=3, shuffle="shuffle"), Crc32cCodec()),
        fill_value=0,
        # every chunk is written, even one equal to the fill value (e.g. a split whose labels
        # are all 0), so that a missing chunk always means a damaged store
        config={"write_empty_chunks": True},
    )
    target[...] = array


def _json_meta(meta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    plain: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    for key, value in meta.items():
        if not isinstance(key, str) or not key or "/" in key:
            raise ValueError(f"meta keys must be non-empty str without '/', got {key!r}")
        if isinstance(value, np.ndarray):
            arrays[key] = value
            continue
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"meta[{key!r}] must be a numpy array or JSON-serialisable, got "
                f"{type(value).__name__}: {err}"
            ) from None
        plain[key] = value
    return plain, arrays


def write_outputs(path: str | os.PathLike[str], run: RunOutputs) -> None:
    """Validate ``run`` and write it as a Zarr v3 directory store at ``path``, atomically.

    The store is written into a temporary directory beside ``path`` and renamed into place only
    when complete; an existing store at ``path`` is replaced only then, and survives any failure
    before. Arrays are chunked along the sample axis (about 8 MiB per chunk), compressed with
    Blosc/zstd and checksummed (CRC32C); values round-trip bit-identically. The SHA-256 of
    every file is recorded in the store's :data:`fdbench.core.io.DIRECTORY_CHECKSUMS` file, which
    :func:`read_outputs` verifies. The new store takes the place of the old one in one atomic
    exchange, so a concurrent reader sees one or the other. A directory at ``path`` that is not
    an intact fdbench outputs store is never replaced (``FileExistsError``).
    """
    validate_run(run)
    plain_meta, array_meta = _json_meta(run.meta)
    target = Path(path)
    check_replaceable(target)
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=parent))
    try:
        os.chmod(tmp, default_mode(directory=True))
        root = zarr.open_group(store=str(tmp), mode="w", zarr_format=3)
        split_names = list(run.splits)
        for index, name in enumerate(split_names):
            split = run.splits[name]
            group = root.create_group(f"splits/{index:04d}")
            heads = list(split.heads)
            present = [a for a in _SPLIT_ARRAYS if getattr(split, a) is not None]
            group.attrs.update(
                {"name": name, "kind": split.kind, "heads": heads, "arrays": present}
            )
            for array_name in present:
                _write_array(group, array_name, np.ascontiguousarray(getattr(split, array_name)))
            for h_index, head in enumerate(heads):
                _write_array(group, f"heads/{h_index:04d}", split.heads[head])
        meta_group = root.create_group("meta_arrays")
        for key, value in array_meta.items():
            _write_array(meta_group, key, value)
        root.attrs.update(
            {
                _FORMAT_KEY: FORMAT_VERSION,
                "splits": split_names,
                "meta": plain_meta,
                "meta_arrays": list(array_meta),
            }
        )
        record_directory_checksums(tmp)
        _swap_into_place(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _exchange(first: Path, second: Path) -> bool:
    """Swap two directories in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False
    where the system cannot."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange)
    return result == 0


def _swap_into_place(tmp: Path, target: Path) -> None:
    if not target.exists():
        os.replace(tmp, target)
        return
    if _exchange(tmp, target):
        shutil.rmtree(tmp, ignore_errors=True)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    old.rmdir()
    os.replace(target, old)
    try:
        os.replace(tmp, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


class _Mismatch(IntegrityError):
    """A file of a store differs from its recorded checksum (damaged, or replaced meanwhile)."""


class _VerifiedStore(LocalStore):
    """A read-only local Zarr store that hands out a file only if its SHA-256 is the one the
    store's checksum file recorded when the reading began; any other file raises
    :class:`_Mismatch`. Files not recorded read as absent (as zarr expects of keys it probes)
    unless they exist."""

    def __init__(self, root: Path, digests: dict[str, str]) -> None:
        super().__init__(root, read_only=True)
        self._digests = digests

    async def get(self, key, prototype=None, byte_range=None):
        expected = self._digests.get(key)
        where = f"file {str(Path(self.root) / key)!r}"
        if expected is None:
            if (Path(self.root) / key).exists():
                raise _Mismatch(f"{where} is not recorded in {DIRECTORY_CHECKSUMS}")
            return None
        if byte_range is not None:
            raise _Mismatch(f"{where}: partial reads are not verified")
        buffer = await super().get(key, prototype)
        if buffer is None:
            raise _Mismatch(f"{where} is missing")
        if hashlib.sha256(buffer.to_bytes()).hexdigest() != expected:
            raise _Mismatch(
                f"{where} does not match the SHA-256 recorded when the store was written "
                "(damaged, or the store was replaced since it was opened)"
            )
        return buffer


def _checksums(target: Path) -> bytes:
    try:
        return (target / DIRECTORY_CHECKSUMS).read_bytes()
    except FileNotFoundError:
        pass
    try:
        version = json.loads((target / "zarr.json").read_bytes())["attributes"][_FORMAT_KEY]
    except Exception:
        raise ValueError(
            f"{str(target)!r} is not an fdbench outputs store (no {DIRECTORY_CHECKSUMS}, no "
            f"{_FORMAT_KEY!r} attribute in zarr.json)"
        ) from None
    raise ValueError(
        f"outputs store {str(target)!r} cannot be verified: its checksum file "
        f"{DIRECTORY_CHECKSUMS} is missing (the store is damaged, or was written in format "
        f"version {version!r}, before version {FORMAT_VERSION} recorded checksums)"
    )


def _mismatch_in(error: BaseException) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, _Mismatch):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _state(target: Path) -> tuple[int, int, bytes]:
    """What identifies one write of the store: its directory (a new one per write) and its
    checksum file."""
    info = os.stat(target)
    return info.st_dev, info.st_ino, _checksums(target)


def _consistent(target: Path, read: Callable[[zarr.Group], _T]) -> _T:
    """``read(root)`` on a view of the store whose every file matches one state of its checksum
    file. A file that does not match is damage if the store is still the same directory with
    the same checksum file on :data:`_DAMAGE_CONFIRMATIONS` reads in a row (the error is
    raised); otherwise a concurrent writer replaced the store meanwhile, and it is read again."""
    if not target.is_dir():
        raise FileNotFoundError(f"no outputs store at {str(target)!r}")
    unchanged = 0
    for _ in range(_READ_ATTEMPTS):
        state = _state(target)
        try:
            digests = parse_checksums(
                state[2].decode("utf-8", "replace"), target / DIRECTORY_CHECKSUMS
            )
            return read(_open_root(target, digests))
        except Exception as err:
            if not _mismatch_in(err):
                raise
            try:
                same = _state(target) == state
            except (OSError, ValueError):
                same = False
            unchanged = unchanged + 1 if same else 0
            if unchanged >= _DAMAGE_CONFIRMATIONS:
                raise
            time.sleep(0.001)
    raise ValueError(
        f"outputs store {str(target)!r} kept being replaced while it was read "
        f"({_READ_ATTEMPTS} attempts)"
    )


def _open_root(target: Path, digests: dict[str, str]) -> zarr.Group:
    try:
        root = zarr.open_group(store=_VerifiedStore(target, digests), mode="r", zarr_format=3)
        version = root.attrs.get(_FORMAT_KEY)
    except Exception as err:
        raise ValueError(
            f"outputs store {str(target)!r} is unreadable or corrupted: {err}"
        ) from err
    if version != FORMAT_VERSION:
        raise ValueError(
            f"{str(target)!r} is not an fdbench outputs store of format version {FORMAT_VERSION}"
            f" (found {version!r})"
        )
    _check_layout(root, target, digests)
    return root


def _arrays_under(digests: dict[str, str], prefix: str) -> set[str]:
    """Names of the arrays directly below group ``prefix`` according to the checksum file."""
    found = set()
    for key in digests:
        if key.startswith(prefix) and key.endswith("/zarr.json"):
            name = key[len(prefix) : -len("/zarr.json")]
            if name not in {"", "heads"} and (name.count("/") == 0 or name.startswith("heads/")):
                found.add(name)
    return found


def _check_layout(root: zarr.Group, target: Path, digests: dict[str, str]) -> None:
    """The store's own metadata must describe exactly the groups and arrays it holds, and every
    array must carry the CRC32C checksum codec."""

    def corrupted(detail: str) -> ValueError:
        return ValueError(f"outputs store {str(target)!r} is corrupted: {detail}")

    names = root.attrs.get("splits")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise corrupted("missing split list")
    if len(set(names)) != len(names):
        raise corrupted(f"the split list {names} repeats a name")
    stored = {k.split("/")[1] for k in digests if k.startswith("splits/") and k.count("/") >= 2}
    expected = {f"{i:04d}" for i in range(len(names))}
    if stored != expected:
        raise corrupted(
            f"the split list names {len(names)} split(s) but the store holds the split "
            f"group(s) {sorted(stored)}"
        )
    meta_arrays = _attr(root, "meta_arrays", [])
    if _arrays_under(digests, "meta_arrays/") != set(meta_arrays):
        raise corrupted("the list of meta arrays does not match the arrays stored")
    for index, name in enumerate(names):
        prefix = f"splits/{index:04d}/"
        try:
            attrs = dict(root[prefix.rstrip("/")].attrs)
        except Exception as err:
            raise corrupted(f"split {name!r} cannot be opened: {err}") from err
        if attrs.get("name") != name:
            raise corrupted(f"split {index} is named {attrs.get('name')!r}, not {name!r}")
        heads = attrs.get("heads", [])
        present = attrs.get("arrays")
        if not isinstance(heads, list) or not isinstance(present, list):
            raise corrupted(f"split {name!r} lacks its list of arrays or heads")
        declared = set(present) | {f"heads/{i:04d}" for i in range(len(heads))}
        found = _arrays_under(digests, prefix)
        if found != declared:
            raise corrupted(
                f"split {name!r} lists the array(s) {sorted(declared)} but holds {sorted(found)}"
            )
    for key in digests:
        if not key.endswith("/zarr.json") or key[: -len("/zarr.json")] in {"splits", "meta_arrays"}:
            continue
        node = key[: -len("/zarr.json")]
        if (node.startswith("splits/") and node.count("/") == 1) or node.endswith("/heads"):
            continue
        try:
            array = root[node]
            codecs = [type(c) for c in getattr(array, "compressors", ())]
        except Exception as err:
            raise corrupted(f"array {node!r} cannot be opened: {err}") from err
        if Crc32cCodec not in codecs:
            raise corrupted(f"array {node!r} has no CRC32C checksum codec")


def _split_groups(root: zarr.Group, path: Path) -> list[tuple[str, zarr.Group]]:
    names = root.attrs.get("splits")
    if not isinstance(names, list):
        raise ValueError(f"outputs store {str(path)!r} is corrupted: missing split list")
    groups = []
    for index, name in enumerate(names):
        try:
            group = cast(zarr.Group, root[f"splits/{index:04d}"])
        except Exception as err:
            raise ValueError(
                f"outputs store {str(path)!r} is corrupted: split {name!r} cannot be opened: {err}"
            ) from err
        groups.append((name, group))
    return groups


def _attr(node: zarr.Group, key: str, default: Any) -> Any:
    """The attribute ``key`` of a Zarr group (JSON: its type is the store's to state), or
    ``default``."""
    return node.attrs.get(key, default)


def _load(group: zarr.Group, key: str, split: str, lazy: bool, path: Path) -> Any:
    try:
        array = cast(zarr.Array, group[key])
        if not lazy:
            # before counting the chunks: a shape of 10^12 rows would exhaust memory there
            check_allocation(array.nbytes, f"its shape {array.shape} of {array.dtype}")
        if array.nchunks_initialized != array.nchunks:
            raise ValueError(f"{array.nchunks - array.nchunks_initialized} chunk(s) missing")
        if lazy:
            return array
        return array[...]
    except Exception as err:
        raise ValueError(
            f"outputs store {str(path)!r} is corrupted: split {split!r}, array {key!r} cannot be "
            f"read: {err or type(err).__name__}"
        ) from err


def read_outputs(path: str | os.PathLike[str], *, lazy: bool = False) -> RunOutputs:
    """Read the outputs store at ``path`` and validate it.

    With ``lazy=False`` every array is loaded into memory and fully validated (dtypes, shapes,
    finite values, labels in [-1, K)). With ``lazy=True`` the split arrays are returned as
    ``zarr.Array`` objects that read chunk by chunk on slicing (only dtypes and shapes are
    checked); use :func:`iter_sample_chunks` to stream a store larger than memory. A corrupted or
    truncated store raises one ``ValueError`` naming the store, split and array.

    Every file read is checked against the SHA-256 the writer recorded; the store's metadata
    must describe exactly the splits and arrays present, each array with its CRC32C codec. A
    store replaced by a concurrent writer while it is read is read again, so the result is
    wholly the old or wholly the new store. Lazily returned arrays read chunks later: a chunk
    of a store replaced since raises ``ValueError`` instead of mixing two stores.
    """
    target = Path(path)
    return _consistent(target, lambda root: _read_run(root, target, lazy))


def _read_run(root: zarr.Group, target: Path, lazy: bool) -> RunOutputs:
    splits: dict[str, SplitOutputs] = {}
    for name, group in _split_groups(root, target):
        attrs: dict[str, Any] = dict(group.attrs)
        found = set(group.array_keys())
        present = set(attrs.get("arrays", found))
        missing = sorted(present - found)
        if missing:
            raise ValueError(
                f"outputs store {str(target)!r} is corrupted: split {name!r} lacks the stored "
                f"array(s) {missing}"
            )
        arrays = {
            key: _load(group, key, name, lazy, target) if key in present else None
            for key in _SPLIT_ARRAYS
        }
        if arrays["labels"] is None or arrays["logits"] is None:
            raise ValueError(
                f"outputs store {str(target)!r} is corrupted: split {name!r} lacks labels/logits"
            )
        heads = {
            head: _load(group, f"heads/{index:04d}", name, lazy, target)
            for index, head in enumerate(attrs.get("heads", []))
        }
        splits[name] = SplitOutputs(
            labels=arrays["labels"],
            logits=arrays["logits"],
            mcd_logits=arrays["mcd_logits"],
            features=arrays["features"],
            heads=heads,
            kind=attrs.get("kind", ""),
            groups=arrays["groups"],
        )
    meta = dict(_attr(root, "meta", {}))
    for key in _attr(root, "meta_arrays", []):
        meta[key] = _load(root, f"meta_arrays/{key}", "meta", False, target)
    run = RunOutputs(splits=splits, meta=meta)
    try:
        validate_run(run, check_values=not lazy)
    except (TypeError, ValueError) as err:
        raise ValueError(f"outputs store {str(target)!r} is invalid: {err}") from err
    return run


def iter_sample_chunks(
    path: str | os.PathLike[str],
    split: str,
    *,
    arrays: Sequence[str] = ("labels", "logits"),
    chunk_size: int | None = None,
) -> Iterator[dict[str, np.ndarray]]:
    """Stream one split of a store in consecutive blocks of samples.

    Yields dicts mapping each requested array name (``labels``, ``logits``, ``mcd_logits``,
    ``features`` or ``heads/<name>``) to a NumPy block of at most ``chunk_size`` samples (default:
    the stored chunk length of the first array), so memory stays bounded by one block.
    """
    target = Path(path)
    root = _consistent(target, lambda root: root)
    groups = dict(_split_groups(root, target))
    if split not in groups:
        raise ValueError(f"split must be one of {sorted(groups)}, got {split!r}")
    group = groups[split]
    heads = list(_attr(group, "heads", []))
    lazy: dict[str, zarr.Array] = {}
    for name in arrays:
        if name.startswith("heads/"):
            head = name.removeprefix("heads/")
            if head not in heads:
                raise ValueError(f"split {split!r} has no head {head!r}; heads: {heads}")
            key = f"heads/{heads.index(head):04d}"
        else:
            if name not in _SPLIT_ARRAYS:
                raise ValueError(f"arrays entries must be in {_SPLIT_ARRAYS} or 'heads/<name>'")
            key = name
        if key not in group.array_keys() and not key.startswith("heads/"):
            raise ValueError(f"split {split!r} has no array {name!r}")
        lazy[name] = _load(group, key, split, True, target)
    if not lazy:
        raise ValueError("arrays must name at least one array")
    first = next(iter(lazy.values()))
    n = first.shape[0]
    step = first.chunks[0] if chunk_size is None else int(chunk_size)
    if step < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    for start in range(0, n, step):
        block: dict[str, Any] = {}
        for name, array in lazy.items():
            try:
                block[name] = array[start : start + step]
            except Exception as err:
                raise ValueError(
                    f"outputs store {str(target)!r} is corrupted: split {split!r}, array "
                    f"{name!r}, samples {start}:{start + step} cannot be read: {err}"
                ) from err
        yield block
