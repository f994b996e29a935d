"""Container arguments as the workbench sees them: a call ``df(params, x)`` runs the code
generated for ``params``' leaves (``params_W``, ``params_b``: see :mod:`gradlab.pytrees`), so the
tools that run generated code line by line — trace, step, graph, the panel's runs, the NaN hunt
— run that code on those leaves, and give the gradients back in the arguments' structure.

An edit of that code (``gradlab.recompile(df.source_for(params, x) edited, like=df)``) is an
edit for one structure of the arguments: :class:`EditedContainers` runs it for calls with that
structure, and says so for any other.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..errors import GradlabError
from ..pytrees import (ContainerCalls, ForContainersOnly, Specialised, build, has_containers,
                       leaves_of, structure_of)


@dataclasses.dataclass
class LeafCall:
    """One call with container arguments, as the code it runs: ``df(*args)`` is that code's
    derivative on the leaves; :meth:`gradients` builds its gradients in the structures."""

    df: Any
    args: tuple[Any, ...]
    calls: ContainerCalls
    spec: Specialised

    def gradients(self, flat: Any) -> Any:
        """The leaves' gradients (one, or a tuple) in their arguments' structures."""
        if self.df.mode == "jvp":
            return flat                # a tangent of the output: no structure of an argument
        return self.calls.gradients(self.spec, flat if isinstance(flat, tuple) else (flat,))


def container_calls(df: Any) -> ContainerCalls:
    """The calls of ``df`` with container arguments (a gradient, or one made only for them)."""
    calls = getattr(df, "calls", None) if isinstance(df, ForContainersOnly) else None
    return calls if calls is not None else df.containers  # type: ignore[no-any-return]


def leaf_call(df: Any, args: Sequence[Any], kwargs: dict[str, Any] | None = None
              ) -> LeafCall | None:
    """``df(*args)`` as the call of the code for the arguments' leaves, or None where no
    argument is a container (the code runs on the arguments themselves). A jvp's tangent (an
    hvp's ``v``), the last argument, is flattened as its argument is."""
    if not has_containers(tuple(args)) or not hasattr(df, "mode"):
        return None
    calls = container_calls(df)
    tangent = df.mode in ("jvp", "hvp")
    values = tuple(args[:-1]) if tangent else tuple(args)
    spec, flat = calls.specialised(calls.bind(values, kwargs or {}))
    if tangent:
        flat.append(calls.tangents(spec, args[-1], "tangent" if df.mode == "jvp" else "v"))
    return LeafCall(spec.inner, tuple(flat), calls, spec)


class EditedContainers(ForContainersOnly):
    """An edit of the code generated for one structure of container arguments: called with
    arguments of that structure, it runs the edit on their leaves and gives the gradients back
    in their structure; other structures are refused (the edit names their leaves)."""

    def __init__(self, like: Any, key: tuple[Any, ...], spec: Specialised, edited: Any) -> None:
        original = container_calls(like)
        calls = ContainerCalls(original.fn, original.wrt, original.many, original.params,
                               original.mode, self._refuse)
        calls.install(key, dataclasses.replace(spec, inner=edited))
        super().__init__(calls, GradlabError(
            f"this edit of {edited.name} takes the leaves of container arguments "
            f"({', '.join(edited.params)}): call it with the arguments whose code you edited"),
            dict(getattr(like, "options", {})))
        self.edited = edited
        self.edited_from = like
        self.name = edited.name
        self.seed_name = edited.seed_name
        self.value_name = edited.value_name
        self.structures = key

    @property
    def source(self) -> str:
        return self.edited.source  # type: ignore[no-any-return]

    @property
    def saved(self) -> Any:
        """What the edit saves for its backward pass (see GeneratedFunction.saved)."""
        return self.edited.saved

    def _refuse(self, flat: Any, wrt: Any) -> Any:
        raise GradlabError(
            f"this edit of {self.name} was written for container arguments of another "
            f"structure (its parameters are {', '.join(self.edited.params)}): call it with "
            f"arguments of that structure, or edit the code df.source_for(...) shows for these")

    def __repr__(self) -> str:
        return f"<gradlab edited {self.mode} {self.name} of {self.fn.__qualname__}, for " \
               f"container arguments>"


def specialisation_for(like: Any, parameters: Sequence[str]) -> tuple[Any, Specialised] | None:
    """The structure (its key) and specialisation of ``like``'s container calls whose code
    takes these parameters (the leaves of the arguments an edited text was shown for), or None
    where ``like`` has none such."""
    if not hasattr(like, "mode") or like.mode not in ("grad", "value_and_grad", "jvp", "hvp"):
        return None
    try:
        calls = container_calls(like)
    except (AttributeError, GradlabError):
        return None
    for key, spec in calls.specialisations():
        # (an hvp's code takes its seed positionally, after the function's arguments)
        if [p for p in parameters if p != spec.inner.seed_name] == list(spec.inner.params):
            return key, spec
    return None


def tree_map(fn: Any, value: Any) -> Any:
    """``value`` with ``fn`` applied to each leaf of its containers (dicts, namedtuples,
    dataclasses, lists and tuples holding them), the structure kept."""
    if not has_containers((value,)):
        return fn(value)
    structure = structure_of(value)
    return build(structure, iter([fn(leaf) for leaf in leaves_of(value, structure)]))
