"""Time building every study of the default Fashion-MNIST benchmark (target: < 60 s).

Run: ``PYTHONPATH=src python benchmarks/build_studies_speed.py``. Datasets are fetched first
(not timed); then the full and the quick benchmark are built and the wall-clock time of each,
with the number of studies and images, is printed.
"""

from __future__ import annotations

import time

from fdbench.data import fetch_all
from fdbench.data.suites.fashion_mnist import fashion_mnist_experiments


def main() -> None:
    fetch_all(progress=False)
    for quick in (False, True):
        start = time.perf_counter()
        experiments = fashion_mnist_experiments(seed=0, quick=quick)
        seconds = time.perf_counter() - start
        n_studies = sum(len(e.studies) for e in experiments)
        n_images = sum(len(s.labels) for e in experiments for s in e.studies)
        print(
            f"quick={quick!s:5}  {seconds:6.2f} s  {n_studies} studies  {n_images} test images  "
            f"({seconds / 60:.2f} of the 60 s target)"
        )


if __name__ == "__main__":
    main()
