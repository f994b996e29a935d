"""The Jupyter face of gradlab: ``%load_ext gradlab`` registers the ``%%grad`` cell magic.

The layer is thin: :mod:`magic` parses the magic line and the cell and calls the library;
:mod:`panel` displays a :class:`gradlab.workbench.session.GradSession` as widgets (or as text where there
are no widgets). Everything shown is reachable from plain Python.
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
