"""The run folder every job writes: claimed as fdbench's, its configuration pinned, its results
table and its stage times."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from fdbench.core.io import (
    atomic_path,
    check_run_folder_claim,
    claim_run_folder,
    verify_file,
    write_tables,
)

CONFIG_FILE = "config.json"
RESULTS_FILE = "results.parquet"
TIMES_FILE = "times.json"
#: The keys of ``times.json`` beside the stage times: every invocation, and their total seconds.
INVOCATIONS_KEY = "invocations"
TOTAL_KEY = "total_s"
#: Per training run and grid candidate: seconds of training and of inference.
RUN_TIMES_FILE = "run_times.csv"


def _config_text(settings: dict[str, Any], run_dir: Path) -> str:
    """``settings`` as ``config.json`` holds them; ``ValueError`` when ``run_dir`` holds a run
    of other settings (its file checked against its checksum first,
    :func:`fdbench.core.io.verify_file`)."""
    text = json.dumps(settings, indent=2, sort_keys=True)
    path = run_dir / CONFIG_FILE
    if path.exists() and verify_file(path).read_text() != text:
        raise ValueError(
            f"{run_dir} holds a run of another configuration (config.json differs); "
            "choose another --out folder or remove it"
        )
    return text


def pin_config(settings: dict[str, Any], run_dir: Path) -> Path:
    """Write ``settings`` (the resolved configuration, as JSON) into ``run_dir/config.json``;
    ``ValueError`` when the folder holds a run of other settings (a changed config must not
    resume another run's files)."""
    text = _config_text(settings, run_dir)
    path = run_dir / CONFIG_FILE
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return path


def check_run_folder(run_dir: Path, settings: dict[str, Any]) -> None:
    """Raise what :func:`open_run_folder` would raise for ``run_dir`` and ``settings``, writing
    nothing: a folder that is not fdbench's (:func:`fdbench.core.io.check_run_folder_claim`)
    or that holds a run of other settings."""
    check_run_folder_claim(run_dir)
    _config_text(settings, run_dir)


def check_inputs_unchanged(run_dir: Path, fingerprints: dict[str, dict[str, str]]) -> None:
    """``ValueError`` naming the experiment and split if the data a run folder's jobs were
    computed from changed since (images or labels added, removed or edited between runs):
    ``fingerprints`` (experiment → split → :func:`fdbench.core.provenance.split_fingerprint`,
    the content of every image and label) are compared with those its ``provenance.json``
    recorded, so a resume never returns results of data that is no longer on disk."""
    from fdbench.core.io import damage
    from fdbench.core.names import printable
    from fdbench.core.provenance import PROVENANCE_FILE

    path = run_dir / PROVENANCE_FILE
    if not path.exists():
        return
    if damage(path) is not None:
        verify_file(path)
    recorded = json.loads(path.read_text()).get("split_fingerprints", {})
    for experiment, splits in fingerprints.items():
        before = recorded.get(experiment, {})
        changed = [s for s in splits if s in before and before[s] != splits[s]]
        changed += [s for s in before if s not in splits]
        changed += [s for s in splits if before and s not in before]
        if changed:
            raise ValueError(
                f"the data of experiment {printable(repr(experiment))} changed since the run in "
                f"{run_dir} was computed (split {printable(repr(changed[0]))} differs from "
                f"{PROVENANCE_FILE}); its results describe the old data: choose another --out "
                "or remove the run folder"
            )


def open_run_folder(run_dir: Path, settings: dict[str, Any]) -> Path:
    """Make ``run_dir`` a run folder of fdbench (:func:`fdbench.core.io.claim_run_folder`: new,
    empty or fdbench's own) and pin its configuration (:func:`pin_config`)."""
    claim_run_folder(run_dir)
    pin_config(settings, run_dir)
    return run_dir


def write_results(results: pd.DataFrame, run_dir: Path) -> Path:
    """Write the results table of a run as ``results.parquet`` and ``results.csv``, as one
    unit (:func:`fdbench.core.io.write_tables`: never one run's Parquet beside another's CSV)."""
    path = run_dir / RESULTS_FILE
    write_tables({path: results, run_dir / "results.csv": results})
    return path


def write_times(
    times: dict[str, float],
    run_dir: Path,
    *,
    worked: set[str] | None = None,
    started: str | None = None,
) -> Path:
    """Write the seconds each stage took into ``times.json``.

    With ``worked`` (the names of the stages that did work this time) a stage that did none
    keeps the time recorded when it did (the building of the studies counts as work only with
    another stage), and nothing is written when no stage worked: a re-run of a finished job
    never replaces its timings with the no-op's.

    Every invocation that writes is kept: ``invocations`` lists, oldest first, each one's
    ``started`` (the caller's label of the invocation, e.g. its ISO start time; a later write
    with the same label replaces that entry) and the seconds of its stages as measured then;
    ``total_s`` is the sum over them, the wall time of every invocation that did work. A file
    from before this list counts as one invocation with ``started`` null.
    """
    from fdbench.core.io import damage

    path = run_dir / TIMES_FILE
    recorded: dict[str, Any] = {}
    if damage(path) is None:
        try:
            loaded = json.loads(path.read_text())
        except ValueError:
            loaded = None
        recorded = loaded if isinstance(loaded, dict) else {}
    stages = {
        k: float(v)
        for k, v in recorded.items()
        if k != TOTAL_KEY and isinstance(v, int | float) and not isinstance(v, bool)
    }
    if worked is not None and stages and not worked:
        return path
    done = {*times} if worked is None else {*worked, "build_studies_s"}
    merged = {
        name: value if name in done or name not in stages else stages[name]
        for name, value in times.items()
    }
    history = recorded.get(INVOCATIONS_KEY)
    if isinstance(history, list):
        invocations = [i for i in history if isinstance(i, dict)]
    else:
        invocations = [{"started": None, **stages}] if stages else []
    entry = {"started": started, **times}
    if started is not None and invocations and invocations[-1].get("started") == started:
        invocations[-1] = entry
    else:
        invocations.append(entry)
    total = sum(
        float(v)
        for i in invocations
        for k, v in i.items()
        if k != "started" and isinstance(v, int | float) and not isinstance(v, bool)
    )
    record = {**merged, INVOCATIONS_KEY: invocations, TOTAL_KEY: total}
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=2))
    return path
    done = {*times} if worked is None else {*worked, "build_studies_s"}
    merged = {
        name: value if name in done or name not in recorded else recorded[name]
        for name, value in times.items()
    }
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(merged, indent=2))
    return path
