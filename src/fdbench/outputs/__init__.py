"""The outputs store: schema, readers, writers and importers of other tools' formats."""

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
from .store import FORMAT_VERSION, iter_sample_chunks, read_outputs, write_outputs

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
