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
