"""Opening saved outputs of any supported kind by looking at what the path holds."""

from __future__ import annotations

import os
from pathlib import Path

from .importers import (
    FD_SHIFTS_OPTIONAL_FILES,
    TORCH_SUFFIXES,
    import_fd_shifts,
    import_npz,
    import_torch,
)
from .schema import RunOutputs


def load_outputs(path: str | os.PathLike[str]) -> RunOutputs:
    """Open ``path`` as an fdbench outputs store, an FD-Shifts run directory, a ``.npz`` file or
    a ``torch.save`` file (``.pt``/``.pth``).

    A directory holding ``raw_logits.npz`` is read with :func:`import_fd_shifts`, any other
    directory with :func:`read_outputs`, a ``.npz`` file with :func:`import_npz`, a torch file
    with :func:`import_torch` (``weights_only=True``). The formats are tabulated in
    docs/outputs.md ("Accepted formats").
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"outputs not found: {path}")
    if path.is_dir():
        if (path / "raw_logits.npz").exists():
            return import_fd_shifts(path)
        if not (path / "zarr.json").exists():
            found = sorted(p.name for p in path.iterdir())
            shown = ", ".join(found[:8]) + (", ..." if len(found) > 8 else "") or "nothing"
            raise ValueError(
                f"{str(path)!r} is neither an fdbench outputs store (expected zarr.json) nor an "
                f"FD-Shifts test_results folder (expected raw_logits.npz, optionally "
                f"{', '.join(FD_SHIFTS_OPTIONAL_FILES)}); it holds {shown}"
            )
        from .store import read_outputs

        return read_outputs(path)
    if path.suffix.lower() == ".npz":
        return import_npz(path)
    if path.suffix.lower() in TORCH_SUFFIXES:
        return import_torch(path)
    raise ValueError(
        f"cannot tell what {path.name} holds: give a .npz or .pt file, an fdbench outputs "
        "store or an FD-Shifts run directory (or a .csv/.parquet confidence table)"
    )
