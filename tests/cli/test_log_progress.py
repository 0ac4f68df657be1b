"""Where standard output is no terminal (a log), progress is one line per finished job and
analysis step, written as it happens, with the elapsed time and an estimate of what is left."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

from fdbench.cli.progress import LogProgress, clock

SRC = Path(__file__).resolve().parents[2] / "src"


def test_one_line_per_finished_job_with_elapsed_and_left():
    now = [0.0]
    out = io.StringIO()
    bar = LogProgress(out, now=lambda: now[0])
    task = bar.add_task("evaluate", total=4)
    bar.update(task, completed=0)
    for done, at in ((0.5, 5.0), (1, 10.0), (1.7, 15.0), (2, 20.0), (4, 40.0)):
        now[0] = at
        bar.update(task, completed=done)
    assert out.getvalue().splitlines() == [
        "evaluate: 0 of 4 done, elapsed 0:00:00, about -:--:-- left",
        "evaluate: 1 of 4 done, elapsed 0:00:10, about 0:00:30 left",
        "evaluate: 2 of 4 done, elapsed 0:00:20, about 0:00:20 left",
        "evaluate: 4 of 4 done, elapsed 0:00:40, about 0:00:00 left",
    ]


def test_jobs_done_before_a_resume_do_not_speed_up_the_estimate():
    now = [0.0]
    out = io.StringIO()
    bar = LogProgress(out, now=lambda: now[0])
    task = bar.add_task("train", total=10)
    bar.update(task, completed=8)
    now[0] = 60.0
    bar.update(task, completed=9)
    assert (
        out.getvalue().splitlines()[-1]
        == "train: 9 of 10 done, elapsed 0:01:00, about 0:01:00 left"
    )


def test_clock():
    assert clock(3725.4) == "1:02:05"
    assert clock(float("nan")) == "-:--:--"


def test_a_redirected_run_writes_each_line_as_it_happens(tmp_path):
    """The command's own progress display, with stdout a file: each line is in the file while
    the command still runs (not at its end)."""
    log = tmp_path / "run.log"
    code = (
        "import sys\n"
        "from fdbench.cli.app import _progress_bar\n"
        "with _progress_bar() as bar:\n"
        "    task = bar.add_task('train', total=3)\n"
        "    for done in range(4):\n"
        "        bar.update(task, completed=done)\n"
        "        sys.stdin.readline()\n"
    )
    env = dict(os.environ, PYTHONPATH=str(SRC))
    with log.open("w") as stdout:
        child = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=stdout, env=env, text=True
        )
        seen = []
        for done in range(4):
            deadline = time.monotonic() + 60
            while len(log.read_text().splitlines()) <= done and time.monotonic() < deadline:
                time.sleep(0.05)
            seen.append(len(log.read_text().splitlines()))
            child.stdin.write("\n")
            child.stdin.flush()
        child.stdin.close()
        assert child.wait(60) == 0
    assert seen == [1, 2, 3, 4]
    lines = log.read_text().splitlines()
    assert lines[0].startswith("train: 0 of 3 done, elapsed ")
    assert (
        lines[-1].startswith("train: 3 of 3 done, elapsed ") and "about 0:00:00 left" in lines[-1]
    )
