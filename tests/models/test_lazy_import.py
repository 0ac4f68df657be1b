"""fdbench.models, fdbench.training and fdbench.config import without loading PyTorch."""

import subprocess
import sys


def test_packages_import_without_torch():
    code = (
        "import sys, fdbench.models, fdbench.training, fdbench.config\n"
        "assert fdbench.models.ARCHITECTURES\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "assert 'lightning' not in sys.modules, 'lightning was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
