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
