"""Point 1 of issue #25 on resume: a damaged checkpoint or outputs store left by an interrupted
training job is recomputed (bit for bit), never reused."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("torch")

from fdbench.training import load_checkpoint, output_stores, run_training_job
from fdbench.training.jobs import run_dir

from ..training.conftest import make_experiment, tiny_config
from .conftest import digest, flip_byte


def _files(folder):
    """Digests of the files of a run folder; checkpoints (whose bytes ``torch.save`` does not
    fix) by their weights and info. Wall-clock times (``timing.json``, a checkpoint's
    ``train_s``) are left out: a recomputed file records the time of the run that made it, and
    the folders' records of written files list the digests of both runs' files."""
    files = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.name.startswith("timing.json") or path.name == ".fdbench-written.json":
            continue
        if path.suffix == ".pt":
            net, info = load_checkpoint(path)
            weights = [(k, v.numpy().tobytes()) for k, v in net.state_dict().items()]
            info.pop("train_s", None)
            files[name] = (weights, repr(info))
        elif path.is_file() and not name.endswith(".pt.sha256"):
            files[name] = digest(path)
    return files


@pytest.mark.parametrize("method", ["ce", "grid"])
def test_damaged_checkpoint_is_retrained_not_reused(tmp_path, caplog, method):
    config, experiment = tiny_config(), make_experiment()
    run_training_job(config, experiment, method, 0, tmp_path)
    folder = run_dir(tmp_path, "tiny", method, 0)
    first = _files(folder)
    damaged = folder / ("model.pt" if method == "ce" else "candidates/1.pt")
    flip_byte(damaged, 0.9)
    stores = output_stores(config, "tiny", method, 0, tmp_path)
    flip_byte(stores[-1] / "splits" / "0001" / "logits" / "c" / "0" / "0")
    with caplog.at_level(logging.WARNING, logger="fdbench"):
        run_training_job(config, experiment, method, 0, tmp_path)
    assert str(damaged) in caplog.text and str(stores[-1]) in caplog.text
    assert _files(folder) == first
