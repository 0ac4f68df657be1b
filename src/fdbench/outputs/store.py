"""Reading and writing the outputs store: one Zarr v3 directory per run, written atomically."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import zarr
from zarr.codecs import BloscCodec, Crc32cCodec

from fdbench.io import default_mode

from .schema import RunOutputs, SplitOutputs, validate_run

__all__ = ["FORMAT_VERSION", "iter_sample_chunks", "read_outputs", "write_outputs"]

FORMAT_VERSION = 1
_FORMAT_KEY = "fdbench_outputs"
_TARGET_CHUNK_BYTES = 8 * 2**20
_SPLIT_ARRAYS = ("labels", "logits", "mcd_logits", "features")


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
    Blosc/zstd and checksummed (CRC32C); values round-trip bit-identically.
    """
    validate_run(run)
    plain_meta, array_meta = _json_meta(run.meta)
    target = Path(path)
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
        _swap_into_place(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap_into_place(tmp: Path, target: Path) -> None:
    if not target.exists():
        os.replace(tmp, target)
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


def _open_root(path: str | os.PathLike[str]) -> zarr.Group:
    target = Path(path)
    if not target.is_dir():
        raise FileNotFoundError(f"no outputs store at {str(target)!r}")
    try:
        root = zarr.open_group(store=str(target), mode="r", zarr_format=3)
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
    return root


def _split_groups(root: zarr.Group, path: Path) -> list[tuple[str, zarr.Group]]:
    names = root.attrs.get("splits")
    if not isinstance(names, list):
        raise ValueError(f"outputs store {str(path)!r} is corrupted: missing split list")
    groups = []
    for index, name in enumerate(names):
        try:
            group = root[f"splits/{index:04d}"]
        except Exception as err:
            raise ValueError(
                f"outputs store {str(path)!r} is corrupted: split {name!r} cannot be opened: {err}"
            ) from err
        groups.append((name, group))
    return groups


def _load(group: zarr.Group, key: str, split: str, lazy: bool, path: Path) -> Any:
    try:
        array = group[key]
        if array.nchunks_initialized != array.nchunks:
            raise ValueError(f"{array.nchunks - array.nchunks_initialized} chunk(s) missing")
        if lazy:
            return array
        return array[...]
    except Exception as err:
        raise ValueError(
            f"outputs store {str(path)!r} is corrupted: split {split!r}, array {key!r} cannot be "
            f"read: {err}"
        ) from err


def read_outputs(path: str | os.PathLike[str], *, lazy: bool = False) -> RunOutputs:
    """Read the outputs store at ``path`` and validate it.

    With ``lazy=False`` every array is loaded into memory and fully validated (dtypes, shapes,
    finite values, labels in [-1, K)). With ``lazy=True`` the split arrays are returned as
    ``zarr.Array`` objects that read chunk by chunk on slicing (only dtypes and shapes are
    checked); use :func:`iter_sample_chunks` to stream a store larger than memory. A corrupted or
    truncated store raises one ``ValueError`` naming the store, split and array.
    """
    target = Path(path)
    root = _open_root(target)
    splits: dict[str, SplitOutputs] = {}
    for name, group in _split_groups(root, target):
        attrs = dict(group.attrs)
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
        )
    meta = dict(root.attrs.get("meta", {}))
    for key in root.attrs.get("meta_arrays", []):
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
    root = _open_root(target)
    groups = dict(_split_groups(root, target))
    if split not in groups:
        raise ValueError(f"split must be one of {sorted(groups)}, got {split!r}")
    group = groups[split]
    heads = list(group.attrs.get("heads", []))
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
        block = {}
        for name, array in lazy.items():
            try:
                block[name] = array[start : start + step]
            except Exception as err:
                raise ValueError(
                    f"outputs store {str(target)!r} is corrupted: split {split!r}, array "
                    f"{name!r}, samples {start}:{start + step} cannot be read: {err}"
                ) from err
        yield block
