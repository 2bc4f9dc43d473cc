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


_WITHOUT_TENSORFLOW = """
import importlib.util, sys
found = importlib.util.find_spec
# As in a Python where TensorFlow is not installed (the notf env has none anyway).
importlib.util.find_spec = lambda name, *a: (None if name.partition('.')[0] == 'tensorflow'
                                            else found(name, *a))
sys.modules['tensorflow'] = None
{statement}
"""


@pytest.mark.parametrize("statement", [
    "import compat.v1 as tf; tf.train.batch",
    "import compat; compat.to_dataset",
])
def test_a_tf_name_without_tensorflow_says_how_to_install_it(statement):
    out = subprocess.run([sys.executable, "-c", _WITHOUT_TENSORFLOW.format(statement=statement)],
                         capture_output=True, text=True)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: compat."), last
    assert "needs TensorFlow" in last and "pip install 'tf1-queue-compat[tf-cpu]'" in last, last
    assert "numpy" not in last
