"""Point 5 of issue #34 end to end: a folder dataset edited between two runs of
``fdbench benchmark --out RUN`` is refused on resume, naming the experiment and the split,
instead of returning the numbers of the data that was there before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ._cli import assert_one_line_error, run_cli

CONFIG = """\
name: edited
data:
  builder: folder_experiments
  args:
    root: {root}
    name: pets
    studies:
      corruption/blur: {{path: blurred, kind: corruption}}
architecture:
  name: convnet
  dropout: 0.2
  options: {{width: 4, feature_dim: 8}}
training:
  epochs: 1
  batch_size: 16
  lr: 0.05
  threads: 1
inference:
  mc_samples: 2
  max_train_samples: 32
methods:
  - name: ce
    kind: ce
    seeds: [0]
analysis:
  n_bootstrap: 2
  gallery_csfs: [MSR]
workers: null
"""


def _images(root: Path) -> None:
    """A tiny two-class folder dataset of 28 x 28 grey images with a shift study."""
    from PIL import Image

    rng = np.random.default_rng(0)
    for split, n in (("train", 8), ("val", 4), ("test", 4), ("blurred", 6)):
        for label in ("cat", "dog"):
            (root / split / label).mkdir(parents=True)
            for i in range(n):
                pixels = rng.integers(0, 255, (28, 28), dtype=np.uint8)
                Image.fromarray(pixels, mode="L").save(root / split / label / f"{i}.png")


@pytest.mark.slow
def test_a_folder_dataset_edited_between_two_benchmark_runs_is_refused(tmp_path):
    root = tmp_path / "pets"
    _images(root)
    config = tmp_path / "edited.yaml"
    config.write_text(CONFIG.format(root=root))
    run = tmp_path / "run"
    first = run_cli("benchmark", str(config), "--out", str(run))
    assert first.returncode == 0, first.stderr
    results = (run / "results.parquet").read_bytes()
    for image in sorted((root / "blurred" / "cat").iterdir())[:3]:
        image.unlink()
    done = run_cli("benchmark", str(config), "--out", str(run))
    assert_one_line_error(done, "pets", "'corruption/blur'")
    assert (run / "results.parquet").read_bytes() == results


def test_a_zoo_member_edited_between_runs_gets_a_new_cache_file(tmp_path):
    # the zoo's member cache is keyed by the member's file names, sizes and modification
    # times: an edited member is evaluated again instead of reusing the stale result
    from fdbench.jobs.zoo import member_jobs
    from fdbench.zoo.config import parse_zoo_config
    from fdbench.zoo.synthetic import make_synthetic_zoo

    zoo = make_synthetic_zoo(tmp_path / "zoo", n_members=2, n_test=60, n_ood_classes=6)
    config = parse_zoo_config({"name": "t", "zoo": str(zoo)})
    before = {job.key: job.output for job in member_jobs(config, tmp_path / "run")}
    member = zoo / "m000.npz"
    with np.load(member) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["test_labels"] = arrays["test_labels"][::-1].copy()
    np.savez(member, **arrays)
    after = {job.key: job.output for job in member_jobs(config, tmp_path / "run")}
    assert after["zoo:m000"] != before["zoo:m000"]
    assert after["zoo:m001"] == before["zoo:m001"]


def test_data_experiments_naming_no_experiment_is_refused(tmp_path):
    import yaml

    from fdbench.jobs.plan import parse_config
    from fdbench.training.experiments import build_experiments

    root = tmp_path / "pets"
    _images(root)
    data = yaml.safe_load(CONFIG.format(root=root))
    data["data"]["experiments"] = ["pet"]
    with pytest.raises(ValueError, match=r"data\.experiments names \['pet'\].*\['pets'\]"):
        build_experiments(parse_config(data))
