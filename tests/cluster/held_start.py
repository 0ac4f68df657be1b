"""A ``dask worker --preload`` for the lost-worker test: each job, once it has announced its
start, holds for :data:`HOLD_SECONDS` before it runs, so that a worker killed just after a start
is seen always dies mid-job, however fast the machine runs the job itself."""

from __future__ import annotations

import time
from typing import Any

HOLD_SECONDS = 3.0


def dask_setup(worker: Any) -> None:
    from fdbench.core import runner

    announce = runner._announce_start

    def announce_and_hold() -> None:
        announce()
        time.sleep(HOLD_SECONDS)

    runner._announce_start = announce_and_hold
