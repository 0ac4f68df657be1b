"""The core stages and the integrations package import none of the optional tools.

(CI also checks this in a bare environment without them: scripts/check_core_install.sh.)"""

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def test_core_and_integrations_package_import_without_optional_tools():
    code = (
        "import sys\n"
        "import fdbench, fdbench.metrics, fdbench.csf, fdbench.outputs, fdbench.protocol\n"
        "import fdbench.analysis, fdbench.integrations, fdbench.integrations.sklearn\n"
        "loaded = [m for m in ('torch', 'torchmetrics', 'lightning', 'sklearn')\n"
        "          if m in sys.modules]\n"
        "assert not loaded, f'imported: {loaded}'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
