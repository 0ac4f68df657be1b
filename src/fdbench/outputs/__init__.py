"""The outputs store: schema, readers, writers and importers of other tools' formats.

The store's names are imported from :mod:`fdbench.outputs.store` on first use (module
``__getattr__``): the store imports zarr, which reading a ``.npz`` file does not need."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .importers import (
    FD_SHIFTS_CORRUPTIONS,
    FD_SHIFTS_CSFS,
    FD_SHIFTS_HEADS,
    FD_SHIFTS_OPTIONAL_FILES,
    SCORE_DUMP_KEYS,
    TORCH_SUFFIXES,
    fd_shifts_csf_name,
    import_fd_shifts,
    import_npz,
    import_torch,
    is_score_dump,
    read_fd_shifts_config,
    read_fd_shifts_csfs,
    read_score_dump,
)
from .load import load_outputs
from .schema import RunOutputs, SplitOutputs, validate_run, validate_split

if TYPE_CHECKING:
    from .store import FORMAT_VERSION, iter_sample_chunks, read_outputs, write_outputs

#: The names of :mod:`fdbench.outputs.store` this package exports.
_STORE_NAMES = frozenset({"FORMAT_VERSION", "iter_sample_chunks", "read_outputs", "write_outputs"})


def __getattr__(name: str) -> Any:
    if name in _STORE_NAMES:
        return getattr(import_module("fdbench.outputs.store"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FD_SHIFTS_CORRUPTIONS",
    "FD_SHIFTS_CSFS",
    "FD_SHIFTS_HEADS",
    "FD_SHIFTS_OPTIONAL_FILES",
    "FORMAT_VERSION",
    "SCORE_DUMP_KEYS",
    "TORCH_SUFFIXES",
    "RunOutputs",
    "SplitOutputs",
    "fd_shifts_csf_name",
    "import_fd_shifts",
    "import_npz",
    "import_torch",
    "is_score_dump",
    "iter_sample_chunks",
    "load_outputs",
    "read_fd_shifts_config",
    "read_fd_shifts_csfs",
    "read_outputs",
    "read_score_dump",
    "validate_run",
    "validate_split",
    "write_outputs",
]
