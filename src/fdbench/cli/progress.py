"""Progress for an output that is no terminal (a log file, a pipe, nohup, a scheduler, CI): one
line per finished job of a stage and per analysis step, with the elapsed time and an estimate
of the time left, written as it happens (the bars of a terminal only show at the end there)."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import IO, Any


def clock(seconds: float) -> str:
    """``seconds`` as ``H:MM:SS`` (``-:--:--`` when unknown)."""
    if not math.isfinite(seconds) or seconds < 0:
        return "-:--:--"
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


class LogProgress:
    """The log-line twin of :class:`rich.progress.Progress` for what fdbench's commands use of
    it (``add_task``, ``update``, a context manager): a line
    ``<stage>: <done> of <total> done, elapsed H:MM:SS, about H:MM:SS left`` each time the
    whole number of finished jobs of a stage grows, and one when the stage is first seen.

    The time left is the stage's elapsed time per job finished in this invocation (jobs found
    done when it started are not counted) times the jobs still to do. ``stream``: where the
    lines go (default: standard output, flushed after every line); ``now``: the clock.
    """

    def __init__(
        self, stream: IO[str] | None = None, now: Callable[[], float] = time.monotonic
    ) -> None:
        self._stream = stream
        self._now = now
        self._tasks: list[dict[str, Any]] = []

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        """Start following the stage ``description`` of ``total`` jobs; its task id."""
        self._tasks.append(
            {"name": str(description), "total": total, "start": self._now(), "first": None}
        )
        return len(self._tasks) - 1

    def update(
        self, task_id: int, *, completed: float | None = None, total: float | None = None, **_: Any
    ) -> None:
        """Record that ``completed`` jobs of the task are done (running jobs may add a share
        below 1); print a line when the whole number of done jobs changed."""
        task = self._tasks[task_id]
        if total is not None:
            task["total"] = total
        if completed is None:
            return
        done = math.floor(completed + 1e-9)
        if task["first"] is None:
            task["first"], task["shown"] = done, done
            self._line(task, done)
        elif done != task["shown"]:
            task["shown"] = done
            self._line(task, done)

    def _line(self, task: dict[str, Any], done: int) -> None:
        elapsed = self._now() - task["start"]
        total = task["total"]
        finished = done - task["first"]
        if total is None:
            left = math.nan
        elif done >= total:
            left = 0.0
        else:
            left = elapsed / finished * (total - done) if finished > 0 else math.nan
        of = f" of {int(total)}" if total is not None else ""
        stream = self._stream if self._stream is not None else sys.stdout
        stream.write(
            f"{task['name']}: {done}{of} done, elapsed {clock(elapsed)}, about {clock(left)} left\n"
        )
        stream.flush()
