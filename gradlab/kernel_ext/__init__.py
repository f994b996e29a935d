"""The Jupyter face of gradlab: ``%load_ext gradlab`` registers the ``%%grad`` cell magic.

The layer is thin: :mod:`magic` parses the magic line and the cell, calls the library and binds
the gradient's name to the version the panel runs; :mod:`panel` displays a
:class:`gradlab.workbench.session.GradSession` as widgets (its tabs in :mod:`pages`, its HTML in
:mod:`views`, the CodeMirror editor in :mod:`editor`) or as text where there are no widgets,
and :mod:`reopen` keeps its static view beside it for notebooks read without a kernel.
Everything shown is reachable from plain Python.
"""
from __future__ import annotations

from typing import Any

_registered: dict[int, Any] = {}


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%grad``; loading twice changes nothing."""
    if id(ipython) in _registered:
        return
    from .magic import GradMagics
    magics = GradMagics(ipython)
    ipython.register_magics(magics)
    _registered[id(ipython)] = magics


def unload_ipython_extension(ipython: Any) -> None:
    """Remove ``%%grad`` again."""
    magics = _registered.pop(id(ipython), None)
    if magics is None:
        return
    manager = ipython.magics_manager
    manager.magics["cell"].pop("grad", None)
    manager.registry.pop(type(magics).__name__, None)
