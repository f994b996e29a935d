"""The package's face (gradlab/__init__.py): every promised name, the workbench's loaded only
when first used."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import gradlab


def test_every_name_in_all_is_there() -> None:
    missing = [name for name in gradlab.__all__ if not hasattr(gradlab, name)]
    assert not missing
    assert len(set(gradlab.__all__)) == len(gradlab.__all__)


def test_a_lazy_name_is_the_workbench_function_itself() -> None:
    from gradlab.workbench import health, stepping
    assert gradlab.step is stepping.step
    assert gradlab.gradient_norms is health.gradient_norms


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'gradlab' has no attribute 'gradient'"):
        gradlab.gradient  # noqa: B018


def test_importing_gradlab_loads_no_workbench_tool_and_no_framework() -> None:
    code = ("import json, sys, gradlab\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(("
            "'gradlab.workbench.stepping', 'gradlab.workbench.graphs', 'gradlab.kernel_ext', "
            "'torch', 'tensorflow', 'jax', 'IPython', 'ipywidgets')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
