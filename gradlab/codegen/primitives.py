"""What each framework's spellings mean as gradlab primitives: lookups derived from the table.

A user may write ``np.tanh``, ``math.tanh``, ``torch.tanh``, ``jnp.tanh``, ``tf.math.tanh`` or
``x.tanh()``; all of them are the primitive ``tanh`` of :mod:`gradlab.tensor.spec`, which says
so in ``tanh``'s record. This module turns the records' spellings into the dictionaries the
resolver looks names up in: dotted paths spelled from the root module's real name (so aliases
like ``np``/``jnp``/``F`` do not matter), array methods by name, and attributes.

Array methods are the one place where frameworks disagree on a name's meaning: ``x.var()`` is
unbiased on a torch tensor, ``x.max(1)`` gives values and indices there, ``x.transpose(0, 1)``
swaps two axes. The *dialect* of a method (``numpy``, which JAX shares, or ``torch``) is the
framework of the arrays the code runs on; :data:`DIALECT_SENSITIVE` lists the method names whose
meaning depends on it.
"""
from __future__ import annotations

import inspect
from dataclasses import fields
from typing import Mapping

import numpy as _np

from ..tensor.primitive import ArgumentMapping, Meaning, Spelling, parse_signature
from ..tensor.spec import PRIMITIVES, TABLE

def signature(prim: str) -> inspect.Signature:
    """The canonical signature of a primitive (from its record in :mod:`gradlab.tensor.spec`)."""
    record = PRIMITIVES.get(prim)
    return parse_signature(record.signature if record is not None else "(*args, **kwargs)")


#: Argument spellings per family, applied to keywords the canonical signature does not have.
TORCH_RENAME = {"dim": "axis", "keepdim": "keepdims", "input": "x", "other": "y",
                "tensors": "xs", "exponent": "y"}
TF_RENAME = {"input_tensor": "x", "input": "x", "logits": "x", "features": "x", "values": "xs",
             "a": "x", "b": "y", "perm": "axes", "tensor": "x", "params": "x", "t": "x"}
NP_RENAME = {"a": "x", "x1": "x", "x2": "y", "arrays": "xs", "tup": "xs", "newshape": "shape",
             "m": "x", "ary": "x", "A": "x"}

#: family -> (root modules, keyword renames, keywords with no meaning for gradlab)
FAMILIES: dict[str, tuple[tuple[str, ...], Mapping[str, str], tuple[str, ...]]] = {
    "np": (("numpy", "jax.numpy", "autograd.numpy"), NP_RENAME, ()),
    "math": (("math",), {}, ()),
    "builtin": (("builtins",), {}, ()),
    "scipy": (("scipy", "jax.scipy"), {}, ()),
    "torch": (("torch",), TORCH_RENAME, ()),
    "tf": (("tensorflow",), TF_RENAME, ("name",)),
    "jax": (("jax",), {}, ()),
    "gradlab": (("gradlab",), {}, ()),
}
#: Method families: shared by every framework, or torch's own meaning of a name.
_METHOD_FAMILIES = ("method", "torch_method")


def _meaning(prim: str, spelling: Spelling, rename: Mapping[str, str],
             drop: tuple[str, ...]) -> Meaning:
    """The spelling's own mapping, with its family's renames and dropped arguments added."""
    mapping = {f.name: getattr(spelling, f.name) for f in fields(ArgumentMapping)}
    mapping.update(rename={**rename, **spelling.rename}, drop=drop + spelling.drop)
    return Meaning(prim, **mapping)


def _build() -> tuple[dict[str, Meaning], dict[str, Meaning], dict[str, Meaning],
                      dict[str, Meaning]]:
    paths: dict[str, Meaning] = {}
    methods: dict[str, Meaning] = {}
    torch_methods: dict[str, Meaning] = {}
    attributes: dict[str, Meaning] = {}
    for record in TABLE:
        for family, spellings in record.spellings.items():
            for spelling in spellings:
                for spelled in spelling.names.split():
                    if family in FAMILIES:
                        roots, rename, drop = FAMILIES[family]
                        for root in roots:
                            path = f"{root}.{spelled}"
                            if path in paths:
                                raise ValueError(f"{path} is spelled by both "
                                                 f"{paths[path].prim} and {record.name}")
                            paths[path] = _meaning(record.name, spelling, rename, drop)
                    elif family in _METHOD_FAMILIES:
                        table = methods if family == "method" else torch_methods
                        if spelled in table:
                            raise ValueError(f".{spelled}() is spelled by both "
                                             f"{table[spelled].prim} and {record.name}")
                        table[spelled] = _meaning(record.name, spelling, TORCH_RENAME, ())
                    elif family == "attr":
                        attributes[spelled] = _meaning(record.name, spelling, {}, ())
                    else:
                        raise ValueError(f"{record.name}: unknown spelling family {family!r}")
    return paths, methods, torch_methods, attributes


PATHS, _SHARED_METHODS, _TORCH_METHODS, ATTRIBUTES = _build()

#: Methods as a NumPy (or JAX) array understands them; a torch-only method that NumPy arrays
#: lack (``x.unsqueeze``) means its torch meaning here too, but one that NumPy arrays have
#: with a meaning of their own (``x.repeat``, ``x.view``) is not borrowed.
NUMPY_METHODS: dict[str, Meaning] = {
    **{n: m for n, m in _TORCH_METHODS.items() if not hasattr(_np.ndarray, n)},
    **_SHARED_METHODS}
#: Methods as a torch tensor understands them.
TORCH_METHODS: dict[str, Meaning] = {**_SHARED_METHODS, **_TORCH_METHODS}
METHODS = {"numpy": NUMPY_METHODS, "torch": TORCH_METHODS}
#: Method names that mean something else on a torch tensor than on a NumPy array.
DIALECT_SENSITIVE = frozenset(n for n in set(NUMPY_METHODS) | set(TORCH_METHODS)
                              if NUMPY_METHODS.get(n) != TORCH_METHODS.get(n))
#: The dialect of each framework's arrays.
DIALECTS = {"torch": "torch"}


def dialect_of(framework: str | None) -> str:
    """``torch`` for torch tensors, ``numpy`` for everything else (JAX follows NumPy)."""
    return DIALECTS.get(framework or "", "numpy")


#: Method names that change an array in place: refused on values that carry a gradient.
INPLACE_METHODS = {"sort", "fill", "resize", "put", "itemset", "partition", "setflags",
                   "assign", "assign_add", "assign_sub", "scatter_", "index_put_"}
