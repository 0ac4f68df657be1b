"""Training jobs: every method trains, selection over a grid, resuming and bit-identity."""

import json
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fdbench.outputs import read_outputs  # noqa: E402
from fdbench.training import (  # noqa: E402
    load_checkpoint,
    output_stores,
    plan_jobs,
    run_training_job,
    train_or_load,
)
from fdbench.training.inference import predict_split  # noqa: E402
from fdbench.training.jobs import run_dir  # noqa: E402


def _arrays(run):
    out = {}
    for name, s in run.splits.items():
        out[f"{name}/logits"] = s.logits
        out[f"{name}/features"] = s.features
        if s.mcd_logits is not None:
            out[f"{name}/mcd"] = s.mcd_logits
        for h, v in s.heads.items():
            out[f"{name}/{h}"] = v
    return out


def test_two_runs_are_bit_identical(tmp_path, config, experiment):
    a = read_outputs(run_training_job(config, experiment, "ce", 0, tmp_path / "a"))
    b = read_outputs(run_training_job(config, experiment, "ce", 0, tmp_path / "b"))
    arrays_a, arrays_b = _arrays(a), _arrays(b)
    assert arrays_a.keys() == arrays_b.keys()
    assert any(k.endswith("/mcd") for k in arrays_a)
    for key in arrays_a:
        np.testing.assert_array_equal(arrays_a[key], arrays_b[key], err_msg=key)
    assert a.meta["method"] == "ce" and a.meta["seed"] == 0


def test_seeds_differ(tmp_path, config, experiment):
    train_or_load(config, experiment, "ce", 0, tmp_path)
    train_or_load(config, experiment, "ce", 1, tmp_path)
    w0 = load_checkpoint(run_dir(tmp_path, "tiny", "ce", 0) / "model.pt")[0].classifier.weight
    w1 = load_checkpoint(run_dir(tmp_path, "tiny", "ce", 1) / "model.pt")[0].classifier.weight
    assert not torch.equal(w0, w1)


def test_job_resumes_without_recomputing(tmp_path, config, experiment):
    path = run_training_job(config, experiment, "ce", 0, tmp_path)
    stamp = path.stat().st_mtime_ns
    model = run_dir(tmp_path, "tiny", "ce", 0) / "model.pt"
    model_stamp = model.stat().st_mtime_ns
    assert run_training_job(config, experiment, "ce", 0, tmp_path) == path
    assert path.stat().st_mtime_ns == stamp and model.stat().st_mtime_ns == model_stamp


def test_changed_config_is_refused(tmp_path, config, experiment, make_config):
    run_training_job(config, experiment, "ce", 0, tmp_path)
    other = make_config(training={"epochs": 2, "batch_size": 32, "threads": 1})
    with pytest.raises(ValueError, match="different configuration"):
        run_training_job(other, experiment, "ce", 0, tmp_path)


@pytest.mark.parametrize(
    ("method", "head"),
    [("dg", "dg_reservation"), ("dv", "devries"), ("cn", "confidnet")],
)
def test_methods_produce_their_heads(tmp_path, config, experiment, method, head):
    run = read_outputs(run_training_job(config, experiment, method, 0, tmp_path))
    expected = [head, f"{head}_mcd"] if run.meta["mc_samples"] else [head]
    for name, split in run.splits.items():
        # no MC-dropout passes on the train split, which no CSF reads
        assert list(split.heads) == ([head] if name == "train" else expected)
    assert run.meta["method_kind"] == config.method(method).kind


def test_confidnet_keeps_base_classifier(tmp_path, config, experiment):
    base = read_outputs(run_training_job(config, experiment, "ce", 0, tmp_path))
    cn = read_outputs(run_training_job(config, experiment, "cn", 0, tmp_path))
    np.testing.assert_array_equal(base.splits["iid"].logits, cn.splits["iid"].logits)
    np.testing.assert_array_equal(base.splits["iid"].mcd_logits, cn.splits["iid"].mcd_logits)


def test_confidnet_finetuning_changes_only_its_own_body(tmp_path, config, experiment):
    base = read_outputs(run_training_job(config, experiment, "ce", 0, tmp_path))
    ft = read_outputs(run_training_job(config, experiment, "cnft", 0, tmp_path))
    plain = read_outputs(run_training_job(config, experiment, "cn", 0, tmp_path))
    np.testing.assert_array_equal(base.splits["iid"].logits, ft.splits["iid"].logits)
    net, _ = load_checkpoint(run_dir(tmp_path, "tiny", "cnft", 0) / "model.pt")
    base_net, _ = load_checkpoint(run_dir(tmp_path, "tiny", "ce", 0) / "model.pt")
    changed = [
        not torch.equal(a, b)
        for a, b in zip(net.confidnet_body.parameters(), base_net.body.parameters(), strict=True)
    ]
    assert any(changed)
    for a, b in zip(net.body.parameters(), base_net.body.parameters(), strict=True):
        assert torch.equal(a, b)
    assert not np.array_equal(
        ft.splits["iid"].heads["confidnet"], plain.splits["iid"].heads["confidnet"]
    )


def test_grid_selects_lowest_validation_score(tmp_path, config, experiment):
    _, info = train_or_load(config, experiment, "grid", 0, tmp_path)
    selection = json.loads(info["selection"])
    scores = [c["val_score"] for c in selection["candidates"]]
    assert [c["params"]["lr"] for c in selection["candidates"]] == [0.01, 0.1]
    assert selection["chosen"] == int(np.argmin(scores))
    assert info["params"]["lr"] == [0.01, 0.1][selection["chosen"]]


def test_grid_job_stores_every_candidate(tmp_path, config, experiment):
    stores = output_stores(config, "tiny", "grid", 0, tmp_path)
    folder = run_dir(tmp_path, "tiny", "grid", 0)
    assert stores == [folder / "candidates" / f"{i}" / "outputs.zarr" for i in range(2)]
    assert output_stores(config, "tiny", "ce", 0, tmp_path) == [
        run_dir(tmp_path, "tiny", "ce", 0) / "outputs.zarr"
    ]
    assert run_training_job(config, experiment, "grid", 0, tmp_path) == stores[-1]
    runs = [read_outputs(store) for store in stores]
    assert [r.meta["candidate"] for r in runs] == [0, 1]
    assert [r.meta["params"]["lr"] for r in runs] == [0.01, 0.1]
    assert not (folder / "outputs.zarr").exists()
    assert not np.array_equal(runs[0].splits["val"].logits, runs[1].splits["val"].logits)
    # each store holds the outputs of its own checkpoint
    for i, run in enumerate(runs):
        net, _ = load_checkpoint(folder / "candidates" / f"{i}.pt")
        val = predict_split(
            net,
            experiment.val.images,
            experiment.val.labels,
            kind="val",
            mc_samples=0,
            batch_size=config.inference.batch_size,
        )
        np.testing.assert_array_equal(run.splits["val"].logits, val.logits)
    stamps = [s.stat().st_mtime_ns for s in stores]
    assert run_training_job(config, experiment, "grid", 0, tmp_path) == stores[-1]
    assert [s.stat().st_mtime_ns for s in stores] == stamps


def test_training_learns_the_tiny_task(tmp_path, experiment, make_config):
    config = make_config(training={"epochs": 3, "batch_size": 16, "lr": 0.05, "threads": 1})
    run = read_outputs(run_training_job(config, experiment, "ce", 0, tmp_path))
    iid = run.splits["iid"]
    assert np.mean(iid.logits.argmax(axis=1) == iid.labels) >= 0.8


def test_job_and_config_pickle(config, experiment):
    """dask ships the function and its arguments to workers by pickling them."""
    assert pickle.loads(pickle.dumps(run_training_job)) is run_training_job
    assert pickle.loads(pickle.dumps(config)) == config
    assert pickle.loads(pickle.dumps(experiment)).name == experiment.name


def test_plan_puts_confidnet_after_its_base(config):
    plan = plan_jobs(config)
    assert plan == [("ce", 0), ("dg", 0), ("dv", 0), ("grid", 0), ("cn", 0), ("cnft", 0)]


def test_bad_job_arguments(tmp_path, config, experiment):
    with pytest.raises(ValueError, match="method must be one of"):
        run_training_job(config, experiment, "nope", 0, tmp_path)
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        run_training_job(config, experiment, "ce", -1, tmp_path)
    with pytest.raises(TypeError, match="experiment must be an Experiment"):
        run_training_job(config, "tiny", "ce", 0, tmp_path)


def test_paper_recipe_trains_deterministically(tmp_path, experiment, make_config):
    # FD-Shifts' CIFAR recipe (random crop, flip, cutout; cosine stepped per epoch) through the
    # real training job: bit-identical for one seed, and a different model than flips only.
    training = {
        "epochs": 2, "batch_size": 32, "threads": 1,
        "schedule": {"name": "cosine", "interval": "epoch"},
        "augment": [{"name": "random_crop", "padding": 2}, {"name": "hflip"},
                    {"name": "cutout", "size": 4, "p": 0.5, "fill": 30}],
    }  # fmt: skip
    config = make_config(training=training)
    flips = make_config(training={**training, "augment": True})
    weights = []
    for folder, cfg in (("a", config), ("b", config), ("c", flips)):
        net, _ = train_or_load(cfg, experiment, "ce", 0, tmp_path / folder)
        weights.append(net.classifier.weight.detach())
    assert torch.equal(weights[0], weights[1])
    assert not torch.equal(weights[0], weights[2])


def test_configured_schedule_reaches_the_optimiser(experiment, make_config):
    import lightning as L

    from fdbench.training.context import (
        MethodModule,
        OptimSettings,
        build_spec,
        network_from_spec,
        trainer,
    )
    from fdbench.training.loader import image_tensor, make_loader
    from fdbench.training.methods import get_method

    config = make_config(training={"epochs": 3, "batch_size": 32, "threads": 1,
                                   "schedule": {"name": "multistep", "milestones": [1, 2],
                                                "gamma": 0.5, "interval": "epoch"}})  # fmt: skip
    net = network_from_spec(build_spec(config, experiment, None, False))
    tc = config.training
    settings = OptimSettings(lr=0.2, momentum=0.9, nesterov=False, weight_decay=0.0,
                             schedule=tc.schedule)  # fmt: skip
    module = MethodModule(net, get_method("ce")(), settings)
    lrs = []

    class Record(L.Callback):
        def on_train_epoch_start(self, trainer, pl_module):
            lrs.append(trainer.optimizers[0].param_groups[0]["lr"])

    loader = make_loader(
        image_tensor(experiment.train.images),
        torch.from_numpy(experiment.train.labels),
        batch_size=32,
        shuffle=True,
    )
    fit = trainer(3)
    fit.callbacks.append(Record())
    fit.fit(module, loader)
    assert lrs == pytest.approx([0.2, 0.1, 0.05])
    with pytest.raises(ValueError, match="schedule"):
        OptimSettings(lr=0.2, momentum=0.9, nesterov=False, weight_decay=0.0,
                      schedule="linear")  # fmt: skip


def test_timings_are_recorded_per_candidate_without_the_base(tmp_path, config, experiment):
    import time

    from fdbench.training.jobs import TIMING_FILE, collect_timings

    start = time.perf_counter()
    store = run_training_job(config, experiment, "cn", 0, tmp_path)
    total = time.perf_counter() - start
    base_s = load_checkpoint(run_dir(tmp_path, "tiny", "ce", 0) / "model.pt")[1]["train_s"]
    run_training_job(config, experiment, "grid", 0, tmp_path)
    table = collect_timings(tmp_path)
    assert list(table.columns) == [
        "dataset",
        "method",
        "seed",
        "candidate",
        "train_s",
        "inference_s",
    ]
    assert sorted(zip(table["method"], table["candidate"], strict=True)) == [
        ("cn", 0),
        ("grid", 0),
        ("grid", 1),
    ]
    cn = table[table["method"] == "cn"].iloc[0]
    assert 0 < cn["train_s"] and 0 < cn["inference_s"] and 0 < base_s
    # the base ce was trained inside the cn job: its time is the base's, not ConfidNet's
    assert cn["train_s"] + base_s + cn["inference_s"] <= total
    timing = store.parent / TIMING_FILE
    stamp = timing.stat().st_mtime_ns
    run_training_job(config, experiment, "cn", 0, tmp_path)
    assert timing.stat().st_mtime_ns == stamp
