"""gradlab: see backpropagation.

``gradlab.grad(f)`` reads ``f``'s source and returns a new Python function computing its
gradient, whose source (``.source``) a person can read, edit and run on NumPy, PyTorch,
TensorFlow or JAX. In Jupyter, ``%load_ext gradlab`` adds the ``%%grad`` cell magic.

Importing gradlab imports no framework.
"""
from __future__ import annotations

from .api import grad, hvp, insert_grad_of, jvp, stop_gradient, value_and_grad
from .workbench.edit import EditError, diff, recompile
from .extend import adjoint, nondifferentiable, tangent_rule

_LAZY = {"exercise": "workbench.exercises", "graph": "workbench.graphs",
         "gradient_norms": "workbench.health", "plot_gradient_norms": "workbench.health",
         "parameter_norms": "workbench.health", "plot_parameter_norms": "workbench.health",
         "step": "workbench.stepping", "trace": "workbench.tracing", "measure": "workbench.timing",
         "ForwardMismatchError": "guard"}


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    """The inspection and classroom tools load on first use: they need NumPy, and importing
    gradlab imports no framework."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gradlab' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"gradlab.{module}"), name)
    globals()[name] = value
    return value


def show(df, *args, backend="numpy", device="cpu", check=False,  # type: ignore[no-untyped-def]
         exercise=False):
    """The ``%%grad`` panel for a generated function, from plain Python code."""
    from .kernel_ext.panel import show as _show
    return _show(df, *args, backend=backend, device=device, check=check, exercise=exercise)
from .errors import BackendError, CallError, GradlabError, GradlabSyntaxError, NoRuleError
from .tensor.dtypes import (bfloat16, bool_, complex64, complex128, float16, float32, float64,
                            int8, int16, int32, int64, uint8)

__version__ = "0.1.0"

__all__ = [
    "EditError", "ForwardMismatchError", "adjoint", "diff", "exercise", "gradient_norms", "graph",
    "measure", "parameter_norms", "plot_gradient_norms", "plot_parameter_norms", "show", "step", "nondifferentiable", "recompile", "tangent_rule", "trace",
    "BackendError", "CallError", "GradlabError", "GradlabSyntaxError", "NoRuleError", "bfloat16", "bool_",
    "complex64", "complex128", "float16", "float32", "float64", "grad", "hvp", "insert_grad_of", "jvp",
    "int8", "int16", "int32", "int64", "stop_gradient", "uint8", "value_and_grad",
]


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """``%load_ext gradlab``: registers the ``%%grad`` cell magic."""
    from .kernel_ext import load_ipython_extension as load
    load(ipython)


def unload_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    from .kernel_ext import unload_ipython_extension as unload
    unload(ipython)
