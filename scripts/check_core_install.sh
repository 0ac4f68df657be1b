#!/usr/bin/env bash
# Checks that the core install (`pip install fdbench`, no extras) imports without PyTorch: a bare
# virtual environment gets this checkout with its core dependencies only, then the metrics, CSFs,
# outputs and the integrations package import without torch, torchmetrics or lightning, and the
# torchmetrics and Lightning adapters say which extra they need.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
bare="$(mktemp -d)"
trap 'rm -rf "$bare"' EXIT
python3 -m venv "$bare/venv"
"$bare/venv/bin/python" -m pip install -q "$PWD"
cd "$bare"  # away from the checkout: the installed package is imported, not src/
"$bare/venv/bin/python" - <<'PY'
import importlib.util
import sys

import fdbench.csf
import fdbench.integrations
import fdbench.integrations.sklearn
import fdbench.metrics
import fdbench.outputs

assert fdbench.metrics.__file__.startswith(sys.prefix), fdbench.metrics.__file__
for name in ("torch", "torchmetrics", "lightning"):
    assert name not in sys.modules, f"{name} was imported by the core package"
    assert importlib.util.find_spec(name) is None, f"{name} is installed in the bare venv"
for adapter in ("torchmetrics", "lightning"):
    try:
        __import__(f"fdbench.integrations.{adapter}")
    except ImportError as err:
        assert "fdbench[integrations]" in str(err), err
    else:
        raise AssertionError(f"fdbench.integrations.{adapter} imported without its extra")
print("core install: fdbench.metrics imports without torch, torchmetrics or lightning")
PY
