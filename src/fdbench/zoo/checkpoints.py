"""fdbench's own trained models as zoo members: a benchmark run folder's outputs stores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fdbench.core.io import atomic_path, write_table

__all__ = ["benchmark_stores", "import_benchmark_run"]

#: Study kinds of a benchmark store whose samples form the OOD class pool (labels all −1).
OOD_KINDS = ("new_class_semantic", "new_class_nonsemantic", "cood")


def benchmark_stores(run_folder: str | Path) -> dict[str, Path]:
    """The outputs stores of a benchmark run folder by member name ``<exp>-<method>-seed<k>``:
    ``runs/<exp>/<method>/seed<k>/outputs.zarr`` (methods with a grid of candidates keep their
    last candidate's store there too, see :func:`fdbench.training.jobs.output_stores`)."""
    root = Path(run_folder) / "runs"
    if not root.is_dir():
        raise NotADirectoryError(f"run_folder: {run_folder} has no runs/ folder of a benchmark")
    stores = {}
    for store in sorted(root.glob("*/*/seed*/outputs.zarr")):
        seed_dir = store.parent
        method_dir = seed_dir.parent
        stores[f"{method_dir.parent.name}-{method_dir.name}-{seed_dir.name}"] = store
    if not stores:
        raise ValueError(f"run_folder: no runs/<exp>/<method>/seed<k>/outputs.zarr in {root}")
    return stores


def _member_arrays(store: Path) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    from fdbench.outputs import read_outputs

    run = read_outputs(store)
    if "iid" not in run.splits:
        raise ValueError(f"{store}: expected an 'iid' split (the ID test samples)")
    arrays: dict[str, np.ndarray] = {}
    for split, source in (("test", "iid"), ("val", "val")):
        if source in run.splits:
            out = run.splits[source]
            arrays[f"{split}_logits"] = out.logits
            arrays[f"{split}_labels"] = out.labels
            if out.mcd_logits is not None:
                arrays[f"{split}_mcd_logits"] = out.mcd_logits
    ood = [(name, s) for name, s in run.splits.items() if s.kind in OOD_KINDS]
    if ood:
        arrays["ood_logits"] = np.concatenate([s.logits for _, s in ood])
        arrays["ood_classes"] = np.concatenate(
            [np.full(s.n_samples, c, dtype=np.int64) for c, (_, s) in enumerate(ood)]
        )
        arrays["ood_class_names"] = np.asarray([name for name, _ in ood])
        if all(s.mcd_logits is not None for _, s in ood) and "test_mcd_logits" in arrays:
            arrays["ood_mcd_logits"] = np.concatenate([s.mcd_logits for _, s in ood])
    meta = run.meta
    row = {
        "family": meta.get("model", ""),
        "regime": meta.get("method_kind", ""),
        "has_dropout": int(meta.get("mc_samples", 0)) > 0,
        "method": meta.get("method", ""),
        "seed": meta.get("seed", ""),
        "source": str(store),
    }
    return arrays, row


def import_benchmark_run(run_folder: str | Path, zoo_folder: str | Path) -> list[str]:
    """Write every model of a benchmark run folder into ``zoo_folder`` as an ``.npz`` member.

    Each store ``runs/<exp>/<method>/seed<k>/outputs.zarr`` gives member
    ``<exp>-<method>-seed<k>``: its ``iid`` split is the ID test split, its ``val`` split the
    validation split, and every new-class study (kind in :data:`OOD_KINDS`: the held-out classes,
    each non-semantic dataset) one class of the OOD pool, named by the study; MC-dropout
    logits where the store has them. Rows of ``members.csv`` (family = architecture, regime =
    method kind, has_dropout, method, seed, source store) replace those of the same name.
    A member already in the folder is not rewritten. Returns the member names.
    """
    zoo_folder = Path(zoo_folder)
    zoo_folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, store in benchmark_stores(run_folder).items():
        arrays, row = _member_arrays(store)
        output = zoo_folder / f"{name}.npz"
        if not output.exists():
            with atomic_path(output) as tmp, open(tmp, "wb") as fh:
                np.savez(fh, **arrays)
        rows.append({"name": name, **row})
    table = pd.DataFrame(rows)
    path = zoo_folder / "members.csv"
    if path.exists():
        old = pd.read_csv(path)
        table = pd.concat([old[~old["name"].astype(str).isin(table["name"])], table])
    write_table(table, path)
    return [row["name"] for row in rows]
