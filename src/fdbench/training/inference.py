"""Inference: float64 logits, MC-dropout samples, features and head outputs of a trained model."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from fdbench.data.types import Experiment

from ..models.dropout import sampling, split_at_first_dropout
from ..models.network import Network
from ..outputs import RunOutputs, SplitOutputs
from .loader import image_tensor

if TYPE_CHECKING:
    from .methods import TrainingMethod

__all__ = ["predict_experiment", "predict_split"]

#: Upper bound on rows × MC samples × (largest per-row activation size) in one MC chunk.
_MC_CHUNK_ELEMENTS = 1 << 22


def _split_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1, dtype=np.uint64)[0] >> 1)


def _repeat(h: torch.Tensor, samples: int) -> torch.Tensor:
    """Each row of ``h`` ``samples`` times in a row (the passes of row 0 first)."""
    return h.repeat_interleave(samples, dim=0)


@torch.inference_mode()
def predict_split(
    model: Network,
    images: np.ndarray,
    labels: np.ndarray,
    *,
    kind: str,
    mc_samples: int = 50,
    batch_size: int = 500,
    seed: int = 0,
    method: TrainingMethod | None = None,
) -> SplitOutputs:
    """Outputs of ``model`` on one split (uint8 images N × H × W × C, int64 labels).

    The body runs in float32 (eval mode); the final linear layer and the heads then run in
    float64 on the features cast to float64, so ``logits`` are exact float64 functions of the
    features. Heads: ``devries`` = sigmoid of the confidence branch, ``dg_reservation`` =
    softmax probability of the reservation output, ``confidnet`` = sigmoid of the ConfidNet MLP.

    MC dropout (Gal & Ghahramani 2016) samples the whole network: ``mc_samples`` passes with
    every dropout layer of body and head active (Bernoulli masks from a generator seeded by
    ``seed``, so the same seed gives bit-identical samples) and batch norm in eval mode, as
    FD-Shifts' ``mcd_eval_forward`` (``fd_shifts/models/devries_model.py``). The layers before
    the first dropout layer run once per sample. ``mcd_logits[:, s]`` are the K class outputs
    of pass ``s``; the heads' pass means are stored as ``<head>_mcd`` (FD-Shifts' ``*_mcd``
    CSFs, the mean over passes of the head confidence; ``fd_shifts/analysis/confid_scores.py``).
    The heads read the pass's features after the final dropout layer, as the classifier does
    (FD-Shifts' encoders end in that dropout layer and feed both, e.g.
    ``fd_shifts/models/networks/devries_network.py``); a ConfidNet with its own body reads that
    body's, dropped with masks from a second generator, so the classifier's samples equal those
    of the same network without ConfidNet. The passes run in chunks of rows (memory bounded by
    ``_MC_CHUNK_ELEMENTS``); the masks depend on ``seed``, ``batch_size`` and the chunking. MC
    outputs are omitted when ``mc_samples`` is 0, the model has no dropout or ``method`` says
    so (``mc_dropout``).

    ``method`` (the :class:`~fdbench.training.methods.TrainingMethod` the model was trained
    with) adds its heads, batch by batch on the deterministic pass: ``method.output_heads``
    of the float64 final-layer outputs and ``method.input_heads`` of the model and the uint8
    images; they follow the network's heads.
    """
    if mc_samples < 0:
        raise ValueError(f"mc_samples must be >= 0, got {mc_samples}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    labels = np.asarray(labels, dtype=np.int64)
    x = image_tensor(images)
    if len(x) != len(labels):
        raise ValueError(f"images ({len(x)}) and labels ({len(labels)}) differ in length")
    model = model.eval()
    k = model.num_classes
    weight = model.classifier.weight.detach().double()
    bias = model.classifier.bias.detach().double()
    use_mc = mc_samples > 0 and model.has_dropout and (method is None or method.mc_dropout)
    generator = torch.Generator().manual_seed(seed)
    own_generator = torch.Generator().manual_seed(_split_seed(seed, 1))
    confidnet = copy.deepcopy(model.confidnet).double() if model.confidnet is not None else None
    prefix, rest = split_at_first_dropout(model.body)
    own = model.confidnet_body
    own_prefix, own_rest = split_at_first_dropout(own) if own is not None else (None, None)
    logits, mcd, feats = [], [], []
    heads: dict[str, list[torch.Tensor]] = {}

    def head_values(f: torch.Tensor, out: torch.Tensor, fc: torch.Tensor | None) -> dict:
        values = {}
        if model.head == "deepgamblers":
            values["dg_reservation"] = torch.softmax(out, dim=-1)[..., k]
        if model.devries is not None:
            wd, bd = model.devries.weight.double(), model.devries.bias.double()
            values["devries"] = torch.sigmoid(f @ wd.T + bd).squeeze(-1)
        if confidnet is not None:
            values["confidnet"] = torch.sigmoid(confidnet(f if fc is None else fc))
        return values

    for start in range(0, len(x), batch_size):
        xb = model.normalize(x[start : start + batch_size])
        h = prefix(xb)
        f = rest(h).double()
        out = f @ weight.T + bias
        feats.append(f)
        replaced = None
        if method is not None:
            replaced = method.predictive_logits(model, x[start : start + batch_size], f)
        logits.append(out[:, :k] if replaced is None else replaced.double())
        hc = own_prefix(xb) if own is not None else None
        fc = own_rest(hc).double() if own is not None else None
        for name, value in head_values(f, out, fc).items():
            heads.setdefault(name, []).append(value)
        if method is not None:
            extra = method.output_heads(out, k)
            extra.update(method.input_heads(model, x[start : start + batch_size]))
            for name, value in extra.items():
                heads.setdefault(name, []).append(torch.as_tensor(value, dtype=torch.float64))
        if not use_mc:
            continue
        s = mc_samples
        width = max(h[0].numel(), f.shape[1], hc[0].numel() if own is not None else 0)
        rows = max(1, _MC_CHUNK_ELEMENTS // (s * width))
        for r in range(0, len(f), rows):
            with sampling(model.body, generator), sampling(model.dropout, generator):
                fs = model.dropout(rest(_repeat(h[r : r + rows], s)).double())
                outs = fs @ weight.T + bias
            fcs = None
            if own is not None:
                with sampling(own, own_generator), sampling(model.dropout, own_generator):
                    fcs = model.dropout(own_rest(_repeat(hc[r : r + rows], s)).double())
                fcs = fcs.view(-1, s, fc.shape[1])
            outs = outs.view(-1, s, outs.shape[1])
            mcd.append(outs[:, :, :k])
            for name, value in head_values(fs.view(-1, s, f.shape[1]), outs, fcs).items():
                heads.setdefault(f"{name}_mcd", []).append(value.mean(dim=1))
    d = model.feature_dim

    def cat(parts: list[torch.Tensor], shape: tuple[int, ...]) -> np.ndarray:
        if not parts:
            return np.zeros(shape, dtype=np.float64)
        return torch.cat(parts).numpy().astype(np.float64, copy=False)

    return SplitOutputs(
        labels=labels,
        logits=cat(logits, (0, k)),
        mcd_logits=cat(mcd, (0, mc_samples, k)) if use_mc else None,
        features=cat(feats, (0, d)),
        heads={name: cat(parts, (0,)) for name, parts in heads.items()},
        kind=kind,
    )


def predict_experiment(
    model: Network,
    experiment: Experiment,
    *,
    mc_samples: int = 50,
    batch_size: int = 500,
    seed: int = 0,
    max_train_samples: int | None = 10_000,
    progress: bool = False,
    meta: dict[str, Any] | None = None,
    method: TrainingMethod | None = None,
) -> RunOutputs:
    """Run ``model`` on every split of ``experiment`` and collect a :class:`RunOutputs`.

    Splits: ``train`` (a uniform random subset of at most ``max_train_samples`` samples, drawn
    with ``seed``, kept in the original order; all samples when ``None``), ``val`` and one per
    study (named by ``Study.name``, kind ``Study.kind.value``). See :func:`predict_split` for
    the arrays. The ``train`` split gets no MC-dropout samples: it only feeds the fits of the
    feature and logit CSFs (Mahalanobis, DKNN, TrustScore, ViM, OpenMax), which read the
    deterministic pass; MC dropout is evaluated on the test splits, and on ``val`` where the
    binary protocol sets its threshold. The other splits draw the same masks either way
    (each split's generator is seeded from ``seed`` and the split's position). ``meta`` gets
    the class names, ``fc_weight`` (K × D) and ``fc_bias`` (K) of the final layer in float64
    (for ViM), and the given entries. A rich progress bar over splits
    is shown when ``progress``. ``method`` adds its heads (see :func:`predict_split`).
    """
    if not isinstance(model, Network):
        raise TypeError(f"model must be a fdbench.models.Network, got {type(model).__name__}")
    if not isinstance(experiment, Experiment):
        raise TypeError(f"experiment must be a fdbench.data.Experiment, got {type(experiment)}")
    if max_train_samples is not None and max_train_samples < 1:
        raise ValueError(f"max_train_samples must be >= 1 or None, got {max_train_samples}")
    if model.num_classes != len(experiment.class_names):
        raise ValueError(
            f"model has {model.num_classes} classes but experiment {experiment.name!r} "
            f"has {len(experiment.class_names)}"
        )
    train = experiment.train
    index = np.arange(len(train.labels))
    if max_train_samples is not None and len(index) > max_train_samples:
        rng = np.random.default_rng([seed, 2])
        index = np.sort(rng.choice(len(index), size=max_train_samples, replace=False))
    jobs = [
        ("train", train.images[index], train.labels[index], "train"),
        ("val", experiment.val.images, experiment.val.labels, "val"),
    ]
    jobs += [(s.name, s.images, s.labels, s.kind.value) for s in experiment.studies]
    names = [j[0] for j in jobs]
    if len(set(names)) != len(names):
        raise ValueError(f"experiment {experiment.name!r} has repeated split names: {names}")
    splits: dict[str, SplitOutputs] = {}
    from rich.progress import Progress

    with Progress(transient=True, disable=not progress) as bar:
        task = bar.add_task(f"inference {experiment.name}", total=len(jobs))
        for i, (name, images, labels, kind) in enumerate(jobs):
            splits[name] = predict_split(
                model,
                images,
                labels,
                kind=kind,
                mc_samples=0 if name == "train" else mc_samples,
                batch_size=batch_size,
                seed=_split_seed(seed, i),
                method=method,
            )
            bar.advance(task)
    k = model.num_classes
    info: dict[str, Any] = {
        "classes": list(experiment.class_names),
        "experiment": experiment.name,
        "fc_weight": model.classifier.weight.detach().double()[:k].numpy().copy(),
        "fc_bias": model.classifier.bias.detach().double()[:k].numpy().copy(),
        "mc_samples": (
            int(mc_samples) if model.has_dropout and (method is None or method.mc_dropout) else 0
        ),
        "dropout": float(model.dropout.p),
    }
    info.update(meta or {})
    return RunOutputs(splits=splits, meta=info)
