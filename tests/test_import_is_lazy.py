"""`import compat` and `import compat.v1` must not import TensorFlow."""
import subprocess
import sys

import pytest


@pytest.mark.parametrize("statement", [
    "import compat",
    "import compat.v1",
    "import compat.v1 as tf; import compat.v1.train",
    "import compat.check",
    "import compat.harness",
])
def test_import_does_not_import_tensorflow(statement):
    code = f"{statement}; import sys; print('tensorflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
