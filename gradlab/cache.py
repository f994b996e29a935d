"""The transform cache: generated programs, reused while what they were made from is unchanged.

A transform depends on a function's code, on what its names refer to (modules, helper
functions, classes: by identity) and on the *kinds* of the values it closes over. It does not
depend on those values themselves: the generated code receives them as parameters. So the cache
is keyed without holding values, and it never keeps a user's data alive:

- a key that names an object by ``id`` registers the object as an *anchor*: when the object is
  collected, the entries that name it are dropped (so an ``id`` reused by a new object can
  never find a stale transform);
- the number of entries is bounded, the least recently used going first.

A fresh closure per training step (``def loss(W): return f(W, batch)`` in the loop) finds the
transform of the first step, and no step's ``batch`` stays behind.
"""
from __future__ import annotations

import sys
import types
import weakref
from collections import OrderedDict
from typing import Any, Iterable

#: Transforms kept: each is a few compiled functions and their source text.
LIMIT = 256


class TransformCache:
    """A bounded LRU mapping whose entries also go when one of their anchors is collected."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._entries: OrderedDict[Any, tuple[Any, list[Any]]] = OrderedDict()

    def get(self, key: Any) -> Any:
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: Any, value: Any, anchors: Iterable[Any] = ()) -> None:
        """Store ``value``; it is dropped when any of ``anchors`` is collected. Anchors that
        cannot be weakly referenced (builtins, ufuncs) live as long as the interpreter anyway."""
        self.discard(key)
        finalizers = []
        ref = weakref.ref(self)
        for obj in {id(a): a for a in anchors}.values():
            try:
                finalizers.append(weakref.finalize(obj, _drop, ref, key))
            except TypeError:
                pass
        self._entries[key] = (value, finalizers)
        while len(self._entries) > self.limit:
            oldest = next(iter(self._entries))
            self.discard(oldest)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.put(key, value)

    def discard(self, key: Any) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            for finalizer in entry[1]:
                finalizer.detach()

    def clear(self) -> None:
        for key in list(self._entries):
            self.discard(key)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Any) -> bool:
        return key in self._entries


def _drop(ref: weakref.ref[TransformCache], key: Any) -> None:
    cache = ref()
    if cache is not None:
        cache.discard(key)


# --- keys that hold no values, and the values bound back ---------------------------------------
class _Cell:
    """Stands, in a cached transform's free values, for a value the function closes over:
    each function made from the transform binds its own (see :func:`bind_free`)."""

    def __repr__(self) -> str:
        return "<closed-over value>"


CELL = _Cell()


def closed_over(fn: Any) -> dict[str, Any]:
    """The values ``fn`` closes over, by name (empty cells left out)."""
    out: dict[str, Any] = {}
    closure = getattr(fn, "__closure__", None)
    if closure:
        for name, cell in zip(fn.__code__.co_freevars, closure):
            try:
                out[name] = cell.cell_contents
            except ValueError:
                pass
    return out


def unbound(free: dict[str, Any], fn: Any) -> dict[str, Any]:
    """``free`` without the values ``fn`` closes over (what a cached transform keeps)."""
    cells = closed_over(fn)
    return {k: (CELL if k in cells and v is cells[k] else v) for k, v in free.items()}


def bind_free(free: dict[str, Any], fn: Any) -> dict[str, Any]:
    """``free`` with ``fn``'s own closed-over values put back."""
    if not any(v is CELL for v in free.values()):
        return dict(free)
    cells = closed_over(fn)
    return {k: (cells[k] if v is CELL else v) for k, v in free.items()}


def reverse_key(fn: Any) -> tuple[tuple[Any, ...], list[Any]]:
    """What a reverse transform of ``fn`` depends on besides its code, and the objects the key
    names by identity (the cache drops the entry when one is collected).

    The values ``fn`` closes over count by their type only: the generated code receives them
    as parameters, so a fresh closure per training step over a new batch reuses the transform
    without keeping any batch alive. Functions, modules and classes count by identity, and
    the functions ``fn`` calls count with their own closed-over values (kept in the transform:
    when such a function is collected, so is the entry)."""
    anchors: list[Any] = []
    # the module counts by identity: the code compiled for the transform reads its globals
    # (two files with the same text share no transform; equal code objects ignore the file)
    parts: list[Any] = [("module", id(fn.__globals__))]
    module = sys.modules.get(fn.__module__ or "")
    if module is not None and getattr(module, "__dict__", None) is fn.__globals__:
        anchors.append(module)
    for n in _global_names(fn):
        value = fn.__globals__.get(n)
        if isinstance(value, (types.ModuleType, type)) or callable(value):
            parts.append((n, id(value)))
            anchors.append(value)
            parts.extend(fingerprint(value, {id(fn)}))
    for n, value in sorted(closed_over(fn).items()):
        if isinstance(value, (types.ModuleType, type)) or callable(value):
            parts.append((n, id(value)))
            anchors.append(value)
            parts.extend(fingerprint(value, {id(fn)}))
        else:
            parts.append((n, type(value)))
    return tuple(parts), anchors


def _global_names(fn: Any) -> list[str]:
    """The global names ``fn``'s code reads, its nested functions' and comprehensions' too,
    in sorted order."""
    names = set(fn.__code__.co_names)
    for const in fn.__code__.co_consts:
        if isinstance(const, types.CodeType):
            names |= set(const.co_names)
    return sorted(names)


def fingerprint(fn: Any, seen: set[int] | None = None) -> tuple[Any, ...]:
    """What a transform depends on besides ``fn``'s code: the modules and functions its names
    refer to (recursively), and closed-over values."""
    seen = seen if seen is not None else set()
    if id(fn) in seen or not isinstance(fn, types.FunctionType):
        return ()
    seen.add(id(fn))
    parts: list[Any] = [id(fn.__code__)]
    for n in _global_names(fn):
        value = fn.__globals__.get(n)
        if isinstance(value, (types.ModuleType, type)) or callable(value):
            parts.append((n, id(value)))
            parts.extend(fingerprint(value, seen))
    if fn.__closure__:
        for cell in fn.__closure__:
            try:
                parts.append(id(cell.cell_contents))
            except ValueError:
                parts.append(None)
    return tuple(parts)
