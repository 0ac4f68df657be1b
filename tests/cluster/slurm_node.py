"""A single-node Slurm on this machine for the tests: munged, slurmctld and slurmd in the
foreground on free ports, configured in a temporary folder (``SLURM_CONF``), or the exact
reason it could not start."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo")
START_SECONDS = 40


class SlurmUnavailable(RuntimeError):
    """Why Slurm could not start here (the test states it when it skips)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path) -> str:
    text = path.read_text(errors="replace").strip() if path.is_file() else ""
    return " | ".join(text.splitlines()[-3:]) or f"(nothing in {path.name})"


def _node_line() -> str:
    """This machine as ``slurmd -C`` sees it (CPUs, sockets, cores, memory), minus the uptime."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30)
    line = out.stdout.splitlines()[0] if out.stdout else ""
    if not line.startswith("NodeName="):
        raise SlurmUnavailable(f"'slurmd -C' gave no node line: {out.stderr.strip()}")
    return line


def _config(folder: Path, host: str) -> str:
    node = _node_line().replace(_node_line().split()[0], f"NodeName={host}")
    return "\n".join(
        [
            "ClusterName=fdbench",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            f"StateSaveLocation={folder / 'state'}",
            f"SlurmdSpoolDir={folder / 'spool'}",
            f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
            f"SlurmdPidFile={folder / 'slurmd.pid'}",
            f"SlurmctldLogFile={folder / 'slurmctld.log'}",
            f"SlurmdLogFile={folder / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SwitchType=switch/none",
            "MpiDefault=none",
            "ReturnToService=2",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            f"{node} NodeAddr=127.0.0.1 State=UNKNOWN",
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


def _munge_key() -> Path:
    key = Path("/etc/munge/munge.key")
    if not key.is_file():
        made = subprocess.run(["mungekey", "--create"], capture_output=True, text=True)
        if made.returncode != 0:
            raise SlurmUnavailable(f"no munge key and 'mungekey --create' failed: {made.stderr}")
    return key


@contextmanager
def single_node_slurm(folder: Path) -> Iterator[dict[str, str]]:
    """Start Slurm on this machine; yield the environment (``SLURM_CONF``) its commands need.
    Raises :class:`SlurmUnavailable` naming the reason when it cannot start."""
    missing = [name for name in DAEMONS if shutil.which(name) is None]
    if missing:
        raise SlurmUnavailable(
            f"Slurm is not installed ({', '.join(missing)} not found; "
            "apt-get install slurm-wlm munge)"
        )
    if os.geteuid() != 0:
        raise SlurmUnavailable("starting slurmctld/slurmd for the test needs root")
    folder.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool", "munge"):
        (folder / sub).mkdir(exist_ok=True)
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(_config(folder, host))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    socket_path = folder / "munge" / "munge.socket"
    env["MUNGE_SOCKET"] = str(socket_path)  # not read by Slurm: it uses the default socket
    started: list[subprocess.Popen] = []
    try:
        key = _munge_key()
        if not Path("/run/munge/munge.socket.2").exists():
            Path("/run/munge").mkdir(parents=True, exist_ok=True)
            started.append(
                subprocess.Popen(
                    ["munged", "--foreground", "--force", f"--key-file={key}"],
                    stdout=subprocess.DEVNULL, stderr=open(folder / "munged.log", "w"),
                )
            )  # fmt: skip
            time.sleep(1)
            if started[-1].poll() is not None:
                raise SlurmUnavailable(f"munged exited: {_tail(folder / 'munged.log')}")
        for daemon in ("slurmctld", "slurmd"):
            started.append(
                subprocess.Popen(
                    [daemon, "-D", "-f", str(conf)], env=env,
                    stdout=subprocess.DEVNULL, stderr=open(folder / f"{daemon}.err", "w"),
                )
            )  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        state = ""
        while time.monotonic() < deadline:
            for daemon, process in zip(("slurmctld", "slurmd"), started[-2:], strict=True):
                if process.poll() is not None:
                    raise SlurmUnavailable(
                        f"{daemon} exited with status {process.returncode}: "
                        f"{_tail(folder / f'{daemon}.log')} {_tail(folder / f'{daemon}.err')}"
                    )
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True,
                                 text=True, timeout=30)  # fmt: skip
            state = out.stdout.strip() or out.stderr.strip()
            if state in {"idle", "mixed"}:
                break
            time.sleep(0.5)
        else:
            raise SlurmUnavailable(
                f"the node did not become idle in {START_SECONDS} s (sinfo: {state!r}; "
                f"slurmd: {_tail(folder / 'slurmd.log')})"
            )
        yield env
    finally:
        if started:
            subprocess.run(["scancel", "--user=root"], env=env, capture_output=True, timeout=30)
        for process in reversed(started):
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)
