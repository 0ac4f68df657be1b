"""Importers of other tools' outputs: plain ``.npz``, ``torch.save`` dumps, FD-Shifts, OpenOOD."""

from __future__ import annotations

import os
import re
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fdbench.core.validation import as_real_array, npz_headers

from .schema import RunOutputs, SplitOutputs, validate_run

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FD_SHIFTS_CORRUPTIONS",
    "FD_SHIFTS_CSFS",
    "FD_SHIFTS_HEADS",
    "SCORE_DUMP_KEYS",
    "TORCH_SUFFIXES",
    "fd_shifts_csf_name",
    "import_fd_shifts",
    "import_npz",
    "import_torch",
    "is_score_dump",
    "read_fd_shifts_config",
    "read_fd_shifts_csfs",
    "read_score_dump",
]

#: FD-Shifts ``eval.ext_confid_name`` -> fdbench head name.
FD_SHIFTS_HEADS = {"devries": "devries", "tcp": "confidnet", "dg": "dg_reservation"}

#: FD-Shifts CSF (``confid``) name -> fdbench CSF name, for the CSFs both compute
#: (fd_shifts/analysis/confid_scores.py; the learned heads are named after
#: ``eval.ext_confid_name``, see :func:`fd_shifts_csf_name`). FD-Shifts' ``temp_mls`` is
#: max softmax(z / T), fdbench's TEMP-MLS; its ``*_mcp`` CSFs are the MSR ones.
FD_SHIFTS_CSFS = {
    "det_mcp": "MSR",
    "det_mls": "MLS",
    "det_pe": "PE",
    "energy_mls": "energy",
    "temp_mls": "TEMP-MLS",
    "mcd_mcp": "MCD-MSR",
    "mcd_pe": "MCD-PE",
    "mcd_ee": "MCD-EE",
    "mcd_mi": "MCD-MI",
    "mcd_mls": "MCD-MLS",
    "maha": "Mahalanobis",
    "dknn": "DKNN",
    "vim": "ViM",
    "devries": "DeVries",
    "dg": "DG-Res",
    "tcp": "ConfidNet",
    "devries_mcd": "DeVries-MCD",
    "dg_mcd": "DG-Res-MCD",
    "tcp_mcd": "ConfidNet-MCD",
}

#: FD-Shifts ``eval.query_studies`` key -> fdbench study kind (new-class studies: see
#: :func:`read_fd_shifts_config`).
_FD_SHIFTS_STUDY_KINDS = {
    "iid_study": "iid",
    "noise_study": "corruption",
    "in_class_study": "subclass",
}
#: The 15 corruption types of FD-Shifts' noise study in the order its ``CorruptCIFAR``
#: (fd_shifts/loaders/dataset_collection.py) stacks the CIFAR-C files; the names are those of
#: fdbench's :data:`fdbench.data.shifts.corruptions.CORRUPTIONS`.
FD_SHIFTS_CORRUPTIONS = (
    "brightness",
    "contrast",
    "defocus_blur",
    "elastic_transform",
    "fog",
    "frost",
    "gaussian_noise",
    "glass_blur",
    "impulse_noise",
    "jpeg_compression",
    "motion_blur",
    "pixelate",
    "shot_noise",
    "snow",
    "zoom_blur",
)
#: Intensity levels per corruption type in FD-Shifts' noise study.
_FD_SHIFTS_NOISE_LEVELS = 5
_INTERPOLATION = re.compile(r"^\$\{([A-Za-z0-9_.]+)\}$")
#: What reading a damaged ``.npz`` raises (truncated zip, bad deflate stream, empty file, ...).
_NPZ_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


def _read_npz(path: Path, what: str) -> dict[str, np.ndarray]:
    """All arrays of the ``.npz`` archive at ``path``; a damaged file, or one whose headers
    state more than its entries hold or than memory allows
    (:func:`fdbench.core.validation.npz_headers`), raises one ``ValueError``."""
    try:
        npz_headers(path, what)
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise ValueError("not an .npz archive")
        with loaded as npz:
            return {key: np.asarray(npz[key]) for key in npz.files}
    except _NPZ_ERRORS as err:
        raise ValueError(f"cannot read {what} {str(path)!r}: {err}") from err


def _integer_labels(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` as int64 class indices: integers (and booleans) as they are, without a
    round trip through float64; floats that hold whole numbers rounded."""
    array = np.asarray(values)
    if array.dtype.kind in "biu":
        if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{what} must hold integers below 2**63")
        return array.astype(np.int64, copy=False)
    values = as_real_array(array, what)
    rounded = np.rint(values)
    if not np.all(np.isfinite(values)) or not np.array_equal(rounded, values):
        raise ValueError(f"{what} must hold integer values")
    return rounded.astype(np.int64)


def _default_kind(name: str, labels: np.ndarray) -> str:
    if name in ("train", "val"):
        return name
    return "new_class" if np.all(labels == -1) else "iid"


def import_npz(
    path: str | os.PathLike[str],
    *,
    kinds: Mapping[str, str] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> RunOutputs:
    """Import a plain ``.npz`` file of model outputs.

    Required keys: ``logits`` (N × K) and ``labels`` (N, integers, -1 = new class). Optional:
    ``study`` or ``group`` (N strings; one split per distinct value, in order of first
    appearance; without it everything is one split ``"iid"``), ``mcd_logits`` (N × S × K),
    ``features`` (N × D), ``head_<name>`` (N) learned confidence heads and ``classes`` (K class
    names). Arrays are converted to float64/int64. ``kinds`` maps split names to study kinds
    (default: the split name if it is ``"train"``/``"val"``, ``"new_class"`` for a split of
    new-class samples only, else ``"iid"``).
    """
    file = Path(path)
    return _run_from_arrays(_read_npz(file, "npz file"), file, "npz file", kinds, meta)


def _run_from_arrays(
    data: Mapping[str, np.ndarray],
    file: Path,
    what: str,
    kinds: Mapping[str, str] | None,
    meta: Mapping[str, Any] | None,
) -> RunOutputs:
    """The run of the arrays of :func:`import_npz`'s layout read from ``file`` (a ``what``)."""
    where = f"{what} {str(file)!r}"
    for key in ("logits", "labels"):
        if key not in data:
            raise ValueError(f"{where} lacks the required array {key!r}")
    logits = as_real_array(data["logits"], f"{where}: logits")
    if logits.ndim != 2 or logits.shape[1] < 2:
        raise ValueError(f"{where}: logits must have shape (N, K) with K >= 2; got {logits.shape}")
    if logits.shape[0] == 0:
        raise ValueError(f"{where} holds no samples (logits has 0 rows)")
    if np.shape(data["labels"]) != (logits.shape[0],):
        raise ValueError(
            f"{where}: labels must have shape ({logits.shape[0]},) to match the "
            f"logits; got {np.shape(data['labels'])}"
        )
    labels = _integer_labels(data["labels"], f"{str(file)!r}: labels")
    group_key = "study" if "study" in data else ("group" if "group" in data else None)
    n = logits.shape[0]
    rows_of: dict[str, slice | np.ndarray] = {"iid": slice(0, n)}
    if group_key is not None:
        groups = np.asarray(data[group_key]).astype(str)
        if groups.shape != (n,):
            raise ValueError(f"{group_key} must have shape ({n},), got {groups.shape}")
        _, first = np.unique(groups, return_index=True)
        names = [str(groups[i]) for i in np.sort(first)]
        rows_of = {name: _split_rows(groups == name) for name in names}
    optional = {"mcd_logits": ("N, S, K", 3), "features": ("N, D", 2)}
    optional.update({key: ("N", 1) for key in data if key.startswith("head_")})
    arrays = {key: as_real_array(data[key], f"{where}: {key}") for key in optional if key in data}
    for key, array in arrays.items():
        shape, ndim = optional[key]
        if (
            array.ndim != ndim
            or array.shape[0] != n
            or (key == "mcd_logits" and array.shape[2] != logits.shape[1])
        ):
            raise ValueError(
                f"{where}: {key} must have shape ({shape}) with N = {n} samples "
                f"and K = {logits.shape[1]} classes as the logits; got {array.shape}"
            )
    mcd = arrays.get("mcd_logits")
    features = arrays.get("features")
    heads = {k.removeprefix("head_"): v for k, v in arrays.items() if k.startswith("head_")}
    kinds = dict(kinds or {})
    splits = {}
    for name, rows in rows_of.items():
        splits[name] = SplitOutputs(
            labels=labels[rows],
            logits=logits[rows],
            mcd_logits=None if mcd is None else mcd[rows],
            features=None if features is None else features[rows],
            heads={h: v[rows] for h, v in heads.items()},
            kind=kinds.get(name, _default_kind(name, labels[rows])),
        )
    run_meta = dict(meta or {})
    if "classes" in data and "classes" not in run_meta:
        run_meta["classes"] = [str(c) for c in np.asarray(data["classes"]).tolist()]
    run = RunOutputs(splits=splits, meta=run_meta)
    validate_run(run)
    return run


def _split_rows(mask: np.ndarray) -> slice | np.ndarray:
    """The rows of one split: a slice when they are consecutive (a file of one split, or of
    splits stored one after another), whose arrays are views of the file's arrays instead of
    copies (the logits are held once), else the boolean ``mask``."""
    where = np.flatnonzero(mask)
    first, last = int(where[0]), int(where[-1])
    return slice(first, last + 1) if last - first + 1 == where.size else mask


#: Suffixes of files written by ``torch.save`` that :func:`import_torch` reads.
TORCH_SUFFIXES = (".pt", ".pth")
#: Other names of the ``labels`` array in ``torch.save`` dumps (torch-uncertainty's
#: ``targets``, pytorch-ood's ``y``; new-class samples negative as pytorch-ood marks them).
_LABEL_ALIASES = ("targets", "target", "y")
#: The arrays of an OpenOOD score dump (``OODEvaluator._save_scores`` in
#: ``openood/evaluators/ood_evaluator.py`` of Jingkang50/OpenOOD: ``np.savez(..., pred=pred,
#: conf=conf, label=gt)``, one file per data set, out-of-distribution labels -1).
SCORE_DUMP_KEYS = ("pred", "conf", "label")


def _read_torch(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a mapping saved with ``torch.save`` at ``path``, loaded with
    ``weights_only=True`` (tensors, numbers, strings and containers only: a pickle that would
    build any other object, or run code, is refused with a ``ValueError``)."""
    import pickle

    try:
        import torch
    except ImportError as error:
        raise ImportError(
            f"reading {path.name} needs PyTorch: install fdbench with the 'train' extra"
        ) from error
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(
            f"refused to read torch file {str(path)!r}: it holds objects other than tensors, "
            f"numbers and strings (loaded with weights_only=True: {first})"
        ) from None
    except (OSError, RuntimeError, EOFError) as error:
        raise ValueError(f"cannot read torch file {str(path)!r}: {error}") from error
    if not isinstance(loaded, Mapping):
        raise ValueError(
            f"torch file {str(path)!r} must hold a mapping of names to tensors, "
            f"got {type(loaded).__name__}"
        )
    out = {}
    for key, value in loaded.items():
        if isinstance(value, torch.Tensor):
            tensor = value.detach().cpu()
            if tensor.dtype in (torch.bfloat16, torch.float16):
                tensor = tensor.double()
            out[str(key)] = tensor.numpy()
        else:
            out[str(key)] = np.asarray(value)
    return out


def import_torch(
    path: str | os.PathLike[str],
    *,
    kinds: Mapping[str, str] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> RunOutputs:
    """Import model outputs saved with ``torch.save`` as a mapping of tensors (the habit of
    pytorch-ood and torch-uncertainty users: ``torch.save({"logits": z, "targets": y}, f)``).

    The keys are those of :func:`import_npz` (``logits``, ``labels``, optional ``study``
    as a list of strings, ``mcd_logits``, ``features``, ``head_<name>``, ``classes``);
    ``labels`` may also be called ``targets``, ``target`` or ``y``. Read with
    ``torch.load(..., weights_only=True)``: nothing executable is unpickled, and a file that
    would need it is refused with a ``ValueError``. Needs PyTorch.
    """
    file = Path(path)
    data = _read_torch(file)
    if "labels" not in data:
        alias = next((a for a in _LABEL_ALIASES if a in data), None)
        if alias is not None:
            data["labels"] = data.pop(alias)
    return _run_from_arrays(data, file, "torch file", kinds, meta)


def _dump_arrays(path: Path) -> dict[str, np.ndarray]:
    if path.suffix.lower() in TORCH_SUFFIXES:
        return _read_torch(path)
    return _read_npz(path, "score dump")


def _dump_keys(path: Path) -> set[str] | None:
    """The array names of an ``.npz`` or torch file, ``None`` if it is neither or unreadable."""
    if path.suffix.lower() == ".npz":
        try:
            with np.load(path, allow_pickle=False) as npz:
                return set(npz.files)
        except (*_NPZ_ERRORS, AttributeError):
            return None
    if path.suffix.lower() in TORCH_SUFFIXES:
        try:
            return set(_read_torch(path))
        except (ValueError, ImportError):
            return None
    return None


def is_score_dump(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an OpenOOD-style score dump (:func:`read_score_dump`): an ``.npz`` or
    torch file with ``pred``, ``conf`` and ``label`` and no ``logits``, or a folder of such
    files (and nothing that makes it an outputs store or an FD-Shifts run)."""
    path = Path(path)
    if path.is_dir():
        if (path / "zarr.json").exists() or (path / "raw_logits.npz").exists():
            return False
        files = _dump_files(path)
        return bool(files) and all(is_score_dump(f) for f in files)
    keys = _dump_keys(path) if path.is_file() else None
    return keys is not None and set(SCORE_DUMP_KEYS) <= keys and "logits" not in keys


def _dump_files(folder: Path) -> list[Path]:
    suffixes = (".npz", *TORCH_SUFFIXES)
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in suffixes)


def read_score_dump(path: str | os.PathLike[str], *, iid_study: str = "iid") -> pd.DataFrame:
    """Read OpenOOD-style score dumps into the confidence table of
    :func:`fdbench.evaluation.tables.read_confidence_table` (columns ``study``, ``label``,
    ``prediction``, ``conf``).

    ``path`` is one file or a folder of files (OpenOOD's ``scores/``: one ``<data set>.npz``
    per data set), each an ``.npz`` (or ``torch.save`` mapping) with ``pred`` (predicted
    class), ``conf`` (confidence, higher = more confident, as OpenOOD's post-processors
    return it) and ``label`` (true class, -1 for an out-of-distribution sample, as OpenOOD
    v1.5 saves its OOD sets). Each file is one study named after the file (its stem); in a
    folder, the one file without -1 labels (the in-distribution test set) is named
    ``iid_study``. A single file is one study ``iid_study`` unless all its labels are -1.
    Values are validated, never coerced: integer predictions and labels >= -1, finite
    confidences.
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"score dump not found: {path}")
    files = _dump_files(path) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"{str(path)!r} holds no .npz or torch score files")
    parts = {f.stem: _score_part(f) for f in files}
    known = [name for name, part in parts.items() if (part["label"] >= 0).all()]
    if len(known) == 1 and iid_study not in parts:
        parts = {iid_study if n == known[0] else n: part for n, part in parts.items()}
    frames = [pd.DataFrame({"study": name, **part}) for name, part in parts.items()]
    return pd.concat(frames, ignore_index=True)[["study", "label", "prediction", "conf"]]


def _score_part(file: Path) -> dict[str, np.ndarray]:
    data = _dump_arrays(file)
    where = f"score dump {str(file)!r}"
    missing = [k for k in SCORE_DUMP_KEYS if k not in data]
    if missing:
        raise ValueError(f"{where} lacks {missing} (expected {list(SCORE_DUMP_KEYS)})")
    conf = as_real_array(data["conf"], f"{where}: conf")
    n = conf.shape[0] if conf.ndim == 1 else -1
    if n < 1:
        raise ValueError(f"{where}: conf must be one non-empty row of N values, got {conf.shape}")
    for key in ("pred", "label"):
        if np.shape(data[key]) != (n,):
            raise ValueError(f"{where}: {key} must have shape ({n},), got {np.shape(data[key])}")
    if not np.isfinite(conf).all():
        raise ValueError(f"{where}: conf holds {int((~np.isfinite(conf)).sum())} non-finite values")
    labels = _integer_labels(data["label"], f"{where}: label")
    if (labels < -1).any():
        raise ValueError(f"{where}: label must be >= -1 (-1 marks an out-of-distribution sample)")
    prediction = _integer_labels(data["pred"], f"{where}: pred")
    return {"label": labels, "prediction": prediction, "conf": conf}


def _load_arr0(path: Path) -> np.ndarray | None:
    """The array ``arr_0`` (else the first array) of an FD-Shifts file; None if it is absent."""
    if not path.is_file():
        return None
    arrays = _read_npz(path, "FD-Shifts file")
    if not arrays:
        raise ValueError(f"cannot read FD-Shifts file {str(path)!r}: it holds no array")
    return arrays.get("arr_0", next(iter(arrays.values())))


def _resolve(value: Any, config: Mapping[str, Any], what: str) -> Any:
    """Resolve an OmegaConf interpolation ``${a.b}`` that names another key of ``config``."""
    match = _INTERPOLATION.match(value) if isinstance(value, str) else None
    if match is None:
        return value
    node: Any = config
    for key in match.group(1).split("."):
        if not isinstance(node, Mapping) or key not in node:
            raise ValueError(f"{what}: cannot resolve {value!r} in the FD-Shifts config")
        node = node[key]
    return _resolve(node, config, what)


def _dataset_name(entry: Any, config: Mapping[str, Any], what: str) -> str:
    entry = _resolve(entry, config, what)
    if isinstance(entry, Mapping):
        entry = _resolve(entry.get("dataset"), config, what)
    if not isinstance(entry, str) or not entry:
        raise ValueError(f"{what} must name datasets (str or {{dataset: str}}), got {entry!r}")
    return entry


def _split_noise_study(name: str, split: SplitOutputs, file: Path) -> dict[str, SplitOutputs]:
    """FD-Shifts' noise-study split ``name`` as 15 × 5 splits ``corruption/<type>/<severity>``.

    The samples are ordered type by type (:data:`FD_SHIFTS_CORRUPTIONS`, the order in which
    ``CorruptCIFAR`` in fd_shifts/loaders/dataset_collection.py stacks the CIFAR-C files), each
    type severity 1 to 5 (the order of the rows in a CIFAR-C file), each severity the same N
    images: FD-Shifts' ``filter_noise_study_data`` (fd_shifts/analysis/studies.py) reshapes them
    to 15 × 5 × N and evaluates ``[:, level]``, which fdbench's pooled studies
    ``corruption/<severity>`` rebuild from these splits. FD-Shifts' reshape fails on any other
    size (only its ``fast_dev_run`` debugging mode skips it), so this raises ValueError naming
    ``file``.
    """
    cells = len(FD_SHIFTS_CORRUPTIONS) * _FD_SHIFTS_NOISE_LEVELS
    n = split.labels.shape[0]
    if n % cells:
        raise ValueError(
            f"{str(file)!r}: the noise-study (corruption) dataset {name!r} has {n} samples; "
            f"FD-Shifts' layout is {len(FD_SHIFTS_CORRUPTIONS)} corruption types × "
            f"{_FD_SHIFTS_NOISE_LEVELS} intensities × N images (type-major, as in "
            f"filter_noise_study_data), so the size must be a multiple of {cells}. Pass "
            f"kinds={{{name!r}: 'iid'}} to import it as one split."
        )
    size = n // cells
    parts = {}
    for t, corruption in enumerate(FD_SHIFTS_CORRUPTIONS):
        for level in range(_FD_SHIFTS_NOISE_LEVELS):
            start = (t * _FD_SHIFTS_NOISE_LEVELS + level) * size
            rows = slice(start, start + size)
            parts[f"corruption/{corruption}/{level + 1}"] = SplitOutputs(
                labels=split.labels[rows],
                logits=split.logits[rows],
                mcd_logits=None if split.mcd_logits is None else split.mcd_logits[rows],
                features=None if split.features is None else split.features[rows],
                heads={h: v[rows] for h, v in split.heads.items()},
                kind=split.kind,
            )
    return parts


def _read_eval_section(file: Path) -> tuple[Mapping, Mapping]:
    """The parsed Hydra ``config.yaml`` of an FD-Shifts run and its ``eval`` section."""
    from fdbench.core.yaml import load_yaml

    config = load_yaml(file, what="FD-Shifts config")
    evaluation = config.get("eval") if isinstance(config, Mapping) else None
    if not isinstance(evaluation, Mapping):
        raise ValueError(f"FD-Shifts config {str(file)!r} has no 'eval' section")
    return config, evaluation


def read_fd_shifts_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read what :func:`import_fd_shifts` needs from an FD-Shifts run's ``hydra/config.yaml``.

    Returns ``val_tuning`` (``eval.val_tuning``, default True), ``ext_confid_name``
    (``eval.ext_confid_name``; None when unset or ``???``), ``dataset_names`` (the datasets of
    ``eval.query_studies`` after the i.i.d. one, flattened in config order as FD-Shifts'
    ``ExperimentData.dataset_name_to_idx`` does) and ``kinds`` (split name -> study kind:
    ``noise_study`` -> ``corruption``, ``in_class_study`` -> ``subclass``, ``new_class_study`` ->
    ``new_class_semantic`` when both the i.i.d. and the new dataset are CIFAR sets, else
    ``new_class_nonsemantic``, the s-ncs / ns-ncs split of FD-Shifts' reporting). Simple
    interpolations ``${a.b}`` (e.g. ``iid_study: ${data.dataset}``) are resolved.
    """
    file = Path(path)
    config, evaluation = _read_eval_section(file)
    what = f"{str(file)!r}: eval.query_studies"
    studies = _resolve(evaluation.get("query_studies") or {}, config, what)
    if not isinstance(studies, Mapping):
        raise ValueError(f"{what} must be a mapping, got {type(studies).__name__}")
    flat: list[tuple[str, str]] = []
    for study, datasets in studies.items():
        datasets = _resolve(datasets, config, what)
        if datasets is None:
            continue
        entries = datasets if isinstance(datasets, list) else [datasets]
        flat += [(str(study), _dataset_name(e, config, f"{what}.{study}")) for e in entries]
    if not flat or flat[0][0] != "iid_study":
        raise ValueError(f"{what} must start with iid_study")
    iid = flat[0][1]
    kinds = {}
    for study, name in flat[1:]:
        if study == "new_class_study":
            semantic = "cifar" in iid and "cifar" in name
            kinds[name] = "new_class_semantic" if semantic else "new_class_nonsemantic"
        else:
            kinds[name] = _FD_SHIFTS_STUDY_KINDS.get(study, "iid")
    ext = _resolve(evaluation.get("ext_confid_name"), config, f"{str(file)!r}: ext_confid_name")
    val_tuning = _resolve(evaluation.get("val_tuning", True), config, str(file))
    if not isinstance(val_tuning, bool):
        raise ValueError(f"{str(file)!r}: eval.val_tuning must be a bool, got {val_tuning!r}")
    return {
        "val_tuning": val_tuning,
        "ext_confid_name": None if ext in (None, "???") else str(ext),
        "dataset_names": [name for _, name in flat[1:]],
        "kinds": kinds,
    }


def fd_shifts_csf_name(name: str, ext_confid_name: str | None = None) -> str | None:
    """The fdbench CSF name of FD-Shifts' CSF ``name`` (None where fdbench has no such CSF).

    ``ext`` and ``ext_mcd`` stand for the learned head named by ``ext_confid_name`` (FD-Shifts'
    ``Analysis._fix_external_confid_name``): ``ext`` with ``"dg"`` is DG-Res. FD-Shifts CSFs
    fdbench does not compute (``mcd_sv``, ``mcd_waic``, ``react_*``, ``*_qt``, ...) give None.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if name in ("ext", "ext_mcd"):
        if ext_confid_name is None:
            return None
        name = ext_confid_name + name[3:]
    return FD_SHIFTS_CSFS.get(name)


def read_fd_shifts_csfs(path: str | os.PathLike[str]) -> list[str]:
    """fdbench names of the CSFs an FD-Shifts run's config lists for its test set.

    Reads ``eval.confidence_measures.test`` of the Hydra ``config.yaml`` at ``path`` and maps
    each entry with :func:`fd_shifts_csf_name` (``eval.ext_confid_name`` resolving ``ext``),
    in config order, leaving out those fdbench does not compute: e.g. ``temp_mls`` becomes
    ``TEMP-MLS``, ``det_mcp`` ``MSR``.
    """
    file = Path(path)
    config, evaluation = _read_eval_section(file)
    measures = _resolve(evaluation.get("confidence_measures") or {}, config, str(file))
    if not isinstance(measures, Mapping):
        raise ValueError(f"{str(file)!r}: eval.confidence_measures must be a mapping")
    listed = _resolve(measures.get("test") or [], config, str(file))
    if not isinstance(listed, list):
        raise ValueError(f"{str(file)!r}: eval.confidence_measures.test must be a list")
    ext = _resolve(evaluation.get("ext_confid_name"), config, str(file))
    ext = None if ext in (None, "???") else str(ext)
    names = [fd_shifts_csf_name(str(entry), ext) for entry in listed]
    return [name for name in dict.fromkeys(names) if name is not None]


#: The files of an FD-Shifts ``test_results`` folder besides ``raw_logits.npz``, each optional.
FD_SHIFTS_OPTIONAL_FILES = (
    "raw_logits_dist.npz",
    "external_confids.npz",
    "external_confids_dist.npz",
    "encoded_output.npz",
    "train_features.npz",
    "last_layer.npz",
)


def import_fd_shifts(
    directory: str | os.PathLike[str],
    *,
    config: str | os.PathLike[str] | None = None,
    dataset_names: Sequence[str] | None = None,
    val_tuning: bool | None = None,
    kinds: Mapping[str, str] | None = None,
    ext_confid_name: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> RunOutputs:
    """Import an FD-Shifts ``test_results`` directory (github.com/IML-DKFZ/fd-shifts).

    The run's settings come from its Hydra config (``config``, by default
    ``<directory>/../hydra/config.yaml`` where FD-Shifts writes it, read with
    :func:`read_fd_shifts_config`): ``val_tuning``, ``ext_confid_name``, the dataset names and
    the study kinds. Arguments given explicitly override the config; without a config
    ``val_tuning`` defaults to True, names to ``dataset_<i>`` and kinds to ``"iid"``.

    Layout, as written by FD-Shifts' ``ConfidMonitor.on_test_end`` and read by
    ``fd_shifts.analysis.ExperimentData.from_experiment`` (arrays stored as ``arr_0``, often in
    float16; everything is converted to float64 here, labels rounded to int64):

    - ``raw_logits.npz``: N × (K+2): logits, then label, then ``dataset_idx`` (the index of the
      test dataloader). With ``eval.val_tuning`` (``val_tuning=True``) index 0 is the validation
      set and index ``i >= 1`` the (i-1)-th dataset of the flattened ``eval.query_studies``, whose
      first entry is the i.i.d. test set; without it index 0 is the i.i.d. test set.
    - ``raw_logits_dist.npz`` (optional): N × K × S MC-dropout logits (class axis before the
      sample axis; FD-Shifts applies softmax over axis 1 and averages over axis 2). Transposed
      here to N × S × K.
    - ``external_confids.npz`` (optional): N learned confidences; ``ext_confid_name`` says which
      head: ``"devries"`` (sigmoid output), ``"tcp"`` (ConfidNet) or ``"dg"`` (DeepGamblers,
      stored by FD-Shifts as 1 - reservation; converted back to the reservation probability).
    - ``external_confids_dist.npz`` (optional): N × S per-MC-sample confidences; stored as head
      ``<head>_mcd`` holding their mean over samples (FD-Shifts' ``*_mcd`` CSFs).
    - ``encoded_output.npz`` (optional): N × (D+1): penultimate features, then ``dataset_idx``.
    - ``train_features.npz`` (optional): M × (D+1): training features, then label. Becomes the
      ``train`` split when ``last_layer.npz`` is present (its logits are then computed as
      ``features @ W.T + b``); otherwise it is skipped because a split needs logits.
    - ``last_layer.npz`` (optional): W (K × D) and b (K), stored as ``meta["fc_weight"]`` and
      ``meta["fc_bias"]``.

    Split names: ``"val"`` (kind ``val``), ``"iid"``, then ``dataset_names`` in config order after
    the i.i.d. set (default ``dataset_<i>`` for dataset index i). ``kinds`` maps split names to
    study kinds (default ``"iid"``); samples of a split whose kind starts with ``"new_class"``
    get label -1. A dataset of kind ``"corruption"`` (FD-Shifts' ``noise_study``, e.g.
    ``corrupt_cifar10``) becomes 75 splits ``corruption/<type>/<severity>``: its samples are 15
    types in the order of :data:`FD_SHIFTS_CORRUPTIONS`, each 5 intensities, each N images, as
    FD-Shifts' ``filter_noise_study_data`` (fd_shifts/analysis/studies.py) reshapes them; its
    size must be a multiple of 75 (ValueError otherwise). Evaluation pools them into the studies
    ``corruption/<severity>`` that FD-Shifts reports. Note that FD-Shifts' DeepGamblers runs
    store softmax probabilities, not logits, in ``raw_logits.npz``.
    """
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"no FD-Shifts output directory at {str(root)!r}")
    config_path = root.parent / "hydra" / "config.yaml" if config is None else Path(config)
    if config is not None and not config_path.is_file():
        raise FileNotFoundError(f"no FD-Shifts config at {str(config_path)!r}")
    settings = read_fd_shifts_config(config_path) if config_path.is_file() else {}
    if val_tuning is None:
        val_tuning = settings.get("val_tuning", True)
    if ext_confid_name is None:
        ext_confid_name = settings.get("ext_confid_name")
    if dataset_names is None:
        dataset_names = settings.get("dataset_names")
    kinds = {**settings.get("kinds", {}), **(kinds or {})}
    raw = _load_arr0(root / "raw_logits.npz")
    if raw is None:
        raise ValueError(f"{str(root)!r} lacks raw_logits.npz (FD-Shifts logits)")
    raw = raw.astype(np.float64)
    if raw.ndim != 2 or raw.shape[1] < 3:
        raise ValueError(f"raw_logits.npz must have shape N × (K+2), got {raw.shape}")
    logits = raw[:, :-2]
    n, k = logits.shape
    labels = _integer_labels(raw[:, -2], "raw_logits.npz label column")
    dataset_idx = _integer_labels(raw[:, -1], "raw_logits.npz dataset_idx column")

    mcd = _load_arr0(root / "raw_logits_dist.npz")
    if mcd is not None:
        mcd = mcd.astype(np.float64)
        if mcd.ndim != 3 or mcd.shape[:2] != (n, k):
            raise ValueError(f"raw_logits_dist.npz must have shape ({n}, {k}, S), got {mcd.shape}")
        mcd = np.ascontiguousarray(mcd.transpose(0, 2, 1))

    heads: dict[str, np.ndarray] = {}
    ext = _load_arr0(root / "external_confids.npz")
    ext_dist = _load_arr0(root / "external_confids_dist.npz")
    if (ext is not None or ext_dist is not None) and ext_confid_name not in FD_SHIFTS_HEADS:
        raise ValueError(
            f"ext_confid_name must be one of {sorted(FD_SHIFTS_HEADS)} when external confidences "
            f"are present, got {ext_confid_name!r} (FD-Shifts' eval.ext_confid_name; config "
            f"{'read from ' + repr(str(config_path)) if settings else 'not found'})"
        )
    if ext_confid_name is not None:
        head = FD_SHIFTS_HEADS[ext_confid_name]
        to_head = (lambda c: 1.0 - c) if ext_confid_name == "dg" else (lambda c: c)
        if ext is not None:
            heads[head] = to_head(ext.astype(np.float64).reshape(n))
        if ext_dist is not None:
            if ext_dist.ndim == 0 or ext_dist.shape[0] != n:
                raise ValueError(
                    f"external_confids_dist.npz must have shape ({n}, S), got {ext_dist.shape}"
                )
            dist = ext_dist.astype(np.float64).reshape(n, -1)
            heads[f"{head}_mcd"] = to_head(dist.mean(axis=1))

    features = None
    encoded = _load_arr0(root / "encoded_output.npz")
    if encoded is not None:
        encoded = encoded.astype(np.float64)
        if encoded.ndim != 2 or encoded.shape[0] != n:
            raise ValueError(f"encoded_output.npz must have shape ({n}, D+1), got {encoded.shape}")
        features = encoded[:, :-1]

    run_meta: dict[str, Any] = dict(meta or {})
    last = root / "last_layer.npz"
    if last.is_file():
        layer = list(_read_npz(last, "FD-Shifts file").values())
        if len(layer) < 2:
            raise ValueError(f"last_layer.npz must hold W and b, found {len(layer)} array(s)")
        weight, bias = (np.asarray(a, dtype=np.float64) for a in layer[:2])
        dim = weight.shape[1] if weight.ndim == 2 else -1
        if (
            weight.shape != (k, dim)
            or bias.shape != (k,)
            or (features is not None and dim != features.shape[1])
        ):
            raise ValueError(
                f"last_layer.npz must hold W ({k} × D) and b ({k},) with D the feature dimension; "
                f"got {weight.shape} and {bias.shape}"
            )
        run_meta["fc_weight"], run_meta["fc_bias"] = weight, bias

    names = list(dataset_names or [])
    offset = 1 if val_tuning else 0
    splits: dict[str, SplitOutputs] = {}
    for index in np.unique(dataset_idx):
        i = int(index)
        if val_tuning and i == 0:
            name, kind = "val", "val"
        else:
            position = i - offset
            if position == 0:
                name = "iid"
            elif position - 1 < len(names):
                name = names[position - 1]
            else:
                name = f"dataset_{i}"
            kind = kinds.get(name, "iid")
        mask = dataset_idx == i
        split_labels = labels[mask]
        if kind.startswith("new_class"):
            split_labels = np.full(split_labels.shape, -1, dtype=np.int64)
        split = SplitOutputs(
            labels=split_labels,
            logits=logits[mask],
            mcd_logits=None if mcd is None else mcd[mask],
            features=None if features is None else features[mask],
            heads={h: v[mask] for h, v in heads.items()},
            kind=kind,
        )
        parts = (
            _split_noise_study(name, split, root / "raw_logits.npz")
            if kind == "corruption"
            else {name: split}
        )
        for part, outputs in parts.items():
            if part in splits:
                raise ValueError(
                    f"dataset index {i} maps to split {part!r}, which is already taken"
                )
            splits[part] = outputs

    train = _load_arr0(root / "train_features.npz")
    if train is not None and "fc_weight" in run_meta:
        train = train.astype(np.float64)
        columns = run_meta["fc_weight"].shape[1] + 1
        if train.ndim != 2 or train.shape[1] != columns:
            raise ValueError(
                f"train_features.npz must have shape M × {columns} (features, label), "
                f"got {train.shape}"
            )
        train_features = train[:, :-1]
        splits["train"] = SplitOutputs(
            labels=_integer_labels(train[:, -1], "train_features.npz label column"),
            logits=train_features @ run_meta["fc_weight"].T + run_meta["fc_bias"],
            features=train_features,
            kind="train",
        )
    run_meta.setdefault("source", "fd-shifts")
    run = RunOutputs(splits=splits, meta=run_meta)
    validate_run(run)
    return run
