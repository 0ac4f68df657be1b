"""Zoo members on disk: discovery, metadata, and reading their outputs block by block."""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from fdbench.core.validation import (
    REAL_KINDS,
    check_allocation,
    check_finite,
    check_integers,
    npz_headers,
)

from .urls import is_url, list_files, open_url

__all__ = [
    "SPLITS",
    "Member",
    "check_member",
    "declared_val_mask",
    "discover_members",
    "has_array",
    "iter_blocks",
    "read_array",
    "read_metadata",
]

#: The splits of a member: ID validation, ID test, the OOD class pool and the extra OOD set
#: ImageNet-O (Hendrycks et al., 2021), evaluated as a whole.
SPLITS = ("val", "test", "ood", "imagenet_o")
METADATA_FILES = ("members.csv", "members.json")


@dataclass(frozen=True)
class Member:
    """One zoo member: its name, where its outputs are (``kind``: ``"npz"`` or ``"store"``;
    ``path`` a file system path, or for an ``.npz`` member an fsspec URL string) and its
    metadata row (family, params, regime, has_dropout, ...; possibly empty)."""

    name: str
    path: Path | str
    kind: str
    meta: dict[str, Any] = field(default_factory=dict)


def read_metadata(folder: str | Path) -> pd.DataFrame:
    """The zoo's ``members.csv`` or ``members.json`` (a list of objects) as a table with a
    ``name`` column; an empty table when the folder has neither. ``folder`` may be an fsspec
    URL (:mod:`fdbench.zoo.urls`)."""
    found: list[Path | str]
    if isinstance(folder, str) and is_url(folder):
        files = list_files(folder)
        found = [files[f] for f in METADATA_FILES if f in files]
    else:
        folder = Path(folder)
        found = [folder / f for f in METADATA_FILES if (folder / f).is_file()]
    if len(found) > 1:
        raise ValueError(f"zoo folder {folder} holds both members.csv and members.json; keep one")
    if not found:
        return pd.DataFrame({"name": pd.Series(dtype=str)})
    path = found[0]
    with _opened(path) as source:
        text = source.read_bytes() if isinstance(source, Path) else source.read()
    if str(path).endswith(".csv"):
        table = pd.read_csv(io.BytesIO(text))
    else:
        rows = json.loads(text)
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ValueError(f"{path}: expected a JSON list of objects, one per member")
        table = pd.DataFrame(rows)
    if "name" not in table.columns:
        raise ValueError(f"{path}: expected a 'name' column naming each member")
    table["name"] = table["name"].astype(str)
    duplicated = table["name"][table["name"].duplicated()].tolist()
    if duplicated:
        raise ValueError(f"{path}: member {duplicated[0]!r} is listed twice")
    return table


@contextmanager
def _opened(path: Path | str) -> Iterator[Path | IO[bytes]]:
    """A path as it is, or an fsspec URL opened for reading bytes (closed on exit)."""
    if isinstance(path, Path):
        yield path
        return
    with open_url(path) as fh:
        yield fh


def _is_store(path: Path) -> bool:
    return path.is_dir() and (path / "zarr.json").is_file()


def _entries(folder: str | Path) -> Iterator[tuple[str, Path | str, str]]:
    """(name, where, kind) of every member inside ``folder``, sorted by file name."""
    if isinstance(folder, str) and is_url(folder):
        for file, url in sorted(list_files(folder).items()):
            if file.endswith(".npz") and not file.startswith("."):
                yield file.removesuffix(".npz"), url, "npz"
        return
    folder = Path(folder)
    if not folder.is_dir():
        raise NotADirectoryError(f"zoo folder {folder} does not exist or is not a directory")
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.suffix == ".npz" and path.is_file():
            yield path.stem, path, "npz"
        elif _is_store(path):
            yield path.name, path, "store"


def discover_members(folder: str | Path) -> list[Member]:
    """Every member of the zoo folder, sorted by name: each ``*.npz`` file and each fdbench
    outputs store (a Zarr directory) directly inside it, with its metadata row.

    ``folder`` may be an fsspec URL (``s3://bucket/zoo``, :mod:`fdbench.zoo.urls`): its
    ``.npz`` members are then read through fsspec, with the same checks."""
    members: dict[str, Member] = {}
    meta = read_metadata(folder).set_index("name")
    for name, path, kind in _entries(folder):
        if name in members:
            raise ValueError(f"zoo folder {folder}: two members are named {name!r}")
        row = meta.loc[name].dropna().to_dict() if name in meta.index else {}
        members[name] = Member(name, path, kind, {k: _plain(v) for k, v in row.items()})
    if not members:
        raise ValueError(f"zoo folder {folder} holds no member (.npz files or outputs stores)")
    unknown = sorted(set(meta.index) - set(members))
    if unknown:
        raise ValueError(f"zoo metadata names {unknown[0]!r}, which is not a member of {folder}")
    return list(members.values())


#: What reading a damaged ``.npz`` raises (truncated zip, bad deflate stream, empty file, ...).
_NPZ_ERRORS = (OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


@contextmanager
def _readable(member: Member) -> Iterator[None]:
    """Turn the errors of a damaged ``.npz`` member into one ``ValueError`` naming it."""
    try:
        yield
    except _NPZ_ERRORS as err:
        raise ValueError(f"cannot read zoo member {member.name!r} ({member.path}): {err}") from err


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _npz_key(split: str, array: str) -> str:
    if array == "classes":
        return "ood_classes"
    return f"{split}_{array}"


def _npz_names(path: Path | str) -> set[str]:
    with _opened(path) as source, zipfile.ZipFile(source) as archive:
        return {n.removesuffix(".npy") for n in archive.namelist()}


def has_array(member: Member, split: str, array: str) -> bool:
    """Whether ``member`` stores ``array`` (``logits``, ``labels``, ``mcd_logits``) of
    ``split``."""
    if member.kind == "npz":
        with _readable(member):
            return _npz_key(split, array) in _npz_names(member.path)
    from fdbench.outputs import read_outputs

    run = read_outputs(member.path, lazy=True)
    if split not in run.splits:
        return False
    return getattr(run.splits[split], array, None) is not None


def read_array(member: Member, split: str, array: str) -> np.ndarray:
    """One whole (small) array of a member: ``labels`` of a split, or ``classes`` (the OOD
    class id of each ``ood`` sample)."""
    if member.kind == "npz":
        key = _npz_key(split, array)
        with (
            _readable(member),
            _opened(member.path) as source,
            np.load(source, allow_pickle=False) as data,
        ):
            if key not in data.files:
                raise ValueError(f"member {member.name!r}: {member.path} lacks the array {key!r}")
            return np.asarray(data[key])
    from fdbench.outputs import read_outputs

    run = read_outputs(member.path, lazy=True)
    if array == "classes":
        if "ood_classes" not in run.meta:
            raise ValueError(f"member {member.name!r}: store lacks meta['ood_classes']")
        return np.asarray(run.meta["ood_classes"])
    return np.asarray(getattr(run.splits[split], array)[...])


def _shapes(member: Member) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Shape and dtype of every array of ``member`` by ``.npz`` key (``test_logits``,
    ``ood_classes``, ...), from the ``.npy`` headers or the store's metadata: nothing is read."""
    if member.kind == "npz":
        with _readable(member):
            with _opened(member.path) as source:
                return npz_headers(source, f"zoo member {member.name!r}", name=str(member.path))
    from fdbench.outputs import read_outputs

    run = read_outputs(member.path, lazy=True)
    found = {}
    for split, outputs in run.splits.items():
        for array in ("labels", "logits", "mcd_logits"):
            value = getattr(outputs, array)
            if value is not None:
                found[f"{split}_{array}"] = (tuple(value.shape), np.dtype(value.dtype))
    classes = run.meta.get("ood_classes")
    if classes is not None:
        found["ood_classes"] = (tuple(np.shape(classes)), np.asarray(classes).dtype)
    return found


def check_member(member: Member) -> None:
    """Check that ``member`` holds what the zoo evaluation reads, before any of it is used.

    From the headers (nothing allocated beyond :func:`fdbench.core.validation.memory_limit`):
    ``test_logits`` present; every ``<split>_logits`` of real numbers with shape (N, K),
    K >= 2 and one K for every split (the OOD pool and ImageNet-O included);
    ``<split>_mcd_logits`` (N, S, K); ``test_labels`` and, with ``val_logits``, ``val_labels``
    of shape (N,); ``ood_classes`` (M,) with ``ood_logits``. Then the labels are read: integers
    in [0, K), and the OOD class ids integers >= 0. Non-finite logits are refused as they are
    streamed (:func:`iter_blocks`). Every refusal is one ``ValueError``/``TypeError`` naming
    the member and the array.
    """
    what = f"zoo member {member.name!r}"
    shapes = _shapes(member)
    if "test_logits" not in shapes:
        raise ValueError(f"{what} ({member.path}) lacks the array 'test_logits'")
    k = shapes["test_logits"][0][1:2]
    for split in SPLITS:
        logits = shapes.get(f"{split}_logits")
        if logits is None:
            continue
        shape, dtype = logits
        name = f"{what}: {split}_logits"
        if dtype.kind not in REAL_KINDS:
            raise TypeError(f"{name}: expected real numbers, got dtype {dtype}")
        if len(shape) != 2 or shape[1] < 2 or shape[0] < 1:
            raise ValueError(f"{name}: expected shape (N, K) with N >= 1, K >= 2; got {shape}")
        if shape[1:] != k:
            raise ValueError(
                f"{name}: expected {k[0]} class columns as test_logits has, got shape {shape}"
            )
        mcd = shapes.get(f"{split}_mcd_logits")
        if mcd is not None:
            mshape, mdtype = mcd
            mname = f"{what}: {split}_mcd_logits"
            if mdtype.kind not in REAL_KINDS:
                raise TypeError(f"{mname}: expected real numbers, got dtype {mdtype}")
            if len(mshape) != 3 or mshape[0] != shape[0] or mshape[2] != k[0] or mshape[1] < 1:
                raise ValueError(f"{mname}: expected shape ({shape[0]}, S, {k[0]}), got {mshape}")
        if split in ("test", "val"):
            _check_ids(member, shapes, split, "labels", shape[0], k[0])
        elif split == "ood":
            _check_ids(member, shapes, split, "classes", shape[0], None)


def _check_ids(
    member: Member,
    shapes: dict[str, tuple[tuple[int, ...], np.dtype]],
    split: str,
    array: str,
    n: int,
    n_classes: int | None,
) -> None:
    key = _npz_key(split, array)
    name = f"zoo member {member.name!r}: {key}"
    if key not in shapes:
        raise ValueError(f"{name} is missing; it is required beside {split}_logits")
    shape, dtype = shapes[key]
    if shape != (n,):
        raise ValueError(
            f"{name}: expected shape ({n},) as {split}_logits has {n} rows, got {shape}"
        )
    if dtype.kind not in REAL_KINDS:
        raise TypeError(f"{name}: expected integers, got dtype {dtype}")
    check_allocation(n * dtype.itemsize, name)
    check_integers(read_array(member, split, array), name, low=0, high=n_classes)


def _npz_row_blocks(
    archive: zipfile.ZipFile, key: str, chunk_size: int, what: str
) -> Iterator[np.ndarray]:
    with archive.open(f"{key}.npy") as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ValueError(f"{what}: {key} uses .npy format {version}; expected 1.0 or 2.0")
        if fortran or dtype.hasobject or not shape:
            raise ValueError(f"{what}: {key} must be a C-ordered numeric array")
        row = int(np.prod(shape[1:], dtype=np.int64))
        for start in range(0, shape[0], chunk_size):
            rows = min(chunk_size, shape[0] - start)
            need = rows * row * dtype.itemsize
            buffer = fh.read(need)
            if len(buffer) != need:
                raise ValueError(f"{what}: {key} is truncated")
            yield np.frombuffer(buffer, dtype=dtype).reshape((rows, *shape[1:]))


def iter_blocks(
    member: Member,
    split: str,
    arrays: tuple[str, ...] = ("logits",),
    *,
    chunk_size: int = 4096,
) -> Iterator[dict[str, np.ndarray]]:
    """Stream ``arrays`` of one split of ``member`` in blocks of ``chunk_size`` samples,
    converted to float64 (logits) so that memory holds one block, never the whole split.

    A ``.npz`` member is read straight from its zip entries (decompressing as it goes); an
    outputs store through :func:`fdbench.outputs.iter_sample_chunks`. A NaN or infinite value
    is a ``ValueError`` naming the member, the array and the sample.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1; got {chunk_size}")
    for start, block in enumerate(_raw_blocks(member, split, arrays, chunk_size)):
        for key, values in block.items():
            if not np.isfinite(values).all():
                rows = np.flatnonzero(~np.isfinite(values).reshape(values.shape[0], -1).all(axis=1))
                check_finite(
                    values[rows[0]],
                    f"zoo member {member.name!r}: {_npz_key(split, key)}, sample "
                    f"{start * chunk_size + int(rows[0])}",
                )
        yield block


def _raw_blocks(
    member: Member, split: str, arrays: tuple[str, ...], chunk_size: int
) -> Iterator[dict[str, np.ndarray]]:
    if member.kind == "store":
        from fdbench.outputs import iter_sample_chunks

        for block in iter_sample_chunks(member.path, split, arrays=arrays, chunk_size=chunk_size):
            yield {k: np.asarray(v, dtype=np.float64) for k, v in block.items()}
        return
    what = f"member {member.name!r} ({member.path})"
    with _readable(member), _opened(member.path) as source, zipfile.ZipFile(source) as archive:
        streams = [_npz_row_blocks(archive, _npz_key(split, a), chunk_size, what) for a in arrays]
        for blocks in zip(*streams, strict=True):
            yield {a: np.asarray(b, dtype=np.float64) for a, b in zip(arrays, blocks, strict=True)}


def declared_val_mask(labels: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """A seeded, class-stratified validation mask over test samples: in each class
    ``round(fraction · n_class)`` samples (at most n_class − 1) become validation.

    The split Galil et al. use on ImageNet (5 000 of the 50 000 validation images, stratified,
    for temperature scaling; the rest evaluated) when a member brings no validation split.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"val_fraction must lie in (0, 1); got {fraction}")
    labels = np.asarray(labels)
    rng = np.random.default_rng(seed)
    mask = np.zeros(labels.shape, dtype=bool)
    order = np.argsort(labels, kind="stable")
    _, starts = np.unique(labels[order], return_index=True)
    for idx in np.split(order, starts[1:]) if labels.size else []:
        n_val = min(round(fraction * idx.size), idx.size - 1)
        mask[rng.choice(idx, n_val, replace=False)] = True
    return mask
