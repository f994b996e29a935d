"""The public API: ``grad``, ``value_and_grad`` and the callable they return.

A transform is done once per function source and options (cached); the generated text is
compiled once; the compiled code is instantiated once per backend (and torch device) the first
time inputs of that kind arrive. A call then costs one look at the inputs' types plus the
generated code itself.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import re
import sys
import types
import warnings
from typing import TYPE_CHECKING, Any, Callable, Sequence, Union

import numpy as np
from numpy import float32, float64, generic, ndarray

from . import guard
from .guard import layout
from .cache import TransformCache, bind_free, fingerprint, reverse_key
from .codegen.ranks import shape_key, signature_of
from .codegen.shapes import LIST_MARK, VECTOR_MARK
from .calls import (dtype_name, explain_call_error, explain_framework_error, generated_line,
                    refuse_without_gradient, require_gradient_per_input, require_scalar_value,
                    require_seed_shape, require_tangent_shapes, several_outputs, shape_of)
from .codegen.parse import parse_function
from .codegen.primitives import dialect_of
from .errors import GradlabError
from .extend import rules_version
from .pytrees import (ContainerCalls, ForContainersOnly, call_gradient, call_hvp, call_jvp,
                      has_containers, may_take_containers)
from .tensor.detect import PYTHON, common_framework, framework_of
from .tensor.gradlist import GradList
from .tensor.registry import backend
from .tensor.registry import get as get_backend

if TYPE_CHECKING:
    from .transforms import ForwardTransform, SeveralOutputs, Variant

Wrt = Union[int, str, Sequence[Union[int, str]]]


def types_of(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The argument types a variant is looked up by; a list's or tuple's with its items'
    (a list of torch tensors after a list of NumPy arrays needs the code made for torch)."""
    kinds = tuple(map(type, args))
    if list in kinds or tuple in kinds:
        return tuple(_deep_type(a) for a in args)
    return kinds


def _deep_type(value: Any) -> Any:
    kind = type(value)
    if kind is list or kind is tuple:
        return (kind,) + tuple(_deep_type(v) for v in value)
    return kind


def _transforms() -> types.ModuleType:
    """The code generator (:mod:`gradlab.transforms` and the codegen under it), loaded by the
    first transform: it is most of gradlab's import time, and ``import gradlab`` keeps to its
    budget (bench/overhead.py: under 0.3 s, for a notebook that imports before it differentiates)."""
    from . import transforms
    return transforms


class GeneratedFunction:
    """A generated function that runs on whichever framework its inputs come from.

    Under ``tf.function`` it is traced as plain Python (``autograph_info__`` tells AutoGraph
    not to rewrite it): the generated code already is the graph's program.

    ``.source`` is the generated Python, exactly as compiled, but for one thing: the forward
    value, kept where the backward pass begins, is handed to this wrapper with the gradients
    (it insists on a scalar output unless a ``seed`` is given, value_and_grad returns it, and
    the semantic guard compares it). ``.line_map`` maps each generated line to the user's line
    it came from.
    """

    autograph_info__ = None

    def __init__(self, fn: Callable[..., Any], transform: Any,
                 source: Any, filename: str, main: str, free: dict[str, Any], wrt: tuple[str, ...],
                 many: bool, mode: str, params: list[str], seed_name: str | None,
                 options: dict[str, Any], transform_seconds: float) -> None:
        self.fn = fn
        self._transform = transform
        self._source = source
        self.filename = filename
        self.name = main
        self._free = free
        self.wrt = wrt
        self.many = many
        self.mode = mode
        self.params = params
        self.seed_name = seed_name
        self.options = options
        self.transform_seconds = transform_seconds
        self.value_name: str | None = None      # the forward value's variable, for edits
        self.wrt_index = params.index(wrt[0]) if wrt and wrt[0] in params else 0
        self.edited_from: GeneratedFunction | None = None
        self._impls: dict[Any, Callable[..., Any]] = {}
        #: each compiled function's (framework, device, scalars, signature, functional), and
        #: its lean twin once asked for (see _lean_of)
        self._impl_keys: dict[Callable[..., Any], tuple[Any, ...]] = {}
        self._leaner: dict[Callable[..., Any], Callable[..., Any]] = {}
        #: each specialised function's generic one, which runs where the specialised fails
        self._generic_of: dict[Callable[..., Any], Callable[..., Any]] = {}
        #: argument types -> (the generic code, its framework, and None, or where the code
        #: is specialised for the arguments' shapes, a table: their shapes -> the code)
        self._by_types: dict[tuple[type, ...], tuple[Callable[..., Any], str, Any]] = {}
        self._by_ranks: dict[Any, tuple[Callable[..., Any], str, Any]] = {}
        #: argument types whose call needs no seed, no tuple and no mode: NumPy and Python
        #: numbers, one ``wrt``, plain ``grad`` (its fast path saves half the wrapper's time)
        self._fast: dict[tuple[type, ...], tuple[Callable[..., Any], str, Any]] = {}
        #: the same, by the arguments' layout (guard.layout), once the guard checked it
        self._plain: dict[tuple[Any, ...], tuple[Callable[..., Any], str, Any]] = {}
        #: a gradient gets code specialised for its call's shapes (see gradlab.codegen.ranks),
        #: where its generic code has helpers that decide by shapes at run time (elsewhere a
        #: call pays nothing for it)
        self._specializes = bool(getattr(transform, "specializes", False)) and any(
            helper in source.text for helper in _SHAPE_HELPERS) and _SPECIALISING
        self._signatures: dict[Any, Any] = {}
        self._seeds: dict[Any, Any] = {}
        #: argument layouts (types, shapes, dtypes: guard.layout) whose first call was checked
        #: by the semantic guard (see guard.py); shared by the functions made from one
        #: transform: gradlab's reading of the code is checked once per kind of arguments,
        #: not once per training step's fresh closure (one with check=False keeps its own:
        #: a layout it ran unchecked is not checked for the functions that do check)
        self._checked: set[tuple[Any, ...]] = getattr(transform, "checked", set()) if (
            self.options.get("check", True)) else set()
        #: argument layouts the guard could not check, and why
        self.unchecked: dict[tuple[Any, ...], str] = getattr(transform, "unchecked", {})
        #: set when the function returns a tuple or list written out: a seed is then needed
        self._outputs: SeveralOutputs | None = getattr(transform, "outputs", None)
        #: a default value is a container: a call leaving it out is specialised for it too
        self._container_defaults = has_containers(getattr(fn, "__defaults__", None) or ())
        self.__name__ = main
        self.__qualname__ = main
        self.__doc__ = f"{mode} of {getattr(fn, '__qualname__', fn)} (generated by gradlab)"

    @property
    def source(self) -> str:
        return self._source.text  # type: ignore[no-any-return]

    @property
    def line_map(self) -> dict[int, int]:
        return self._source.line_map  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<gradlab {self.mode} {self.name} of {getattr(self.fn, '__qualname__', '?')}>"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.source)

    def implementation(self, framework: str, device: Any = None,
                       scalars: frozenset[str] = frozenset(), signature: Any = None,
                       functional: bool = False) -> Callable[..., Any]:
        """The compiled function bound to one backend's namespace (and, for plain Python
        numbers, the variant specialized for the parameters that are numbers; for a
        ``signature``, the variant specialised for those shapes). ``functional``: the code
        whose gradient buffers are not updated in place (arrays that cannot change, torch
        under autograd; see :mod:`gradlab.codegen.inplace`)."""
        functional = functional or not get_backend(framework).updates_in_place
        key = (framework, device, scalars, functional) if signature is None else (
            framework, device, scalars, functional, signature)
        impl = self._impls.get(key)
        if impl is None:
            variant = self._variant(scalars, dialect_of(framework), signature)
            if signature is not None and variant is self._variant(scalars,
                                                                  dialect_of(framework)):
                impl = self.implementation(framework, device, scalars,   # nothing to gain
                                           functional=functional)
                self._impls[key] = impl
                return impl
            free = bind_free(variant.free, self.fn)
            free["gl"] = backend(framework, device)
            factory = variant.functional if functional and variant.functional else \
                variant.factory
            impl = factory(**free)[variant.name]
            self._impls[key] = impl
            self._impl_keys[impl] = (framework, device, scalars, signature, functional)
        return impl

    def _lean_of(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """``impl``'s twin that computes the gradient without the function's value, for a
        ``grad`` call after the first (see ``Transform.lean_factory``); ``impl`` itself where
        there is none."""
        lean = self._leaner.get(impl)
        if lean is None:
            if len(self._leaner) >= 64:     # (bounded: past that, the code as shown runs)
                return impl
            lean = self._make_lean(impl)
            self._leaner[impl] = lean
        return lean

    def _make_lean(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        key = self._impl_keys.get(impl)
        make = getattr(self._transform, "lean_factory", None)
        if key is None or make is None or self.mode != "grad" or self.options.get(
                "preserve_result"):
            return impl
        framework, device, scalars, signature, functional = key
        if functional or framework not in ("numpy", "torch"):
            return impl           # (JAX's and TensorFlow's compilers leave out dead code)
        factory = make(scalars, self.fn, dialect_of(framework), signature)
        if factory is None:
            return impl
        variant = self._variant(scalars, dialect_of(framework), signature)
        free = bind_free(variant.free, self.fn)
        free["gl"] = backend(framework, device)
        return factory(**free)[variant.name]  # type: ignore[no-any-return]

    def variant_source(self, *args: Any) -> str:
        """The generated source that runs for these inputs (plain Python numbers get a
        specialized variant; arrays of every framework share :attr:`source`)."""
        return self.variant_for(args).source.text

    def source_for(self, *args: Any) -> str:
        """The generated source that runs for these arguments: where their shapes make a
        difference, the code specialised for them (``dW = x.T @ dz``), whose first line says
        so (``# specialised for x: 2-d, W: 2-d``); else :attr:`source` (or the variant for
        Python numbers). Container arguments: the code for their leaves (see
        :mod:`gradlab.pytrees`)."""
        if has_containers(args):
            return self.containers.source_for(args[:-1] if self.mode in ("jvp", "hvp")
                                              else args, {})
        return self.running_variant(args).source.text

    def _takes_containers(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether this call passes a container argument, or leaves out one whose default
        is a container."""
        return has_containers(args) or bool(kwargs) and has_containers(tuple(
            kwargs.values())) or self._container_defaults and len(args) + len(kwargs) < len(
            self.params)

    @functools.cached_property
    def containers(self) -> ContainerCalls:
        """The calls with container arguments (dicts, namedtuples, dataclasses), specialised
        for their structure."""
        return ContainerCalls(self.fn, self.wrt, self.many, self.params, self.mode,
                              _deriver(self.mode, getattr(self._transform, "optimized", True),
                                       self.options.get("check", True),
                                       getattr(self._transform, "checkpoint", None)))

    def _signature(self, args: tuple[Any, ...], framework: str) -> Any:
        """The signature these arguments' code is specialised for (None: the generic code);
        kept by the arguments' types, shapes and dtypes (torch's calls, which pick their
        namespace by device, come here every time)."""
        if not self._specializes or framework not in _SPECIALISED:
            return None
        key: tuple[Any, ...] | None = layout(args)
        try:
            return self._signatures[key]
        except KeyError:
            pass
        except TypeError:        # a dtype that cannot be a key
            key = None
        signature = signature_of(self.params, args,
                                 strict_dtypes=framework in _STRICT_DTYPES,
                                 transpose_method=framework != "tensorflow",
                                 transposes_copy=framework == "jax",
                                 row_vectors=framework in ("jax", "tensorflow"))
        if key is not None and len(self._signatures) < 256:
            self._signatures[key] = signature
        return signature

    def running_variant(self, args: tuple[Any, ...]) -> Variant:
        """The variant these arguments run: the one specialised for their shapes where that
        applies (see :meth:`source_for`), else :meth:`variant_for`'s; free values bound to this
        function's own. What ``saved_for`` measures, so that it counts what a call saves."""
        framework = common_framework(args)
        signature = self._signature(args, framework)
        if signature is None:
            return self.variant_for(args)
        variant = self._variant(self._scalars(args), dialect_of(framework), signature)
        return dataclasses.replace(variant, free=bind_free(variant.free, self.fn))

    def variant_for(self, args: tuple[Any, ...]) -> Variant:
        """The transform's variant these inputs run, its free values bound to this function's
        own."""
        framework = common_framework(args)
        variant = self._variant(self._scalars(args), dialect_of(framework))
        return dataclasses.replace(variant, free=bind_free(variant.free, self.fn))

    def _variant(self, scalars: frozenset[str], dialect: str | None = None,
                 signature: Any = None) -> Variant:
        """A reverse transform is shared and keeps no function: it makes a variant from ours;
        ``dialect``: the inputs' (see :class:`gradlab.transforms.Transform`); ``signature``:
        their shapes', for a specialised variant."""
        if signature is None:
            return self._transform.variant(scalars, self.fn, dialect)  # type: ignore[no-any-return]
        return self._transform.variant(scalars, self.fn, dialect,  # type: ignore[no-any-return]
                                       signature)

    def _with_shaped_seed(self, impl: Callable[..., Any], fw: str, args: tuple[Any, ...],
                          kwargs: dict[str, Any]) -> tuple[Any, Any] | None:
        """The call again with the seed of :meth:`_shaped_seed`; None without one."""
        seed = self._shaped_seed(fw, args, kwargs)
        if seed is None:
            return None
        try:
            return impl(*args, **{**kwargs, str(self.seed_name): seed})  # type: ignore[no-any-return]
        except GradlabError:
            raise
        except Exception as e:      # the same failure again: said as the first would have been
            explain_framework_error(self, e)
            raise

    def _shaped_seed(self, fw: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """Ones shaped and typed like the output, where the output has one element: the seed
        1.0 is right in value, but a rule such as matmul's needs its shape (a 1x1 ``a @ b``),
        and TensorFlow its dtype (a float32 output of a float32 input beside float64 ones,
        where the default seed took the first input's). None where that cannot be the
        failure's cause. Asked only on the failing path: a call that works costs nothing
        more."""
        value = _output_of_original(self, args, kwargs)
        if value is None or not _scalar_output(value):
            return None
        ns = get_backend(fw).namespace()
        if fw != PYTHON and hasattr(value, "dtype") and common_framework((value,)) == fw:
            return ns.ones_like(value)
        shape = tuple(getattr(value, "shape", ()))
        if not shape:
            return None
        one = self._typed_one(tuple(args), fw)
        return ns.reshape(ns.ones_like(one) if one is not None else ns.array(1.0), shape)

    def _typed_one(self, args: tuple[Any, ...], fw: str) -> Any:
        """1 in the dtype and on the device of the input differentiated (else of the first
        floating-point input; cached), where the backend needs a typed seed
        (:attr:`Backend.typed_seed`); None elsewhere. The input differentiated first: on
        TensorFlow, which mixes no float dtypes, the output has its dtype, whatever the other
        inputs' are (``math.acos(w)`` of a float32 ``w`` beside a float64 ``x``)."""
        framework = get_backend(fw)
        if not framework.typed_seed:
            return None
        first = [args[self.wrt_index]] if not self.many and self.wrt_index < len(args) else []
        ns = framework.namespace()
        sample = next((a for a in first + list(args) if hasattr(a, "dtype") and hasattr(
            a, "shape") and ns.dtype(a).is_floating), None)
        if sample is None:
            return None
        dtype = ns.dtype(sample)
        key = (fw, str(getattr(sample, "device", "")), dtype.name)
        seed = self._seeds.get(key)
        if seed is None:
            seed = framework.one(sample)
            if not framework.is_traced(sample):   # inside jax.jit or tf.function: keep none
                self._seeds[key] = seed
        return seed

    def _scalars(self, args: tuple[Any, ...]) -> frozenset[str]:
        """The parameters given Python numbers: their variant knows they have shape ``()``
        (whatever framework the other arguments come from), so it writes no ``unbroadcast``
        or ``broadcast_like`` that cannot change them. With them, the parameters read at an
        integer index (``u[t]``) that are given 1-d arrays, marked ``u:ndim=1``: their
        variant knows ``u[t]`` is a scalar. And the parameters given lists or tuples, marked
        ``ws:list``: their variant reads them as lists (see :data:`.codegen.shapes.LIST_MARK`),
        where an argument could be an array as well."""
        numbers = frozenset(p for p, a in zip(self.params, args)
                            if type(a) is float or type(a) is int) | frozenset(
            p + LIST_MARK for p, a in zip(self.params, args)
            if type(a) is list or type(a) is tuple)
        indexed = getattr(self._transform, "indexed", ())
        if not indexed:
            return numbers
        return numbers | frozenset(p + VECTOR_MARK for p, a in zip(self.params, args)
                                   if p in indexed and getattr(a, "ndim", None) == 1)

    def _select(self, args: tuple[Any, ...]) -> tuple[Callable[..., Any], Any]:
        types = types_of(args)
        # where a variant depends on the inputs' ranks (see _scalars), the types do not say
        # which variant runs: the types and the ranks do (a dict of its own: the fast paths
        # that look up types alone must not find it)
        ranked = bool(getattr(self._transform, "indexed", ()))
        cache = self._by_ranks if ranked else self._by_types
        key: Any = (types, tuple([getattr(a, "ndim", None) for a in args])) if ranked else types
        hit = cache.get(key)
        if hit is not None:          # seen these argument types before (not where the device
            if hit[2] is None:       # picks the namespace: the types do not say the device)
                return hit[0], hit[1]
            special = hit[2].get(shape_key(args))
            if special is not None:  # and these shapes
                return special, hit[1]
        fw = common_framework(args)
        framework = get_backend(fw)
        device = framework.call_device(args) if framework.binds_device else None
        scalars = self._scalars(args)
        functional = framework.updates_functionally(args)
        impl = self._impls.get((fw, device, scalars, functional)) or self.implementation(
            fw, device, scalars, functional=functional)
        generic, table = impl, None
        signature = self._signature(args, fw)
        if signature is not None:
            impl = self.implementation(fw, device, scalars, signature, functional)
            if impl is not generic and len(self._generic_of) < 64:
                self._generic_of[impl] = generic
            if impl is generic:      # these shapes gain nothing: later calls skip the lookup
                try:
                    self._signatures[layout(args)] = None
                except TypeError:    # a dtype that cannot be a key
                    pass
            table = hit[2] if hit is not None else ({} if impl is not generic else None)
            if table is not None and len(table) < 64:
                table[shape_key(args)] = impl
        if hit is None and not framework.binds_device and len(cache) < 64:
            cache[key] = (generic, fw, table)
            if not ranked and not framework.typed_seed and not self.many and (
                    self.wrt_index < len(args)) and self.mode == "grad" and not (
                    self.options.get("preserve_result")) and (
                    table is None or all(t is ndarray for t in types)):
                self._fast[types] = (generic, fw, table)
        return impl, fw

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class GradientFunction(GeneratedFunction):
    """What ``gradlab.grad`` returns: call it like the original function; ``seed=`` gives the
    output's gradient for a non-scalar output."""

    @functools.cached_property
    def __signature__(self) -> inspect.Signature | None:
        """The original function's parameters: what ``tf.function`` and ``jax.jit`` bind a
        call to. ``seed=`` is left out on purpose: tf.function checks the type of every bound
        value on every call, and a ``seed=None`` cost ~140 µs a call, more than W1's whole
        graph takes to run. Under tf.function, pass a seed through a function of your own:
        ``tf.function(lambda x, s: df(x, seed=s))``."""
        try:
            return inspect.signature(self.fn)
        except (TypeError, ValueError):
            return None

    @property
    def saved(self) -> Any:
        """What the forward pass saves for the backward pass, and why: each saved value, the
        line of yours that computes it and the backward lines that read it (a
        :class:`gradlab.saved.SavedReport`; :meth:`saved_for` adds sizes from a run)."""
        from .saved import saved_values
        return saved_values(self._source, self.name)

    def saved_for(self, *args: Any, **kwargs: Any) -> Any:
        """:attr:`saved` for these inputs, with what one run saves: steps, shape, dtype, bytes
        per step and in all (the gradient runs once, compiled again with a counting hook)."""
        if has_containers(args):
            spec, flat = self.containers.specialised(self.containers.bind(args, kwargs))
            return spec.inner.saved_for(*flat)
        from .saved import measure
        return measure(self, args, kwargs)

    def __call__(self, *args: Any, seed: Any = None, **kwargs: Any) -> Any:
        # one NumPy array is the common case, and the smallest gradients take a few µs in all:
        # its layout is read here, without guard.layout's loop (bench/HISTORY.md)
        if len(args) == 1 and type(args[0]) is ndarray:
            a = args[0]
            key: tuple[Any, ...] = ((ndarray, a.shape, a.dtype),)
        else:
            key = layout(args)
        plain = self._plain.get(key)
        run = None if plain is None or seed is not None or kwargs else plain[0] if (
            plain[2] is None) else plain[2].get(tuple([a.shape for a in args]))
        if run is not None:      # (a table: code specialised for these shapes, if seen)
            twin = self._leaner.get(run) or self._lean_of(run)
            if twin is not run:
                try:
                    value, grads = twin(*args)
                except Exception:    # the full code runs again, and says what went wrong
                    twin = run
            if twin is run:
                value, grads = self._run_plain(run, plain, args, kwargs)
            if getattr(value, "shape", ()):
                require_scalar_value(self, value)
            x = args[self.wrt_index]
            dtype = getattr(x, "dtype", None)
            if type(grads) is type(x) and getattr(grads, "dtype", None) is dtype and (
                    dtype is _FLOAT64 or floating(x)):
                return grads
            return conform_gradients(grads, args, self, plain[1])  # type: ignore[index]
        return self._call_checked(key, args, seed, kwargs)

    def _run_plain(self, run: Callable[..., Any], plain: Any, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> tuple[Any, Any]:
        """The fast path's call of the full code, with its errors explained."""
        try:
            return run(*args)  # type: ignore[no-any-return]
        except ZeroDivisionError as e:
            return self._divided_by_zero(e, args, kwargs)
        except GradlabError as e:   # a refusal of the tensor layer: noted at its line
            explain_framework_error(self, e)
            raise
        except Exception as e:   # a non-scalar output's seed 1.0 cannot take its shape
            generic = self._generic_of.get(run)
            if generic is not None:
                return self._run_plain(generic, plain, args, kwargs)
            retried = self._with_shaped_seed(run, plain[1], args, kwargs)
            if retried is None:
                _require_scalar_output(self, args, e)
                explain_framework_error(self, e)
                raise
            return retried

    def _call_checked(self, key: tuple[Any, ...], args: tuple[Any, ...], seed: Any,
                      kwargs: dict[str, Any]) -> Any:
        """A call off the fast path: the first for this layout goes through the guard."""
        types = types_of(args)
        hit = self._by_types.get(types)
        if hit is None:
            if self._takes_containers(args, kwargs):
                return call_gradient(self.containers, args, kwargs, seed,
                                     bool(self.options.get("preserve_result")))
            impl, fw = self._select(args)
        elif hit[2] is not None:       # code specialised for the arguments' shapes
            impl, fw = self._select(args)
        else:
            impl, fw = hit[0], hit[1]
        if key not in self._checked:
            return self._first_call(types, key, impl, fw, args, seed, kwargs)
        self._take_fast_path(types, key)      # (checked by a function of the same transform)
        return self._finish(*self._compute(impl, fw, args, seed, kwargs, lean=True), args, fw)

    def _take_fast_path(self, types: tuple[type, ...], key: tuple[Any, ...]) -> None:
        """Later calls of this checked layout take the fast path, where their types allow."""
        fast = self._fast.get(types)
        if fast is not None and self._outputs is None and len(self._plain) < 64:
            self._plain[key] = fast

    def _compute(self, impl: Callable[..., Any], fw: str, args: tuple[Any, ...], seed: Any,
                 kwargs: dict[str, Any], lean: bool = False) -> tuple[Any, Any]:
        """The generated function's ``(value, gradients)``, with the default seed made in the
        inputs' dtype and device where the framework needs one, and the output checked to
        be a scalar (or to have the shape of a given seed). ``lean``: a call whose value
        is not needed (a checked ``grad`` call): its lean twin may run, giving no value."""
        automatic = seed is None
        if automatic and self._outputs is not None:
            raise self._outputs.error()
        if automatic:
            seed = self._typed_one(args, fw)
            twin = self._lean_of(impl) if lean else impl
            if twin is not impl:
                try:
                    if seed is None:
                        return None, twin(*args, **kwargs)[1]
                    return None, twin(*args, **{**kwargs, str(self.seed_name): seed})[1]
                except Exception:
                    pass        # the full code runs again, and says what went wrong
        try:
            if seed is None:
                value, grads = impl(*args, **kwargs)
            else:
                value, grads = impl(*args, **{**kwargs, str(self.seed_name): seed})
        except ZeroDivisionError as e:
            value, grads = self._divided_by_zero(e, args, kwargs)
        except GradlabError as e:       # a refusal of the tensor layer: noted at its line
            explain_framework_error(self, e)
            raise
        except Exception as e:
            generic = self._generic_of.get(impl)
            if generic is not None:     # the code specialised for these shapes failed where
                return self._compute(   # the generic code may not (torch's @ mixes no dtypes)
                    generic, fw, args, None if automatic else seed, kwargs)
            retried = self._with_shaped_seed(impl, fw, args, kwargs) if automatic else None
            if retried is None:
                if automatic:   # a non-scalar output's seed 1.0 cannot take its shape
                    _require_scalar_output(self, args, e, kwargs=kwargs)
                explain_call_error(self, e, args, seed if not automatic else None, kwargs)
                explain_framework_error(self, e)
                raise
            value, grads = retried
        if automatic:
            if len(getattr(value, "shape", ())):
                require_scalar_value(self, value)
        elif getattr(seed, "shape", ()) != getattr(value, "shape", ()):
            require_seed_shape(self, seed, shape_of(value))
        return value, grads

    def _finish(self, value: Any, grads: Any, args: tuple[Any, ...], fw: str) -> Any:
        """What the call returns: the gradients in their inputs' types, and the value when
        asked for."""
        if self.edited_from is not None:
            require_gradient_per_input(self, grads, args)
        if self.many and len(self.wrt) == 1:
            grads = (grads,)
        x = args[self.wrt_index] if not self.many and self.wrt_index < len(args) else None
        if x is None or type(grads) is not type(x) or getattr(grads, "dtype", None) != getattr(
                x, "dtype", None) or not floating(x) or type(x) in (list, tuple):
            grads = conform_gradients(grads, args, self, fw)
        if self.mode == "value_and_grad":
            return value, grads
        if self.options.get("preserve_result"):
            return grads, value
        return grads

    def _first_call(self, types: tuple[type, ...], key: tuple[Any, ...],
                    impl: Callable[..., Any], fw: str, args: tuple[Any, ...], seed: Any,
                    kwargs: dict[str, Any]) -> Any:
        """The first call for this layout of arguments (``key``: their types, shapes and
        dtypes): what needs the values is checked once — inputs that have no gradient, the
        seed's shape, and (the semantic guard) that the generated forward pass computes what
        the function computes. Later calls of this layout take the fast path; a call that
        fails here leaves none behind."""
        try:
            refuse_without_gradient(self, args)
            if seed is None and self._outputs is not None:
                raise self._outputs.error()
            check = self.options.get("check", True) and self.value_name is not None
            tracing = guard.is_tracing(args) or guard.is_tracing(tuple(kwargs.values()))
            original = guard.run_original(self, args, kwargs) if check and not tracing \
                else None
            if original is not None and original.ran:
                if seed is None:
                    guard.refuse_several_outputs(self, original)
                else:
                    require_seed_shape(self, seed, shape_of(original.value))
            value, grads = self._compute(impl, fw, args, seed, kwargs)
            if original is not None:
                note = guard.verify(self, original, value, args, kwargs)
                if note:
                    guard.note_unchecked(self.unchecked, key, note)
            elif not tracing:
                guard.note_unchecked(self.unchecked, key, "not checked: an edited gradient" if (
                    self.edited_from is not None) else "not checked: check=False")
        except BaseException:
            self._by_types.pop(types, None)     # the next call comes here again
            raise
        if not tracing:
            guard.remember(self._checked, key)
            self._take_fast_path(types, key)    # (not with several outputs: see above)
        return self._finish(value, grads, args, fw)

    def _divided_by_zero(self, error: ZeroDivisionError, args: tuple[Any, ...],
                         kwargs: dict[str, Any]) -> tuple[Any, Any]:
        """Python numbers divided by zero inside the generated code (NumPy arrays give inf
        there). The gradient with respect to an empty array is that empty array's zeros,
        exactly, whatever the function computes; anything else is refused at its line."""
        x = args[self.wrt_index] if not self.many and self.wrt_index < len(args) else None
        if x is not None and getattr(x, "shape", None) is not None and 0 in tuple(x.shape):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = self.fn(*args, **kwargs)
            fw = common_framework((x,))
            return value, backend(fw if fw != PYTHON else "numpy").zeros_like(x)
        numbers = _as_numpy_numbers(args)
        if numbers is not None:   # NumPy's arithmetic: inf or nan where Python's raises
            impl, _ = self._select(numbers)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return impl(*numbers, **kwargs)  # type: ignore[no-any-return]
        where = generated_line(self, error)
        raise GradlabError(
            f"{self.name} divided a Python number by zero{where}. NumPy would give inf or nan "
            f"there (np.mean of an empty array gives nan); gradlab's code cannot: check the "
            f"sizes of the arrays this line reduces") from error


def _python_number(v: Any) -> Any:
    return float(v) if isinstance(v, np.generic) else v


def _as_numpy_numbers(args: Sequence[Any]) -> tuple[Any, ...] | None:
    """The arguments with their Python numbers as NumPy's (whose division by zero gives inf,
    as the user's NumPy code would), or None when none is a Python number."""
    if not any(type(a) is float or type(a) is int for a in args):
        return None
    return tuple(np.float64(a) if type(a) is float or type(a) is int else a for a in args)


def refuse_complex_gradient(df: GeneratedFunction, g: Any, x: Any) -> None:
    """A complex gradient for a real input: the gradient went through a complex value that
    depends on the input (``np.abs(z * x)``), where gradlab's rules (abs's sign, for one) are
    not those of complex arguments. Refused, never cast to its real part."""
    if "complex" in str(getattr(g, "dtype", "")) and "complex" not in str(x.dtype):
        raise GradlabError(
            f"the gradient of {getattr(df.fn, '__qualname__', 'the function')} goes through a "
            f"complex value computed from a real input: gradlab differentiates complex values "
            f"only as constants (z.real, np.abs(z) of a complex argument are fine). Split the "
            f"complex value into its real and imaginary parts, as real arrays")


#: the common dtype, told by identity before :func:`floating` (W1's gradient takes ~6 µs)
_FLOAT64 = np.dtype(np.float64)


def floating(x: Any) -> bool:
    """Whether ``x``'s dtype can hold a gradient: an int or bool input's zeros (an input the
    output does not read) would come back in its own dtype, checked for these types by another
    function of the same code, and so are refused here (see refuse_without_gradient)."""
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    if kind is not None:
        return kind in "fc"
    return not (dtype_name(x) or "float").startswith(("int", "uint", "bool"))


def conform_gradients(grads: Any, args: tuple[Any, ...], df: GeneratedFunction, fw: str) -> Any:
    """Gradients keep their input's type and dtype (an untyped seed can leave a Python float or
    a wider dtype where the chain of operations had nothing to type it)."""
    if not df.many:   # the common case, checked without the general machinery below
        x = args[df.wrt_index] if df.wrt_index < len(args) else None
        if type(grads) is type(x) and getattr(grads, "dtype", None) == getattr(
                x, "dtype", None) and floating(x) and type(x) not in (list, tuple):
            return grads

    def fix(g: Any, x: Any) -> Any:
        if type(x) in (list, tuple) and isinstance(g, (list, tuple)):
            if len(g) != len(x):   # (a list joined to itself in a function read as arithmetic)
                raise GradlabError(
                    f"{df.name}: the gradient of a list of {len(x)} items came back with "
                    f"{len(g)}: the function joins or repeats the list (xs + ys, xs * 2), which "
                    f"gradlab does not differentiate; build the new list item by item")
            # a list of (W, b) tuples: a list of tuples, as the input was
            return type(x)(fix(gi, xi) for gi, xi in zip(g, x))
        if type(g) is type(x) and getattr(g, "dtype", None) == getattr(x, "dtype", None) and (
                floating(x)):
            return g
        if isinstance(g, (dict, list)) and callable(x):   # a model's, one per parameter
            return g
        if isinstance(x, (float, int)) and not isinstance(x, bool) and (
                fw == PYTHON or getattr(g, "shape", ()) == ()):
            # a Python number's gradient is a Python float, whatever framework the other
            # inputs brought (a Python int is promoted)
            return float(g)
        if not hasattr(x, "dtype"):
            return g
        refuse_without_gradient(df, args)     # (a gradient would be cut to an integer dtype)
        refuse_complex_gradient(df, g, x)
        ops = backend(fw if fw != PYTHON else "numpy")
        return ops.zeros_like(x) + ops.astype(g, ops.dtype(x)) if hasattr(g, "dtype") else \
            ops.full_like(x, g)
    index = {n: i for i, n in enumerate(df.params)}
    if df.many:
        return _unshared(tuple(fix(g, args[index[w]]) if index[w] < len(args) else g
                               for g, w in zip(grads, df.wrt)))
    i = index[df.wrt[0]]
    fixed = fix(grads, args[i]) if i < len(args) else grads
    return _unshared(fixed)


def _unshared(grads: Any, seen: set[int] | None = None) -> Any:
    """Gradients that are one array in the generated code (``d(a + b)`` flows to ``a`` and
    ``b`` alike) come back as separate arrays where the framework's arrays can be changed in
    place (NumPy, torch), so that ``da *= 0.5`` leaves ``db`` alone."""
    seen = set() if seen is None else seen
    if type(grads) in (list, tuple) or isinstance(grads, GradList):   # (as plain lists)
        return (tuple if type(grads) is tuple else list)(_unshared(g, seen) for g in grads)
    in_torch = type(grads).__module__.startswith("torch")
    if in_torch or type(grads).__module__ == "numpy" and hasattr(grads, "shape"):
        if id(grads) in seen:
            return grads.clone() if in_torch else grads.copy()
        seen.add(id(grads))
    return grads


# --- transforms --------------------------------------------------------------------------------
#: Every transform made, bounded and holding no user values (see cache.py). jvp and hvp keep
#: their closed-over values in their transforms, and are keyed by those values' identity.
_cache = TransformCache()


def _wrt_names(fn: Any, wrt: Wrt) -> tuple[tuple[str, ...], bool, list[str]]:
    if inspect.isclass(fn):
        raise GradlabError(f"{fn.__qualname__} is a class: gradlab differentiates functions. "
                           f"Differentiate a function that calls it (def loss(x): return "
                           f"{fn.__qualname__}(...)(x)), or a method, as a function of its "
                           f"arguments")
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        raise GradlabError(f"cannot read the parameters of {fn!r}") from None
    many = isinstance(wrt, (tuple, list))
    items: list[Any] = list(wrt) if isinstance(wrt, (tuple, list)) else [wrt]
    if many and not items:
        raise GradlabError("wrt=() names no parameter")
    names = []
    for w in items:
        if isinstance(w, bool) or not isinstance(w, (int, str)):
            raise GradlabError(f"wrt must be a parameter index or name, got {w!r}")
        if isinstance(w, int):
            if not -len(params) <= w < len(params):
                raise GradlabError(f"wrt={w} but {fn.__name__} has {len(params)} parameters "
                                   f"({', '.join(params)})")
            names.append(params[w])
        else:
            if w not in params:
                raise GradlabError(f"wrt={w!r} is not a parameter of {fn.__name__} "
                                   f"({', '.join(params)})")
            names.append(w)
    return tuple(names), many, params


def _second_derivative(df: GradientFunction, wrt: Wrt, optimized: bool) -> Callable[..., Any]:
    """``grad(grad(f))`` for a scalar function of a scalar: the Hessian-vector product with the
    vector 1 (forward mode over the generated gradient code)."""
    if df.many or (wrt not in (0, df.wrt[0])):
        raise GradlabError("grad(grad(f)) is defined for a scalar function of one scalar; "
                           "use gradlab.hvp(f) for Hessian-vector products")
    h = hvp(df.fn, df.wrt[0], optimized=optimized)
    position = df.params.index(df.wrt[0])

    def second(*args: Any) -> Any:
        x = args[position]
        if getattr(x, "shape", ()) not in ((), (1,)):
            raise GradlabError(f"grad(grad(f)) needs a scalar {df.wrt[0]}; use gradlab.hvp(f) "
                               f"for an array argument")
        one = 1.0 if isinstance(x, (int, float)) else backend(
            common_framework((x,)) if common_framework((x,)) != PYTHON else "numpy").ones_like(x)
        return h(*args, one)

    second.source = h.source  # type: ignore[attr-defined]
    second.__name__ = f"d2{df.fn.__name__}"
    return second


def _reverse(fn: Any, wrt: Wrt, optimized: bool, mode: str, options: dict[str, Any],
             checkpoint: Any = None) -> Any:
    checkpoint = _checkpoint_option(checkpoint)
    if isinstance(fn, GradientFunction):
        return _second_derivative(fn, wrt, optimized)
    if isinstance(fn, GeneratedFunction):
        raise GradlabError("grad of a generated function: differentiate the original function, "
                           "or use gradlab.hvp for second derivatives")
    names, many, params = _wrt_names(fn, wrt)
    if not isinstance(fn, types.FunctionType):
        parse_function(fn)    # says why it cannot be differentiated
    parts, anchors = reverse_key(fn)
    key = ("reverse", fn.__code__, names, many, optimized, parts, rules_version(), checkpoint)
    transform = _cache.get(key)
    if transform is None:
        try:
            transform = _transforms().Transform(fn, names, optimized, checkpoint)
        except GradlabError as e:
            return _for_containers_only(fn, names, many, params, mode, e, options, optimized,
                                        checkpoint)
        _cache.put(key, transform, anchors)
    main = transform.main
    df = GradientFunction(fn, transform, main.source, main.filename, main.name,
                          bind_free(main.free, fn), names, many, mode, params, main.seed_name,
                          options, transform.seconds)
    df.value_name = transform.value_name
    return df


def _deriver(mode: str, optimized: bool, check: bool, checkpoint: Any
             ) -> Callable[[Any, tuple[str, ...]], Any]:
    """How a derivative of this mode is made for a function taking container arguments' leaves
    (see :mod:`gradlab.pytrees`): a gradient returns the value with the gradients."""
    if mode == "jvp":
        return lambda flat, wrt: jvp(flat, wrt, optimized=optimized)
    if mode == "hvp":
        return lambda flat, wrt: hvp(flat, wrt, optimized=optimized)
    return lambda flat, wrt: _reverse(flat, wrt, optimized, "value_and_grad",
                                      {"check": check}, checkpoint)


def _for_containers_only(fn: Any, names: tuple[str, ...], many: bool, params: list[str],
                         mode: str, error: GradlabError, options: dict[str, Any],
                         optimized: bool, checkpoint: Any = None) -> Any:
    """Where the code for arrays cannot be generated for a function that reads its parameters
    as containers, a derivative for calls with containers (others get the error); else the
    error."""
    if not may_take_containers(fn):
        raise error
    calls = ContainerCalls(fn, names, many, params, mode,
                           _deriver(mode, optimized, options.get("check", True), checkpoint))
    return ForContainersOnly(calls, error, options)


class JVPFunction(GeneratedFunction):
    """What ``gradlab.jvp`` returns: ``df(*args, tangent) -> (value, directional derivative)``;
    with several ``wrt``, ``tangent`` is a tuple. The function's own arguments may be passed by
    keyword and keep their defaults; the tangent is the last positional argument."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._arity = len(self.params) + 1     # every argument, then the tangent
        self._tangent_names: dict[Any, tuple[str, ...]] = {}

    def _split(self, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[list[Any], tuple[Any, ...]]:
        """The function's arguments (every parameter, defaults filled in) and the tangents."""
        what = "vector v" if self.mode == "hvp" else "tangent"
        given = next((k for k in ("tangent", "v", "tangents") if k in kwargs and k not in
                      self.params), None)
        if given is not None:
            raise GradlabError(f"{self.name}: the {what} goes last, by position, not as "
                               f"{given}=: {self.name}(*args, {what.split()[-1]})")
        if not args:
            raise GradlabError(f"{self.name} takes the arguments of {self.fn.__name__} and then "
                               f"the {what}")
        *primals, tangent = args
        tangents = tuple(tangent) if self.many else (tangent,)
        if len(tangents) != len(self.wrt):
            raise GradlabError(f"{self.name} needs one {what} for each of "
                               f"{', '.join(self.wrt)} (a tuple of {len(self.wrt)}), got "
                               f"{len(tangents)}")
        return self._bind(primals, kwargs), tangents

    def _bind(self, primals: list[Any], kwargs: dict[str, Any]) -> list[Any]:
        params = self.params
        if len(primals) == len(params) and not kwargs:
            return primals
        what = "vector v" if self.mode == "hvp" else "tangent"
        if len(primals) > len(params):
            raise GradlabError(f"{self.name} takes the {len(params)} arguments of "
                               f"{self.fn.__name__} ({', '.join(params)}) and then the {what}; "
                               f"got {len(primals) + 1} positional arguments")
        defaults = _defaults(self.fn)
        kwargs = dict(kwargs)
        full = list(primals)
        for p in params[len(primals):]:
            if p in kwargs:
                full.append(kwargs.pop(p))
            elif p in defaults:
                full.append(defaults[p])
            else:
                raise GradlabError(f"{self.name}: missing the argument {p!r} of "
                                   f"{self.fn.__name__} (its arguments come first, then the "
                                   f"{what})")
        if kwargs:
            extra = next(iter(kwargs))
            raise GradlabError(f"{self.name}: {extra!r} is "
                               + ("given twice" if extra in params else
                                  f"not a parameter of {self.fn.__name__} "
                                  f"({', '.join(params)})"))
        return full

    def _prepare(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                 ) -> tuple[Any, dict[str, Any], Callable[..., Any], str]:
        """The function's arguments, the tangents by the keyword names of the implementation
        chosen for these inputs, the implementation, and its framework."""
        if not kwargs and len(args) == self._arity and not self.many:   # the common call
            types = types_of(args)
            hit = self._by_types.get(types)
            if hit is None and self._by_ranks:   # code that knows u[t] is a number (_scalars)
                hit = self._by_ranks.get((types, tuple([getattr(a, "ndim", None)
                                                         for a in args])))
            if hit is None:      # as grad does: no derivative along an int or bool input
                refuse_without_gradient(self, args[:-1])
            impl, fw = hit[:2] if hit is not None else self._select(args)
            names = self._tangent_names.get(impl) or self._names_of(impl)
            require_tangent_shapes(self, list(args[:-1]), args[-1:])
            return args[:-1], {names[0]: args[-1]}, impl, fw
        full, tangents = self._split(args, kwargs)
        refuse_without_gradient(self, tuple(full))
        require_tangent_shapes(self, full, tangents)
        impl, fw = self._select(tuple(full) + tangents)
        names = self._tangent_names.get(impl) or self._names_of(impl)
        return full, dict(zip(names, tangents)), impl, fw

    def _names_of(self, impl: Callable[..., Any]) -> tuple[str, ...]:
        """The generated function's keyword-only parameters: the tangents."""
        code = impl.__code__
        names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
        self._tangent_names[impl] = names
        return names

    def _with_containers(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether the call passes container arguments (asked only where the argument types
        were not seen before: containers never get that far)."""
        return (bool(kwargs) or types_of(args) not in self._by_types) and \
            self._takes_containers(args[:-1], kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._with_containers(args, kwargs):
            return call_jvp(self.containers, args, kwargs)
        full, tangents, impl, fw = self._prepare(args, kwargs)
        try:
            value, tangent = impl(*full, **tangents)
        except ZeroDivisionError as e:   # Python numbers: NumPy's arithmetic gives inf or nan
            value, tangent = self._with_numpy_numbers(e, full, tangents)
        except GradlabError as e:       # a refusal of the tensor layer: noted at its line
            explain_framework_error(self, e)
            raise
        except Exception as e:
            explain_framework_error(self, e)
            raise
        if self.mode == "jvp":
            self._guard(tuple(full), value)
        return value, _like(tangent, value)

    def _with_numpy_numbers(self, error: ZeroDivisionError, full: Sequence[Any],
                            tangents: dict[str, Any], *seed: Any) -> tuple[Any, Any]:
        """The call again with its Python numbers as NumPy's, where the generated code divided
        one by zero (NumPy's arithmetic gives inf or nan, as the user's NumPy code would);
        ``seed``: hvp's, passed after the arguments."""
        numbers = _as_numpy_numbers(list(full) + list(tangents.values()))
        if numbers is None:
            explain_framework_error(self, error)
            raise error
        impl, _ = self._select(numbers)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            value, derivative = impl(*numbers[:len(full)], *seed, **dict(zip(tangents, numbers[
                len(full):])))
        return _python_number(value), _python_number(derivative)

    def _guard(self, full: tuple[Any, ...], value: Any) -> None:
        """The semantic guard (see guard.py), as ``grad`` has it: the first call for each
        layout of arguments compares the value forward mode computed with the function's own."""
        key = layout(full)
        if key in self._checked or not self.options.get("check", True) or \
                guard.is_tracing(full):
            return
        original = guard.run_original(self, full, {})
        if original is not None:
            guard.verify(self, original, value, full, {})
        guard.remember(self._checked, key)


class HVPFunction(JVPFunction):
    """What ``gradlab.hvp`` returns: ``hvp(*args, v) -> H @ v`` (a tuple for several ``wrt``),
    shaped like the inputs. ``f`` must return a scalar, unless ``seed=`` gives the output's
    weights: then it is the Hessian of the weighted sum ``sum(seed * f(*args))``."""

    #: the gradient whose code forward mode runs through (None: an edited hvp's own code)
    gradient: GradientFunction | None = None

    def implementation(self, framework: str, device: Any = None,
                       scalars: frozenset[str] = frozenset(), signature: Any = None,
                       functional: bool = False) -> Callable[..., Any]:
        """Forward mode over the gradient that ``grad`` runs for this framework's inputs,
        bound to that framework's namespace (``signature``: unused, as for any jvp; its code
        updates nothing in place: ``functional`` changes nothing)."""
        if self.gradient is None:
            return super().implementation(framework, device, scalars, functional=functional)
        key = (framework, device, scalars)
        impl = self._impls.get(key)
        if impl is None:
            transform, reverse_fn = _forward_over(
                self.gradient, framework if framework != PYTHON else "numpy",
                self.options["optimized"], frozenset(s for s in scalars if s.endswith(LIST_MARK)))
            variant = transform.variant(scalars)
            # this gradient's own closed-over values (a closure over another batch shares the
            # transform, made from the first closure's gradient)
            free = bind_free(variant.free, reverse_fn)
            free["gl"] = backend(framework, device)
            impl = variant.factory(**free)[variant.name]
            self._impls[key] = impl
        return impl

    def __call__(self, *args: Any, seed: Any = None, **kwargs: Any) -> Any:
        if self._with_containers(args, kwargs):
            return call_hvp(self.containers, args, kwargs, seed)
        full, tangents, impl, fw = self._prepare(args, kwargs)
        automatic = seed is None
        if automatic:
            seed = self._typed_one(tuple(full), fw)   # None where a number will do
            if seed is None:
                seed = 1.0
        try:
            value, (_, hv) = impl(*full, seed, **tangents)
        except ZeroDivisionError as e:   # Python numbers: NumPy's arithmetic gives inf or nan
            value, (_, hv) = self._with_numpy_numbers(e, full, tangents, seed)
        except Exception as e:
            shaped = self._shaped_seed(fw, full, {}) if automatic else None
            if shaped is None:
                if automatic:
                    _require_scalar_output(self, full, e)
                explain_framework_error(self, e)
                raise
            try:
                value, (_, hv) = impl(*full, shaped, **tangents)
            except GradlabError:
                raise
            except Exception as again:     # as the first failure would have been said
                explain_framework_error(self, again)
                raise
        if automatic and not _scalar_output(value):
            _require_scalar_output(self, full, None, value)
        self._guard(tuple(full), value)
        if self.many:   # the generated code returns one array for wrt=(i,), a tuple for more
            hv = (hv,) if len(self.wrt) == 1 else tuple(hv)
            return _like(hv, tuple(full[self.params.index(w)] for w in self.wrt))
        return _like(hv, full[self.wrt_index])


#: The frameworks a gradient gets code specialised for its shapes on (``@`` and ``.T``, or
#: TensorFlow's ``gl.transpose``, mean the same there); where ``@`` refuses mixed dtypes, only
#: arguments of one dtype get it.
_SPECIALISED = frozenset(("numpy", "torch", "jax", "tensorflow"))
_STRICT_DTYPES = frozenset(("torch", "tensorflow"))
#: ``GRADLAB_SPECIALISE=0`` runs every gradient's generic code (to check it from outside, as
#: the corpus tests check both forms).
_SPECIALISING = os.environ.get("GRADLAB_SPECIALISE", "1") != "0"
#: The helpers of generic code that the code specialised for a call's shapes writes out.
_SHAPE_HELPERS = ("gl.matmul_grad_", "gl.unbroadcast(", "gl.unbroadcast_to(", "gl.broadcast_like(")


def _defaults(fn: Any) -> dict[str, Any]:
    try:
        return {n: p.default for n, p in inspect.signature(fn).parameters.items()
                if p.default is not p.empty}
    except (TypeError, ValueError):
        return {}


def _scalar_output(value: Any) -> bool:
    """A number, or an array with one element (a tuple, list or dict of outputs is not)."""
    if type(value) is float:
        return True
    if isinstance(value, (tuple, list, dict)):
        return False
    shape = getattr(value, "shape", ())
    return not shape or all(d == 1 for d in shape)


def _require_scalar_output(df: GeneratedFunction, args: Sequence[Any],
                           failure: Exception | None, value: Any = None,
                           kwargs: dict[str, Any] | None = None) -> None:
    """Without a seed, the function differentiated must return a scalar. ``failure``: the
    generated code raised (a non-scalar output's seed ``1.0`` cannot be reshaped or indexed
    like it): the original function, run on the same arguments, tells whether its output is
    the cause (only on this failing path: a call that works costs nothing more)."""
    if failure is not None:
        value = _output_of_original(df, args, kwargs or {})
        if value is None or _scalar_output(value):
            return            # the original fails too (its error is the one to see), or
                              # its output is a scalar: the failure is not about the seed
    if isinstance(value, (tuple, list, dict)):
        what = f"a {type(value).__name__} of {len(value)} outputs"
    else:
        what = f"a value of shape {tuple(getattr(value, 'shape', ()))}"
    name = getattr(df.fn, "__qualname__", "the function")
    example = "(1.0, 1.0)" if isinstance(value, (tuple, list)) else "ones_like(output)"
    if df.mode == "hvp":
        message = (f"hvp needs a scalar function, and {name} returns {what}: pass seed=... "
                   f"(weights shaped like the output, e.g. seed={example}) for the Hessian of "
                   f"the weighted sum of its outputs")
    elif isinstance(value, (tuple, list, dict)):
        message = several_outputs(name, type(value).__name__, len(value))
    else:
        message = (f"{name} returns {what}, not a scalar: pass its gradient as seed=... "
                   f"(shaped like the output), e.g. {df.name}(..., seed={example})")
    raise GradlabError(message) from failure


def _output_of_original(df: GeneratedFunction, args: Sequence[Any],
                        kwargs: dict[str, Any]) -> Any:
    """What the user's function returns on these arguments, or on NumPy copies of them when
    it cannot run on the framework's own (NumPy code given torch tensors, which gradlab runs
    as code written once); None when it fails on both."""
    from .tensor.convert import to_float64_numpy

    def run(values: Sequence[Any]) -> Any:
        with warnings.catch_warnings():           # only a look: its warnings are not news
            warnings.simplefilter("ignore")
            return df.fn(*values, **kwargs)
    try:
        return run(args)
    except Exception:
        pass
    if guard.is_tracing(tuple(args)):             # (jax.jit: no values to copy to NumPy)
        return None
    try:
        return run([to_float64_numpy(a) for a in args])
    except Exception:
        return None


_NUMPY_SCALARS = frozenset((float64, float32))


def _like(t: Any, x: Any) -> Any:
    """A derivative given the structure, type, dtype and shape of ``x`` (a zero derivative can
    come back as the number ``0.0``; a tuple's derivative as a list or an array), in ``x``'s
    framework (a value NumPy computed on constants stays NumPy's on any backend)."""
    tx = type(x)
    if type(t) is tx and (tx is float or (tx is ndarray or tx in _NUMPY_SCALARS) and (
            t.dtype == x.dtype and t.shape == x.shape)):
        return t          # the common case, decided without the general machinery below
    if isinstance(x, (tuple, list)):
        if isinstance(t, (tuple, list)) or hasattr(t, "shape") and len(t) == len(x):
            return tx(_like(ti, xi) for ti, xi in zip(t, x))
        return tx(_like(t, xi) for xi in x)
    if isinstance(x, dict):
        return {k: _like(t[k] if isinstance(t, dict) else t, v) for k, v in x.items()}
    if type(t) is tx and getattr(t, "dtype", None) == getattr(x, "dtype", None) and (
            getattr(t, "shape", None) == getattr(x, "shape", None)):
        return t
    if tx is float and getattr(t, "shape", ()) == ():
        return float(t)
    if not hasattr(x, "dtype"):
        return t
    if isinstance(x, generic):                 # a NumPy scalar: its own type
        return x.dtype.type(t) if getattr(t, "shape", ()) == () else t
    name = framework_of(x)
    ops = backend(name if name not in (None, PYTHON) else "numpy")
    if not hasattr(t, "dtype") or framework_of(t) != name and getattr(t, "shape", ()) == ():
        return ops.full_like(x, float(t))      # a number, or another framework's scalar
    return ops.zeros_like(x) + ops.astype(t, ops.dtype(x))


def jvp(f: Callable[..., Any], wrt: Wrt = 0, *, optimized: bool = True,
        check: bool = True) -> JVPFunction:
    """Forward mode: ``jvp(f)(*args, tangent) -> (f(*args), directional derivative)``,
    generated source-to-source like :func:`grad` (``.source`` shows it). ``check``: the
    semantic guard, as :func:`grad` has it (the first call for each kind of arguments also
    runs ``f`` and compares the values)."""
    if isinstance(f, GeneratedFunction):
        raise GradlabError("jvp of a generated function: use gradlab.hvp for second derivatives")
    names, many, params = _wrt_names(f, wrt)
    if not isinstance(f, types.FunctionType):
        parse_function(f)    # says why it cannot be differentiated
    key = ("forward", f.__code__, names, optimized, fingerprint(f), rules_version())
    transform = _cache.get(key)
    if transform is None:
        try:
            transform = _transforms().ForwardTransform(
                f, names, optimized, f"{f.__name__}_jvp" + "".join(f"_{n}" for n in names))
        except GradlabError as e:
            return _for_containers_only(f, names, many, params, "jvp", e, {}, optimized)
        _cache[key] = transform
    main = transform.main
    return JVPFunction(f, transform, main.source, main.filename, main.name, main.free, names,
                       many, "jvp", params, None, {"check": check}, transform.seconds)


def hvp(f: Callable[..., Any], wrt: Wrt = 0, *, optimized: bool = True,
        check: bool = True) -> HVPFunction:
    """Hessian-vector product: ``hvp(f)(*args, v) -> H @ v``, by forward mode over the
    generated gradient code (so it also works when ``f`` calls other user functions).
    ``f`` returns a scalar; for another output, ``hvp(f)(*args, v, seed=w)`` is the Hessian of
    ``sum(w * f(*args))`` applied to ``v``. ``check``: the semantic guard, as :func:`grad` has
    it (the code computes ``f``'s value on the way, compared once per layout of arguments)."""
    if isinstance(f, GeneratedFunction):
        raise GradlabError("hvp of a generated function: pass the original function")
    g = grad(f, wrt, optimized=optimized)
    if isinstance(g, ForContainersOnly):
        return _for_containers_only(f, g.wrt, g.many, g.params, "hvp", g.error, {},
                                    optimized)
    # shown as the gradient is: in torch's reading where NumPy's refused the code (x.std(
    # unbiased=False) in a function that names no framework; see transforms.in_either_dialect)
    shown = "torch" if getattr(g._transform, "dialect", "numpy") == "torch" else "numpy"
    transform, reverse_fn = _forward_over(g, shown, optimized)
    main = transform.main
    out = HVPFunction(f, transform, main.source, main.filename, main.name,
                      bind_free(main.free, reverse_fn), g.wrt,
                      g.many, "hvp", list(g.params), g.seed_name,
                      {"optimized": optimized, "check": check}, transform.seconds)
    out.value_name = g.value_name
    out.gradient = g
    return out


def _forward_over(g: GradientFunction, framework: str, optimized: bool,
                  lists: frozenset[str] = frozenset()
                  ) -> tuple[ForwardTransform, Callable[..., Any]]:
    """Forward mode over the gradient code that runs for ``framework``'s inputs: one transform
    per distinct gradient text (inputs whose framework reads the user's code differently get
    a gradient, and so a Hessian, of their own, as do parameters given lists: ``lists``, their
    marks), and that gradient code, whose closed-over values the transform's code takes."""
    reverse_fn = g.implementation(framework, scalars=lists)
    opaque = re.search(r"= gl\.vjp_of\((.*)\)$", g.source, re.MULTILINE)
    if opaque is not None:
        raise GradlabError(
            f"hvp of {g.fn.__name__}: it calls {opaque.group(1).split(',')[0]}, which gradlab "
            f"cannot read and differentiates with the framework's own autodiff, once; a "
            f"second derivative through it is not supported. Use the framework's own hvp "
            f"(torch.func.jvp of torch.func.grad, jax.jvp of jax.grad)")
    key = ("hvp", reverse_fn.__code__.co_filename, g.wrt, optimized, rules_version())
    transform = _cache.get(key)
    if transform is None:
        transform = _transforms().ForwardTransform(reverse_fn, g.wrt, optimized,
                                                   f"{reverse_fn.__name__}_jvp",
                                                   value_name=g.value_name)
        _cache[key] = transform
    return transform, reverse_fn


def _checkpoint_option(checkpoint: Any) -> Any:
    """``checkpoint=`` as the generator takes it: None (off), True (the schedule's default
    number of snapshots) or a number of snapshots."""
    if checkpoint is None or checkpoint is False:
        return None
    if checkpoint is True:
        return True
    if isinstance(checkpoint, int) and checkpoint >= 0:
        return int(checkpoint)
    raise GradlabError(f"checkpoint= takes True (snapshots chosen for the loop's length) or a "
                       f"number of snapshots (an int >= 0), not {checkpoint!r}")


def grad(f: Callable[..., Any], wrt: Wrt = 0, *, optimized: bool = True,
         preserve_result: bool = False, check: bool = True, checkpoint: Any = None
         ) -> GradientFunction:
    """The gradient of ``f`` as a new, readable Python function (reverse mode).

    ``wrt`` is a parameter index or name, or a tuple of them (then the gradients come as a
    tuple, like ``jax.grad``'s argnums). ``f`` must return a scalar unless the call passes
    ``seed=`` (the output's gradient, by keyword). With ``preserve_result=True`` the call
    returns ``(gradients, value)``. ``.source`` shows the generated code.

    With ``check=True`` (the default) the first call for each new kind of arguments (their
    types, shapes and dtypes) also runs ``f`` itself and compares its value with the forward value the generated
    code computed; a difference raises :class:`gradlab.guard.ForwardMismatchError` naming your
    first line whose value differs (see :mod:`gradlab.guard`). ``check=False`` saves that one
    extra call of ``f``.

    ``checkpoint=True`` (or a number of snapshots) reverses each ``for`` loop at the top level
    of ``f``'s body with a binomial checkpointing schedule instead of a tape: the forward pass
    keeps snapshots of the state the loop carries, the backward pass recomputes segments from
    them (less memory, more time; see :mod:`gradlab.codegen.checkpoint`). The gradient is the
    same. A loop that cannot be checkpointed (a ``while``, a ``break``) is refused at its line.
    """
    return _reverse(f, wrt, optimized, "grad", {"preserve_result": preserve_result,
                                                "check": check}, checkpoint)


def value_and_grad(f: Callable[..., Any], wrt: Wrt = 0, *, optimized: bool = True,
                   check: bool = True, checkpoint: Any = None) -> GradientFunction:
    """Like :func:`grad`, but the call returns ``(value, gradients)``."""
    return _reverse(f, wrt, optimized, "value_and_grad", {"check": check}, checkpoint)


def stop_gradient(x: Any) -> Any:
    """Returns ``x``; in differentiated code, no gradient flows through it."""
    return x


class insert_grad_of:
    """``with gradlab.insert_grad_of(x) as dx:`` — the block runs in the *backward* pass, where
    ``x``'s gradient is complete, with ``dx`` bound to it (clip it, log it, zero it...).

    When the function runs as plain Python the block is skipped: entering the block arms a
    one-shot line trace on the caller's frame that leaves it before its first statement.
    """

    def __init__(self, x: Any) -> None:
        self.x = x
        self._previous: Any = None

    def __enter__(self) -> Any:
        frame = sys._getframe(1)
        self._previous = sys.gettrace()
        if self._previous is None:
            sys.settrace(_no_trace)
        frame.f_trace = _skip_block
        return None

    def __exit__(self, kind: Any, value: Any, tb: Any) -> bool:
        if self._previous is None:
            sys.settrace(None)
        return kind is _SkipBlock


class _SkipBlock(Exception):
    pass


def _no_trace(frame: Any, event: str, arg: Any) -> None:
    return None


def _skip_block(frame: Any, event: str, arg: Any) -> Any:
    if event == "line":
        frame.f_trace = None
        raise _SkipBlock
    return _skip_block
