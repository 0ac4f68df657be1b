"""Training jobs: build, train every grid candidate, infer and store each candidate's outputs."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from fdbench.config.schema import BenchmarkConfig, config_digest
from fdbench.core.io import atomic_path, discard_damaged, verify_if_recorded, write_text
from fdbench.data.types import Experiment

from ..models.network import Network
from ..outputs import write_outputs
from .context import TrainContext, network_from_spec
from .determinism import deterministic
from .experiments import write_split
from .inference import predict_experiment, predict_split
from .methods import TrainingMethod

__all__ = [
    "TIMING_FILE",
    "collect_timings",
    "load_checkpoint",
    "output_stores",
    "plan_jobs",
    "run_dir",
    "run_training_job",
    "train_or_load",
    "validation_score",
]

#: Per store, beside it: the seconds spent training its model and inferring its outputs.
TIMING_FILE = "timing.json"


def plan_jobs(config: BenchmarkConfig) -> list[tuple[str, int]]:
    """Every (method, seed) job of ``config`` in an order where the jobs of a method with bases
    (ConfidNet) follow the jobs of their base methods: methods without bases first (config
    order, then seed), the others last. Running the list in order (or the dependent ones after
    the rest finished) trains each model once."""
    first = [(m.name, s) for m in config.methods if not m.dependencies() for s in m.seeds]
    last = [(m.name, s) for m in config.methods if m.dependencies() for s in m.seeds]
    return first + last


def run_dir(out_dir: str | os.PathLike[str], experiment: str, method: str, seed: int) -> Path:
    """Folder of one (experiment, method, seed) run: ``out_dir/experiment/method/seed<seed>``."""
    return Path(out_dir) / experiment / method / f"seed{seed}"


def output_stores(
    config: BenchmarkConfig,
    experiment: str,
    method: str,
    seed: int,
    out_dir: str | os.PathLike[str],
) -> list[Path]:
    """The output stores of one (experiment, method, seed) run, one per grid candidate in the
    order of :meth:`fdbench.config.schema.MethodConfig.candidates`.

    A method without a grid has one candidate, stored at ``<run>/outputs.zarr``; with a grid,
    candidate ``i`` is stored at ``<run>/candidates/<i>/outputs.zarr`` (next to its model
    ``<run>/candidates/<i>.pt``), so every CSF can select its own candidate afterwards.
    """
    folder = run_dir(out_dir, experiment, method, seed)
    n = len(config.method(method).candidates())
    if n == 1:
        return [folder / "outputs.zarr"]
    return [folder / "candidates" / str(i) / "outputs.zarr" for i in range(n)]


def _save_atomic(obj: Any, path: Path) -> None:
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def load_checkpoint(path: str | os.PathLike[str]) -> tuple[Network, dict[str, Any]]:
    """Rebuild the network saved at ``path`` by a training job; returns ``(network, info)``.

    A file that cannot be read as such a checkpoint (truncated, overwritten, flipped bytes,
    another program's file, weights that do not fit the network it describes) raises one
    ``ValueError`` naming it; an ``OSError`` (missing file, permission denied) passes as is.
    The file is first checked against the SHA-256 recorded beside it, if one was
    (:func:`fdbench.core.io.verify_if_recorded`).
    """
    what = f"checkpoint {str(path)!r}"
    verify_if_recorded(path)
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except OSError:
        raise
    except Exception as err:
        raise ValueError(
            f"{what} cannot be read (truncated, overwritten or not a PyTorch file); "
            "remove it to train that model again"
        ) from err
    try:
        net = network_from_spec(ckpt["spec"])
        net.load_state_dict(ckpt["state_dict"])
    except Exception as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(
            f"{what} is not an fdbench checkpoint or does not fit the network it describes "
            f"({type(err).__name__}: {reason}); remove it to train that model again"
        ) from err
    return net.eval(), {k: v for k, v in ckpt.items() if k != "state_dict"}


def validation_score(
    net: Network, experiment: Experiment, method: TrainingMethod, metric: str
) -> float:
    """The selection metric (``"aurc"`` or ``"augrc"``) of the method's own confidence
    (:meth:`~fdbench.training.methods.TrainingMethod.validation_confidence`: the maximum
    softmax response for ``ce``, the negated reservation probability for ``deepgamblers``, the
    DeVries or ConfidNet head, ...) on the validation split; lower is better."""
    from .. import metrics

    if metric not in ("aurc", "augrc"):
        raise ValueError(f"metric must be 'aurc' or 'augrc', got {metric!r}")
    if not isinstance(method, TrainingMethod):
        raise TypeError(f"method must be a TrainingMethod, got {type(method).__name__}")
    val = experiment.val
    out = predict_split(net, val.images, val.labels, kind="val", mc_samples=0, method=method)
    confidence = method.validation_confidence(out)
    residuals = (out.logits.argmax(axis=1) != out.labels).astype(np.float64)
    return float(getattr(metrics, metric)(residuals, confidence))


def train_or_load(
    config: BenchmarkConfig,
    experiment: Experiment,
    method: str,
    seed: int,
    out_dir: str | os.PathLike[str],
) -> tuple[Network, dict[str, Any]]:
    """Train ``method`` for ``seed`` (every grid candidate, keeping the one with the lowest
    validation ``config.selection.metric`` of the method's own confidence,
    :func:`validation_score`) or load it if a finished checkpoint exists.

    Candidates are saved to ``<run>/candidates/<i>.pt`` and the selected one to
    ``<run>/model.pt`` (atomic writes), so an interrupted job resumes. A checkpoint made under
    another configuration raises ``ValueError``. A checkpoint that fails its recorded SHA-256
    (or has none) is removed with a warning and trained again, and ``model.pt`` with it if a
    candidate was (:func:`fdbench.core.io.discard_damaged`). Returns ``(network, info)``.

    The benchmark's results do not use this selection: every candidate's outputs are stored
    (:func:`run_training_job`) and each CSF selects its own candidate on the validation split
    (:func:`fdbench.jobs.benchmark.select_candidates`). ``model.pt`` is the model a ConfidNet second
    stage is trained on: FD-Shifts trains ConfidNet within its own run, so fdbench takes the
    base candidate the base method's own confidence selects.
    """
    spec = config.method(method)
    digest = config_digest(config, method)
    folder = run_dir(out_dir, experiment.name, method, seed)
    final = folder / "model.pt"
    candidates = [folder / "candidates" / f"{i}.pt" for i in range(len(spec.candidates()))]
    if any([discard_damaged(path) for path in candidates]):
        final.unlink(missing_ok=True)
    discard_damaged(final)
    if final.exists():
        net, info = load_checkpoint(final)
        _check_digest(info, digest, final)
        return net, info
    scores = []
    best: tuple[float, int, Path] | None = None
    base_seconds = [0.0]

    def base(name: str) -> tuple[Network, dict[str, Any]]:
        start = time.perf_counter()
        try:
            return _train_or_load_base(config, experiment, name, seed=seed, out_dir=out_dir)
        finally:
            base_seconds[0] += time.perf_counter() - start

    ctx = TrainContext(config, experiment, seed, Path(out_dir), base)
    for i, method in enumerate(spec.methods()):
        path = candidates[i]
        if path.exists():
            net, info = load_checkpoint(path)
            _check_digest(info, digest, path)
        else:
            base_seconds[0] = 0.0
            start = time.perf_counter()
            net, build = method.train(ctx)
            train_s = time.perf_counter() - start - base_seconds[0]
            with deterministic(seed, config.training.threads):
                score = validation_score(net, experiment, method, config.selection.metric)
            info = {
                "spec": build,
                "digest": digest,
                "params": method.params.model_dump(mode="json"),
                "val_score": score,
                "train_s": train_s,
            }
            _save_atomic({**info, "state_dict": net.state_dict()}, path)
        scores.append({"params": info["params"], "val_score": info["val_score"]})
        if best is None or info["val_score"] < best[0]:
            best = (info["val_score"], i, path)
    assert best is not None
    ckpt = torch.load(best[2], map_location="cpu", weights_only=True)
    ckpt["selection"] = json.dumps(
        {"metric": config.selection.metric, "chosen": best[1], "candidates": scores}
    )
    _save_atomic(ckpt, final)
    return load_checkpoint(final)


def _train_or_load_base(
    config: BenchmarkConfig, experiment: Experiment, method: str, *, seed: int, out_dir: Any
) -> tuple[Network, dict[str, Any]]:
    return train_or_load(config, experiment, method, seed, out_dir)


def _check_digest(info: dict[str, Any], digest: str, path: Path) -> None:
    if info.get("digest") != digest:
        raise ValueError(
            f"checkpoint {path} was made under a different configuration; "
            "remove it or choose another output folder"
        )


def run_training_job(
    config: BenchmarkConfig,
    experiment: Experiment,
    method: str,
    seed: int,
    out_dir: str | os.PathLike[str],
    *,
    progress: bool = False,
) -> Path:
    """Train (or load) one (experiment, method, seed) run, infer and store the outputs of every
    grid candidate.

    Writes each store of :func:`output_stores` atomically with
    :func:`fdbench.outputs.write_outputs` (its meta records the ``candidate`` index and its
    ``params``) and returns the last one, which marks the job as done; stores that already
    exist (made under the same configuration) are not recomputed. Without a grid the one store
    holds the outputs of ``<run>/model.pt``, as before grids were evaluated per candidate.
    Inference uses the method with the parameters recorded in the checkpoint (training may
    fill in some, e.g. ODIN's selected temperature and ε).
    Training and inference are seeded by ``seed`` alone and run with
    ``config.training.threads`` threads and deterministic algorithms, so the same config and
    seed give bit-identical outputs. A top-level function without global state, safe to submit
    to dask workers; deep ensembles are several seeds.
    """
    if not isinstance(config, BenchmarkConfig):
        raise TypeError(f"config must be a BenchmarkConfig, got {type(config).__name__}")
    if not isinstance(experiment, Experiment):
        raise TypeError(f"experiment must be an Experiment, got {type(experiment).__name__}")
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    spec = config.method(method)
    digest = config_digest(config, method)
    stores = output_stores(config, experiment.name, method, seed, out_dir)
    todo = [(i, store) for i, store in enumerate(stores) if not _stored(store, digest)]
    if not todo:
        return stores[-1]
    net, info = train_or_load(config, experiment, method, seed, out_dir)
    folder = run_dir(out_dir, experiment.name, method, seed)
    write_split(experiment, folder)
    inf = config.inference
    for i, store in todo:
        if len(stores) > 1:
            net, info = load_checkpoint(folder / "candidates" / f"{i}.pt")
        # the parameters the model was trained with, as training recorded them (ODIN's
        # temperature and ε are selected in training)
        trained = spec.method_class()(info["params"])
        start = time.perf_counter()
        with deterministic(seed, config.training.threads):
            run = predict_experiment(
                net,
                experiment,
                method=trained,
                mc_samples=inf.mc_samples_of(method),
                batch_size=inf.batch_size,
                seed=seed,
                max_train_samples=inf.max_train_samples,
                progress=progress,
                meta={
                    "benchmark": config.name,
                    "dataset": experiment.name,
                    "method": method,
                    "method_kind": spec.kind,
                    "seed": int(seed),
                    "model": config.architecture.label,
                    "candidate": i,
                    "params": info["params"],
                    "config_digest": digest,
                },
            )
        inference_s = time.perf_counter() - start
        write_outputs(store, run)
        timing = {"train_s": info.get("train_s"), "inference_s": inference_s}
        write_text(store.parent / TIMING_FILE, json.dumps(timing, indent=2) + "\n")
    return stores[-1]


def collect_timings(out_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The :data:`TIMING_FILE` of every run under ``out_dir`` (the ``out_dir`` of
    :func:`run_training_job`; a benchmark's ``<run folder>/runs``) as one table:
    ``dataset``, ``method``, ``seed``, ``candidate``, ``train_s``, ``inference_s``.

    ``train_s``: wall seconds of the method's ``train`` for that candidate, excluding the
    training of a base model it builds on (recorded in the base's own run), missing for a
    checkpoint written before timings were recorded; ``inference_s``: wall seconds of the
    inference of every split of the store (MC-dropout passes and predictive samples included).
    Recorded when the job ran, so a resumed run keeps the times of the run that did the work.
    """
    rows = []
    for path in sorted(Path(out_dir).glob(f"*/*/seed*/**/{TIMING_FILE}")):
        verify_if_recorded(path)
        parts = path.relative_to(out_dir).parts
        timing = json.loads(path.read_text(encoding="utf-8"))
        rows.append(
            {
                "dataset": parts[0],
                "method": parts[1],
                "seed": int(parts[2].removeprefix("seed")),
                "candidate": int(parts[4]) if parts[3] == "candidates" else 0,
                "train_s": timing.get("train_s"),
                "inference_s": timing.get("inference_s"),
            }
        )
    columns = ["dataset", "method", "seed", "candidate", "train_s", "inference_s"]
    return pd.DataFrame(rows, columns=columns)


def _stored(store: Path, digest: str) -> bool:
    """Whether ``store`` exists intact (a damaged one is removed with a warning, to be written
    again); ``ValueError`` if it was made under another configuration."""
    if discard_damaged(store) or not store.exists():
        return False
    from ..outputs import read_outputs

    if read_outputs(store, lazy=True).meta.get("config_digest") != digest:
        raise ValueError(
            f"outputs {store} were made under a different configuration; "
            "remove them or choose another output folder"
        )
    return True
