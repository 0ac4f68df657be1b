"""The console headline keeps scoring-method names visible at 80 and 120 columns (read through a
pseudo-terminal, as a user sees it) and in a log, and is short; the full ranking is one flag
away."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pandas as pd
import pytest

from fdbench.report.headline import REFERENCES, TOP, headline

from .many_methods import write_leaderboard

SRC = Path(__file__).resolve().parents[2] / "src"
SGR = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("many")
    return folder, write_leaderboard(folder, n=70)


def _console(folder: Path, columns: int, *, full: bool = False, terminal: bool = True) -> str:
    code = (
        "from pathlib import Path; from fdbench.report.console import print_headline; "
        f"print_headline(Path({str(folder)!r}), full={full})"
    )
    env = dict(os.environ, COLUMNS=str(columns), PYTHONPATH=str(SRC), TERM="xterm")
    env.pop("NO_COLOR", None)
    if not terminal:
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


def _rows(text: str) -> list[str]:
    """The first cell of every table row."""
    return [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")]


def test_headline_holds_the_top_the_references_and_the_ties(run):
    folder, names = run
    ranks = pd.read_csv(folder / "leaderboard_ranks.csv")
    head = headline(pd.read_csv(folder / "leaderboard.csv"), ranks, "cifar10")
    overall = ranks[(ranks["study"] == "all studies") & (ranks["metric"] == "augrc")]
    overall = overall[overall["dataset"] == "cifar10"].sort_values("mean_rank")
    best = list(overall["scoring_method"])
    assert list(head.frame.index[:TOP]) == best[:TOP]
    assert set(head.frame.index) == set(best[:TOP]) | {r for r in REFERENCES if r in names}
    upper = overall["rank_upper"].iloc[0]
    assert head.tied == list(overall.loc[overall["rank_lower"] <= upper, "scoring_method"])
    assert (head.frame["#"].to_numpy() == [best.index(n) + 1 for n in head.frame.index]).all()


@pytest.mark.parametrize("columns", [80, 120])
def test_names_stay_visible_in_a_narrow_terminal(run, columns):
    folder, _ = run
    text = _console(folder, columns)
    ranks = pd.read_csv(folder / "leaderboard_ranks.csv")
    summary = pd.read_csv(folder / "leaderboard.csv")
    expected = [
        n for d in ("cifar10", "super_cifar100") for n in headline(summary, ranks, d).frame.index
    ]
    assert _rows(text) == expected
    assert max(len(line) for line in text.splitlines()) <= columns
    assert len(text.splitlines()) < 60  # two data sets of 70 methods each


def test_full_ranking_names_every_method_at_80_columns(run):
    folder, names = run
    text = _console(folder, 80, full=True)
    rows = _rows(text)
    assert all(rows.count(n) >= 2 for n in names)  # once per data set, names never cut
    assert max(len(line) for line in text.splitlines()) <= 80


def test_a_log_gets_the_names_too(run):
    folder, _ = run
    text = _console(folder, 80, terminal=False)
    assert "ENS-" in text or "DG-" in text
    assert all(row for row in _rows(text))
    assert "--full-ranking" in text


def test_the_exported_leaderboard_holds_full_precision_numbers(run):
    from fdbench.report.sections.leaderboard import leaderboard_numbers

    folder, names = run
    summary = pd.read_csv(folder / "leaderboard.csv")
    numbers = leaderboard_numbers(summary, pd.read_csv(folder / "leaderboard_ranks.csv"), "cifar10")
    assert sorted(numbers.index) == sorted(names)
    assert all(numbers[c].dtype.kind == "f" for c in numbers.columns)
    row = summary[(summary["dataset"] == "cifar10") & (summary["metric"] == "augrc")]
    row = row[(row["study"] == "iid") & (row["scoring_method"] == names[0])]
    assert numbers.loc[names[0], "iid mean"] == row["mean"].iloc[0]  # as computed, unrounded
