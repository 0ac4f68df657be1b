"""Training jobs: build, train every grid candidate, infer and store each candidate's outputs."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch

from ..config import BenchmarkConfig, ConfidNetParams, MethodConfig, config_digest
from ..data.studies import Experiment
from ..io import atomic_path
from ..models import build_model
from ..models.dropout import split_at_first_dropout
from ..models.network import Network
from ..outputs import write_outputs
from .determinism import deterministic
from .experiments import write_split
from .inference import predict_experiment, predict_split
from .loader import image_tensor, make_loader
from .methods import ClassifierModule, ConfidNetFinetuneModule, ConfidNetModule
from .schedules import plateau_callbacks

__all__ = [
    "load_checkpoint",
    "output_stores",
    "plan_jobs",
    "run_dir",
    "run_training_job",
    "train_or_load",
    "validation_score",
]

#: Largest cache (bytes) of the body's dropout-free prefix outputs ConfidNet's stage trains on;
#: above it the prefix runs on the images in every step.
_CONFIDNET_CACHE_BYTES = 1 << 30

_HEAD = {"ce": None, "deepgamblers": "deepgamblers", "devries": "devries"}


def plan_jobs(config: BenchmarkConfig) -> list[tuple[str, int]]:
    """Every (method, seed) job of ``config`` in an order where ConfidNet jobs follow the jobs of
    their base method: end-to-end methods first (config order, then seed), ConfidNet last.
    Running the list in order (or ConfidNet after the rest finished) trains each model once."""
    first = [(m.name, s) for m in config.methods if m.kind != "confidnet" for s in m.seeds]
    last = [(m.name, s) for m in config.methods if m.kind == "confidnet" for s in m.seeds]
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
    order of :meth:`fdbench.config.MethodConfig.candidates`.

    A method without a grid has one candidate, stored at ``<run>/outputs.zarr``; with a grid,
    candidate ``i`` is stored at ``<run>/candidates/<i>/outputs.zarr`` (next to its model
    ``<run>/candidates/<i>.pt``), so every CSF can select its own candidate afterwards.
    """
    folder = run_dir(out_dir, experiment, method, seed)
    n = len(config.method(method).candidates())
    if n == 1:
        return [folder / "outputs.zarr"]
    return [folder / "candidates" / str(i) / "outputs.zarr" for i in range(n)]


@contextlib.contextmanager
def _quiet_lightning() -> Iterator[None]:
    loggers = [logging.getLogger(n) for n in ("lightning.pytorch", "lightning.fabric")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*LeafSpec.*is deprecated")
            warnings.filterwarnings("ignore", message=".*does not have many workers.*")
            # ConfidNet stages train with the frozen parts deliberately in eval mode
            warnings.filterwarnings("ignore", message=".*module\\(s\\) in eval mode.*")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _trainer(epochs: int, callbacks: list[L.Callback] | None = None) -> L.Trainer:
    return L.Trainer(
        max_epochs=epochs,
        callbacks=callbacks,
        accelerator="cpu",
        devices=1,
        deterministic=True,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )


def _build_spec(config: BenchmarkConfig, experiment: Experiment, head, dropout: bool) -> dict:
    images = experiment.train.images
    if images.ndim != 4 or images.shape[1] != images.shape[2]:
        raise ValueError(
            f"experiment {experiment.name!r}: train images must be N × H × W × C with H = W, "
            f"got shape {images.shape}"
        )
    stats = images.reshape(-1, images.shape[3]).astype(np.float64) / 255.0
    std = np.maximum(stats.std(axis=0), 1e-3)
    return {
        "architecture": config.architecture.name,
        "num_classes": len(experiment.class_names),
        "in_channels": int(images.shape[3]),
        "image_size": int(images.shape[1]),
        "dropout": config.architecture.dropout if dropout else 0.0,
        "dropout_placement": config.architecture.dropout_placement,
        "head": head,
        "mean": [float(m) for m in stats.mean(axis=0)],
        "std": [float(s) for s in std],
        "options": dict(config.architecture.options),
    }


def _network(spec: dict[str, Any]) -> Network:
    spec = dict(spec)
    options = spec.pop("options")
    arch = spec.pop("architecture")
    return build_model(arch, **spec, **options)


def _save_atomic(obj: Any, path: Path) -> None:
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def load_checkpoint(path: str | os.PathLike[str]) -> tuple[Network, dict[str, Any]]:
    """Rebuild the network saved at ``path`` by a training job; returns ``(network, info)``."""
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    net = _network(ckpt["spec"])
    net.load_state_dict(ckpt["state_dict"])
    return net.eval(), {k: v for k, v in ckpt.items() if k != "state_dict"}


def _train_end_to_end(
    config: BenchmarkConfig, experiment: Experiment, spec: MethodConfig, params, seed: int
) -> tuple[Network, dict[str, Any]]:
    tc = config.training
    build = _build_spec(config, experiment, _HEAD[spec.kind], params.dropout)
    with deterministic(seed, tc.threads), _quiet_lightning():
        net = _network(build)
        extra: dict[str, Any] = {}
        if spec.kind == "deepgamblers":
            extra = {"reward": params.reward, "pretrain_epochs": params.pretrain_epochs}
        elif spec.kind == "devries":
            extra = {"budget": params.budget, "lambda_init": params.lambda_init}
        module = ClassifierModule(
            net,
            spec.kind,
            lr=params.lr or tc.lr,
            momentum=tc.momentum,
            nesterov=tc.nesterov,
            weight_decay=tc.weight_decay,
            schedule=tc.schedule,
            **extra,
        )
        loader = make_loader(
            image_tensor(experiment.train.images),
            torch.from_numpy(np.asarray(experiment.train.labels, dtype=np.int64)),
            batch_size=tc.batch_size,
            shuffle=True,
            seed=seed,
            augment=tc.augment,
        )
        callbacks = plateau_callbacks(tc.schedule)
        val_loader = None
        if callbacks:
            val_loader = make_loader(
                image_tensor(experiment.val.images),
                torch.from_numpy(np.asarray(experiment.val.labels, dtype=np.int64)),
                batch_size=tc.batch_size,
                shuffle=False,
            )
        _trainer(params.epochs or tc.epochs, callbacks).fit(module, loader, val_loader)
    return net.eval(), build


def _train_confidnet(
    config: BenchmarkConfig,
    experiment: Experiment,
    params: ConfidNetParams,
    seed: int,
    out_dir: Path,
) -> tuple[Network, dict[str, Any]]:
    base, base_info = train_or_load(config, experiment, params.base, seed, out_dir)
    build = dict(base_info["spec"])
    build["head"] = "confidnet"
    build["options"] = {
        **build["options"],
        "confidnet_hidden": params.hidden,
        "confidnet_depth": params.depth,
        "confidnet_own_body": params.finetune_epochs > 0,
    }
    with deterministic(seed, config.training.threads), _quiet_lightning():
        net = _network(build)
        missing, unexpected = net.load_state_dict(base.state_dict(), strict=False)
        if unexpected or any(not k.startswith(("confidnet.", "confidnet_body.")) for k in missing):
            raise ValueError(f"base {params.base!r} does not match the ConfidNet network")
        if net.confidnet_body is not None:
            net.confidnet_body.load_state_dict(net.body.state_dict())
        net.eval()
        for p in net.parameters():
            p.requires_grad_(False)
        for p in net.confidnet.parameters():
            p.requires_grad_(True)
        x = image_tensor(experiment.train.images)
        labels = torch.from_numpy(np.asarray(experiment.train.labels, dtype=np.int64))
        prefix, rest = split_at_first_dropout(net.body)
        with torch.inference_mode():
            size = prefix(net.normalize(x[:1]))[0].numel() * len(x) * 4
        if size <= _CONFIDNET_CACHE_BYTES:
            with torch.inference_mode():
                inputs = torch.cat(
                    [prefix(net.normalize(x[i : i + 1000])) for i in range(0, len(x), 1000)]
                ).clone()
            module = ConfidNetModule(net, rest, lr=params.lr)
        else:
            inputs = x
            module = ConfidNetModule(
                net, rest, lr=params.lr, prefix=torch.nn.Sequential(net.normalize, prefix)
            )
        loader = make_loader(
            inputs, labels, batch_size=config.training.batch_size, shuffle=True, seed=seed
        )
        _trainer(params.epochs).fit(module, loader)
        net.eval()
        if params.finetune_epochs > 0:
            with torch.inference_mode():
                logits = torch.cat([net(x[i : i + 1000]) for i in range(0, len(x), 1000)])
            logits = logits[:, : net.num_classes]
            for p in net.confidnet_body.parameters():
                p.requires_grad_(True)
            images = make_loader(
                x,
                logits.clone(),
                labels,
                batch_size=config.training.batch_size,
                shuffle=True,
                seed=seed + 1,
            )
            module = ConfidNetFinetuneModule(net, lr=params.finetune_lr)
            _trainer(params.finetune_epochs).fit(module, images)
    return net.eval(), build


def validation_score(net: Network, experiment: Experiment, kind: str, metric: str) -> float:
    """The selection metric (``"aurc"`` or ``"augrc"``) of the method's own confidence on the
    validation split: maximum softmax response for ``ce``, the negated reservation probability
    for ``deepgamblers``, the DeVries or ConfidNet head otherwise; lower is better."""
    from .. import metrics

    if metric not in ("aurc", "augrc"):
        raise ValueError(f"metric must be 'aurc' or 'augrc', got {metric!r}")
    val = experiment.val
    out = predict_split(net, val.images, val.labels, kind="val", mc_samples=0)
    logits = out.logits
    if kind == "ce":
        z = logits - logits.max(axis=1, keepdims=True)
        confidence = 1.0 / np.exp(z).sum(axis=1)
    elif kind == "deepgamblers":
        confidence = -out.heads["dg_reservation"]
    else:
        confidence = out.heads[kind]
    residuals = (logits.argmax(axis=1) != out.labels).astype(np.float64)
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
    another configuration raises ``ValueError``. Returns ``(network, info)``.

    The benchmark's results do not use this selection: every candidate's outputs are stored
    (:func:`run_training_job`) and each CSF selects its own candidate on the validation split
    (:func:`fdbench.benchmark.select_candidates`). ``model.pt`` is the model a ConfidNet second
    stage is trained on: FD-Shifts trains ConfidNet within its own run, so fdbench takes the
    base candidate the base method's own confidence selects.
    """
    spec = config.method(method)
    digest = config_digest(config, method)
    folder = run_dir(out_dir, experiment.name, method, seed)
    final = folder / "model.pt"
    if final.exists():
        net, info = load_checkpoint(final)
        _check_digest(info, digest, final)
        return net, info
    scores = []
    best: tuple[float, int, Path] | None = None
    for i, params in enumerate(spec.candidates()):
        path = folder / "candidates" / f"{i}.pt"
        if path.exists():
            net, info = load_checkpoint(path)
            _check_digest(info, digest, path)
        else:
            if spec.kind == "confidnet":
                net, build = _train_confidnet(config, experiment, params, seed, Path(out_dir))
            else:
                net, build = _train_end_to_end(config, experiment, spec, params, seed)
            with deterministic(seed, config.training.threads):
                score = validation_score(net, experiment, spec.kind, config.selection.metric)
            info = {
                "spec": build,
                "digest": digest,
                "params": params.model_dump(mode="json"),
                "val_score": score,
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
        with deterministic(seed, config.training.threads):
            run = predict_experiment(
                net,
                experiment,
                mc_samples=inf.mc_samples,
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
                    "model": config.architecture.name,
                    "candidate": i,
                    "params": info["params"],
                    "config_digest": digest,
                },
            )
        write_outputs(store, run)
    return stores[-1]


def _stored(store: Path, digest: str) -> bool:
    """Whether ``store`` exists; ``ValueError`` if it was made under another configuration."""
    if not store.exists():
        return False
    from ..outputs import read_outputs

    if read_outputs(store, lazy=True).meta.get("config_digest") != digest:
        raise ValueError(
            f"outputs {store} were made under a different configuration; "
            "remove them or choose another output folder"
        )
    return True
