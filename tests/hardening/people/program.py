"""A generated program: its source, how to call it, and how to import it so gradlab can read it."""
from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from tests.hardening.people.inputs import Param, numpy_inputs


@dataclass
class PeopleProgram:
    """``source`` defines ``f`` (and maybe helpers, a decorator, constants); ``params`` its
    parameters, ``wrt`` what gradlab differentiates with respect to, *as the user writes it*
    (an index, a name or a tuple), ``seed`` the inputs' seed. ``output`` says what ``f``
    returns: ``"scalar"``, or ``"tuple"``/``"array"`` (grad and hvp must then refuse).
    ``constructs`` names what the program uses (``table: np.var``, ``try``, ``decorator``...),
    for the counts by construct."""

    source: str
    dialect: str
    params: tuple[Param, ...]
    wrt: Any
    seed: int
    constructs: frozenset[str] = field(default_factory=frozenset)
    output: str = "scalar"

    @property
    def digest(self) -> str:
        text = f"{self.source}\n{self.params}\n{self.wrt}\n{self.seed}"
        return hashlib.sha1(text.encode()).hexdigest()[:10]

    @property
    def wrt_indices(self) -> tuple[int, ...]:
        names = [p.name for p in self.params]
        items = self.wrt if isinstance(self.wrt, tuple) else (self.wrt,)
        return tuple(names.index(w) if isinstance(w, str) else w for w in items)

    def inputs(self) -> list[Any]:
        return numpy_inputs(self.params, self.seed)

    def call_text(self) -> str:
        """How the program is differentiated, as a line of Python (for reproductions)."""
        return f"gradlab.grad(f, {self.wrt!r})"

    def __repr__(self) -> str:     # what hypothesis prints for a falsifying example
        params = ", ".join(p.describe() for p in self.params)
        return (f"PeopleProgram(dialect={self.dialect!r}, params=({params}), wrt={self.wrt!r}, "
                f"seed={self.seed!r}, source=\n{self.source})")


_DIR: str | None = None


def module_dir() -> str:
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="gradlab_people_")
        atexit.register(shutil.rmtree, _DIR, True)     # one folder per process, removed at exit
    return _DIR


def import_source(source: str, name: str) -> Any:
    """Write ``source`` to a ``.py`` file and import it (kept in ``sys.modules``, so its source
    stays readable for gradlab)."""
    if name in sys.modules:
        return sys.modules[name]
    path = os.path.join(module_dir(), name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load(program: PeopleProgram) -> Any:
    return import_source(program.source, f"gradlab_people_{program.digest}")
