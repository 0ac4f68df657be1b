"""Issue #35's acceptance checks on the pages and console tables of real runs: each embedded
quick config's benchmark and ``fdbench zoo --quick``.

The page, in headless Chromium at 1,400 px: height with every block collapsed <= 12,000 px, the
headline table with names within the first 900 px, no figure text under 9 px (each embedded
PNG's font sizes and DPI), weight <= 5 MB. The console tables after the run (headline, the full
ranking's study summary, Kim et al.'s Table 5), read through a pseudo-terminal of 80 and 120
columns and from a pipe (a log): every row name whole, no line wider than the terminal.

The runs keep what shapes the page (the config's methods, CSFs, studies, ensembles, analysis
and bootstrap) and shrink what does not (the data: the builders' ``tiny`` sizes where they have
them; one epoch). Cost, not yet timed on the tiny data: bounded by the quick runs in
benchmarks/RESULTS.md on 2 quiet cores (unknown detection about 3 min, medical 1 min 25 s before
its 50 bootstrap resamples, the default quick benchmark about 6 min, ``zoo --quick`` 1 min), each
plus one Chromium load and three console prints.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from importlib.resources import files
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fdbench.report.console import LOG_WIDTH

from .page_measure import assert_at_a_glance, measure

pytest.importorskip("torch")
pytest.importorskip("lightning")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("FDBENCH_REAL_PAGES") != "1",
        reason="three real benchmark runs and the quick zoo (about 20 min on 2 busy cores); "
        "set FDBENCH_REAL_PAGES=1 to run them",
    ),
]

SRC = Path(__file__).resolve().parents[2] / "src"
SGR = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: The builders run on ``tiny`` data (1,500 training images) and one epoch. A class that such a
#: network never classifies correctly gets no OpenMax model (a warning), no longer an error.
TINY_BUILDERS = {"fashion_mnist_experiments", "fashion_mnist_unknown_detection"}
CONFIGS = ["unknown_detection_quick", "medical_embedded_quick", "fashion_mnist_quick"]


def _small(name: str) -> dict:
    data = yaml.safe_load((files("fdbench") / "configs" / f"{name}.yaml").read_text())
    if data["data"]["builder"] in TINY_BUILDERS:
        data["data"]["args"] = {**data["data"].get("args", {}), "tiny": True}
        data["training"]["epochs"] = 1
    return data


@pytest.fixture(scope="module", params=CONFIGS)
def run(request, tmp_path_factory):
    from fdbench.jobs.benchmark import run_benchmark
    from fdbench.jobs.plan import parse_config

    folder = tmp_path_factory.mktemp(request.param) / "run"
    run_benchmark(parse_config(_small(request.param), source=request.param), folder, workers=0)
    return folder


def _in_terminal(code: str, columns: int | None) -> str:
    """What ``python -c code`` prints to a pseudo-terminal ``columns`` wide, colours removed;
    ``None``: to a pipe (a log file), the terminal width unset."""
    env = dict(os.environ, COLUMNS=str(columns), PYTHONPATH=str(SRC), TERM="xterm")
    env.pop("NO_COLOR", None)
    if columns is None:
        env.pop("COLUMNS")
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        return done.stdout
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert child.wait() == 0, out.decode()
    return SGR.sub("", out.decode()).replace("\r", "")


def _first_cells(text: str) -> set[str]:
    return {line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")}


def test_the_page_reads_at_a_glance(run, tmp_path):
    assert_at_a_glance(measure(run / "report.html", tmp_path), "table-headline_")


@pytest.mark.parametrize("columns", [80, 120, None])
def test_every_console_table_keeps_its_names(run, columns):
    from fdbench.report import unknown_detection_display, unknown_detection_summary
    from fdbench.report.console import study_summary
    from fdbench.report.headline import headline
    from fdbench.report.sections.leaderboard import read_leaderboard

    code = (
        "from pathlib import Path; import pandas as pd; from fdbench.report.console import "
        "print_headline, print_study_summary, print_unknown_detection; "
        f"run = Path({str(run)!r}); results = pd.read_parquet(run / 'results.parquet'); "
        "print_headline(run); print_study_summary(results); print_unknown_detection(results)"
    )
    text = _in_terminal(code, columns)
    assert max(len(line) for line in text.splitlines()) <= (columns or LOG_WIDTH)
    results = pd.read_parquet(run / "results.parquet")
    tables = read_leaderboard(run)
    names = {
        str(n)
        for d in dict.fromkeys(tables["ranks"]["dataset"])
        for n in headline(tables["summary"], tables["ranks"], str(d)).frame.index
    }
    names |= {str(n) for wide in study_summary(results).values() for n in wide.index}
    names |= set(map(str, unknown_detection_display(unknown_detection_summary(results)).index))
    assert names and names <= _first_cells(text)


def test_the_quick_zoo_page_reads_at_a_glance(tmp_path):
    # in a process of its own: training in the process that ran three benchmarks before once
    # died in libtorch (a stack-segment trap)
    run = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "fdbench", "zoo", "--quick", "--workers", "0", "--out", str(run)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(SRC)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert_at_a_glance(measure(run / "zoo_report.html", tmp_path), "table-members")
