"""A context that seeds every RNG, fixes threads and turns on deterministic algorithms."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import numpy as np
import torch

__all__ = ["deterministic"]


@contextlib.contextmanager
def deterministic(seed: int, threads: int) -> Iterator[None]:
    """Run the body with ``torch.manual_seed(seed)`` (and Python's/NumPy's global RNGs seeded),
    ``threads`` intra-op threads and ``torch.use_deterministic_algorithms(True)``.

    Everything is restored on exit (RNG states, thread count, determinism flag), so a job leaves
    no global state behind in a long-lived worker process.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    old_threads = torch.get_num_threads()
    old_flag = torch.are_deterministic_algorithms_enabled()
    py_state = random.getstate()
    np_state = np.random.get_state()  # noqa: NPY002 - restoring the legacy global state
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        random.seed(seed)
        np.random.seed(seed % 2**32)  # noqa: NPY002 - seeding libraries that use it
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(True)
        try:
            yield
        finally:
            torch.set_num_threads(old_threads)
            torch.use_deterministic_algorithms(old_flag)
            random.setstate(py_state)
            np.random.set_state(np_state)  # noqa: NPY002
