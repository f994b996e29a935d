"""The command line prints generated code for FILE.py:FUNCTION."""
import subprocess
import sys
from pathlib import Path

import pytest

from gradlab.cli import main


def test_cli_prints_backward_code(tmp_path: Path):
    source = tmp_path / "model.py"
    source.write_text("import numpy as np\n\ndef loss(W, x):\n    return np.sum(np.tanh(x @ W))\n")
    out = subprocess.run([sys.executable, "-m", "gradlab.cli", "grad", f"{source}:loss",
                          "--wrt", "W,x", "--color", "never"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("def dloss_dW_dx(W, x, *, seed=1.0):")
    assert "return (dW, dx)" in out.stdout


def test_cli_reports_errors(tmp_path: Path):
    source = tmp_path / "bad.py"
    source.write_text("def f(x):\n    try:\n        return x\n    except Exception:\n"
                      "        return x\n")
    out = subprocess.run([sys.executable, "-m", "gradlab.cli", "grad", f"{source}:f"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "try/except" in out.stderr and "line 2" in out.stderr


def test_cli_refuses_an_empty_wrt(tmp_path: Path):
    source = tmp_path / "model.py"
    source.write_text("import numpy as np\n\ndef loss(W, x):\n    return np.sum(W * x)\n")
    for wrt in ("", "W,", ","):
        out = subprocess.run([sys.executable, "-m", "gradlab.cli", "grad", f"{source}:loss",
                              "--wrt", wrt], capture_output=True, text=True)
        assert out.returncode == 2, (wrt, out.stdout)
        assert "names no parameter" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("text, says", [
    ("import numpy as np\ndef f(x):\n    return np.sum(x\n", "SyntaxError"),
    ("import no_such_module_of_gradlabs\n", "ModuleNotFoundError"),
    ("import sys\nsys.exit(3)\n", "sys.exit"),
    ("raise ValueError('boom')\n", "ValueError: boom"),
])
def test_a_file_that_fails_to_import_is_reported_not_raised(tmp_path, capsys, text, says):
    path = tmp_path / "broken_module.py"
    path.write_text(text)
    assert main(["grad", f"{path}:f"]) == 2
    assert says in capsys.readouterr().err
