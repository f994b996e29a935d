"""gradlab's primitive table, read through one small adapter.

The generator draws every spelling gradlab claims to understand (``np.sum``, ``torch.var``,
``tf.reduce_max``, ``x.repeat``, ``x.T``...). The table is one record per primitive in
:mod:`gradlab.tensor.spec`; :mod:`gradlab.codegen.primitives` derives the lookups read here
(``PATHS``, ``METHODS`` per array dialect, ``ATTRIBUTES``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Spelling:
    """One way of writing a primitive: ``kind`` is ``"function"`` (``path`` is the dotted path
    from the root module's real name, ``numpy.linalg.norm``), ``"method"`` or ``"property"``
    (``path`` is the attribute name); ``prim`` is gradlab's canonical primitive."""

    kind: str
    path: str
    prim: str

    @property
    def root(self) -> str:
        """The module the spelling belongs to: ``numpy``, ``jax.numpy``, ``autograd.numpy``,
        ``torch``, ``tensorflow``, ``math``, ``builtins``, ``scipy``, ``jax``, ``gradlab``;
        ``""`` for methods and properties."""
        if self.kind != "function":
            return ""
        for root in ("jax.numpy", "autograd.numpy"):
            if self.path.startswith(root + "."):
                return root
        return self.path.split(".")[0]


@lru_cache(maxsize=1)
def primitive_table() -> tuple[Spelling, ...]:
    """Every spelling in gradlab's table, in a stable order. The one place that knows where
    the table lives."""
    from gradlab.codegen import primitives as P
    rows = [Spelling("function", path, meaning.prim) for path, meaning in P.PATHS.items()]
    methods = {**P.METHODS["torch"], **P.METHODS["numpy"]}   # every name, once
    rows += [Spelling("method", name, meaning.prim) for name, meaning in methods.items()]
    rows += [Spelling("property", name, m.prim) for name, m in P.ATTRIBUTES.items()]
    return tuple(sorted(rows, key=lambda s: (s.kind, s.path)))


@lru_cache(maxsize=1)
def vararg_methods() -> frozenset[str]:
    """Methods whose positional arguments NumPy reads as one tuple (``x.reshape(2, 3)``)."""
    from gradlab.codegen import primitives as P
    return frozenset(name for table in P.METHODS.values() for name, m in table.items()
                     if m.varargs)
