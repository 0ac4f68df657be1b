"""Bring your own model and data: write the folder dataset, then run ``fdbench benchmark``.

    python examples/bring_your_own/run.py runs/bring_your_own

Writes the digits folder tree (make_dataset.py) under ``<out>/data``, points the configuration
(config.yaml) at it and runs the benchmark with this folder importable, so the config's
``architecture.factory: "mynets:make"`` finds the network. Equivalent by hand::

    python examples/bring_your_own/make_dataset.py data/digits_folder
    PYTHONPATH=examples/bring_your_own fdbench benchmark --trust-config-code \\
        examples/bring_your_own/config.yaml
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent


def run(out: str | Path, *, report: bool = True):
    """Run the example into ``out`` (data under ``out/data``, results under ``out/run``);
    returns the results table."""
    sys.path.insert(0, str(HERE))
    from make_dataset import make_dataset

    from fdbench.core.callables import trust_config_code

    trust_config_code()  # the config names our network (mynets:make): code we trust

    from fdbench.jobs.benchmark import run_benchmark
    from fdbench.jobs.plan import parse_config

    out = Path(out)
    root = make_dataset(out / "data" / "digits_folder")
    settings = yaml.safe_load((HERE / "config.yaml").read_text())
    settings["data"]["args"]["root"] = str(root)
    config = parse_config(settings, source="config.yaml")
    return run_benchmark(config, out / "run", workers=0, report=report)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    results = run(parser.parse_args().out)
    iid = results[(results.study == "iid") & (results.metric == "augrc")]
    print("AUGRC on the iid study:")
    print(iid[["method", "csf", "value"]].to_string(index=False))
