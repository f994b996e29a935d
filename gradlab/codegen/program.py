"""One transform request, end to end: the user's function and every function it calls,
normalized once each, turned into the generated functions the request needs (the gradient, a
portable copy of each helper, a vjp or jvp of each helper), emitted as one text and compiled.

This is the pipeline's spine. Every stage is named in :data:`STAGES` and run here, in that
order, by a function or method of this module that calls the module doing the work:

- once per user function (:func:`normalize_function`, giving a :class:`Unit`):
  ``parse`` → ``normalize`` (calls resolved to primitives, one operation per statement,
  early exits made explicit) → ``rename`` → ``invariance``;
- once per derivative (:meth:`Program.derivative`, giving a :class:`~.prepare.Prepared`, then
  the generator): ``check`` (refusals, on the code as written) → ``prepare`` (self-updates
  split, loop invariants hoisted) → ``analyze`` (activity and shapes of the prepared code) →
  ``differentiate`` (:class:`~.reverse.Reverse` or :class:`~.forward.Forward`, giving a
  gast ``FunctionDef``) → ``optimize``;
- once per program: ``emit`` (the text, with the user's lines as comments) → ``compile``.
"""
from __future__ import annotations

import copy
import functools
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ..errors import GradlabError, gradlab_refuses
from . import ir, trees
from .aliasing import result_aliases
from .analyze import analyze, number_params
from .build import REQUIRED, function_def, name
from .check import check, number_conversions
from .comprehensions import lower_comprehensions
from .containers import layouts_of, read_leaves, shown_names
from .dicts import replace_dicts
from .emit import Source, compile_source, to_source
from .forward import Forward, tangent_reads_old
from .invariance import freeze_shifts
from .naming import Names
from .nested import lift_nested_functions
from .normalize import Normalizer, assigned_names
from .inline import inline_temporaries
from .inplace import store_first_writes, update_in_place
from .optimize import optimize
from .parse import ParsedFunction, is_generated, parse_function
from .prepare import NeedsOwnName, Prepared, prepare
from .primal import Emitter, structured
from .rename import Renamer
from .resolve import Resolver
from .reverse import Reverse, keeps_old_and_new
from .rules import custom_rule_for
from .ranks import Signature, infer_shapes
from .recompute import recompute_saved
from .saves import drop_stacks, list_names, save_shapes, shape_only_stacks, unread_stacks
from .shapes import SCALAR, indexed_parameters, shape_classes, vector_facts
from .textbook import Textbook, fill_spreads

GL = "gl"

#: The stages, in the order the data goes through them (see the module's docstring).
STAGES = ("parse", "normalize", "rename", "invariance",       # once per user function
          "check", "prepare", "analyze", "differentiate",     # once per derivative
          "optimize",                                         # once per generated function
          "emit", "compile")                                  # once per program


@dataclass
class Unit:
    """A user function, parsed and normalized (shared by every variant generated from it).
    ``dialect_sensitive``: it calls an array method whose meaning depends on the framework
    (``x.var()``), so its code differs between torch and the others."""

    fn: types.FunctionType
    parsed: ParsedFunction
    ir: ir.Function
    names: Names
    user_names: set[str]
    dialect_sensitive: bool = False


def _all_names(node: gast.AST) -> set[str]:
    return {n.id for n in trees.walk(node) if isinstance(n, gast.Name)}


@functools.lru_cache(maxsize=1)
def _reserved_names() -> dict[str, str]:
    """Names the generated code gives things of its own, with what they are."""
    from .rules.definitions import DEFINITIONS
    reserved = {fn.__name__: f"the name of gradlab's own definition of {path.split('.')[-1]}"
                for path, fn in DEFINITIONS.items()}
    reserved[GL] = "the name of the tensor layer in gradlab's generated code (gl.sum, gl.exp)"
    return reserved


def _refuse_reserved_names(parsed: ParsedFunction, fn: Any) -> None:
    """A user's name equal to one the generated code gives its own things would be shadowed
    there (``gl = np.exp(x)`` made ``gl = gl.exp(x)``): refused, with the name to change.
    gradlab's own code and definitions use those names on purpose."""
    from .rules.definitions import is_definition
    if is_generated(fn) or is_definition(fn):
        return
    reserved = _reserved_names()
    bound = [(n.id, n) for n in trees.walk(parsed.node) if isinstance(n, gast.Name) and (
        isinstance(n.ctx, (gast.Store, gast.Param)))]
    if parsed.node.name in reserved:
        bound.insert(0, (parsed.node.name, parsed.node))
    for ident, node in bound:
        if ident in reserved:
            raise parsed.error(f"{ident!r} is {reserved[ident]}: give your "
                               f"{'function' if node is parsed.node else 'variable'} another "
                               f"name ({ident}_)", node, "reserved name")


def normalize_function(fn: Any, dialect: str = "numpy", lists: frozenset[str] = frozenset(),
                       checked: bool = False) -> Unit:
    """The stages run once per user function. ``dialect``: the framework whose meaning array
    methods have (see codegen/primitives); ``lists``: the parameters a call gives Python lists
    or tuples (see :data:`.shapes.LIST_MARK`); ``checked``: only to refuse what would differ
    for those lists (a helper's, whose code reads them as whatever it is given)."""
    parsed = parse_function(fn)                                   # parse
    _refuse_reserved_names(parsed, fn)
    lift_nested_functions(parsed)                                 # normalize: nested defs
    layouts = layouts_of(fn)
    names = Names(_all_names(parsed.node) | {GL} | {
        leaf for layout in layouts.values() for leaf in layout.leaves()})
    lower_comprehensions(parsed, names)                           # normalize: comprehensions
    if layouts:                                                   # as loops, container
        read_leaves(parsed, layouts)                              # arguments as their leaves,
    replace_dicts(parsed, names)                                  # dicts as entries,
    normalizer = Normalizer(parsed, names, dialect, lists,        # then the rest
                            lists if checked else frozenset())
    function = normalizer.function()
    for callee, given in normalizer.lists_passed:
        _check_list_arguments(callee, given, dialect)
    Renamer(names, function.params).run(function)                 # rename
    freeze_shifts(function)                                       # invariance
    return Unit(fn, parsed, function, names, _all_names(parsed.node),
                normalizer.resolver.dialect_used)


#: The helpers (and their parameters given lists) being checked, against recursion.
_CHECKING: set[tuple[Any, frozenset[str]]] = set()


def _check_list_arguments(fn: Any, lists: frozenset[str], dialect: str) -> None:
    """A helper's code is one for every call, and reads its parameters as whatever they get
    (a list's gradient adds item by item at run time). Where a call gives some of them lists,
    the helper is read once more knowing that, and refused where a line would mean something
    else for a list: ``vs + vs`` joins it, ``np.sum(vs)`` makes an array of it."""
    key = (fn, lists)
    if key in _CHECKING:
        return
    _CHECKING.add(key)
    try:
        normalize_function(fn, dialect, lists, checked=True)
    finally:
        _CHECKING.discard(key)


@dataclass(frozen=True)
class Mode:
    """A differentiation mode, as the stages before its generator see it."""

    name: str                      # 'reverse' | 'forward': what the check refuses
    needs_own_name: NeedsOwnName   # prepare: which ``y = f(..y..)`` to split
    hoists: bool                   # prepare: hoist loop invariants (when optimizing)


#: Reverse mode hoists loop invariants: a value no longer recomputed in a loop is no longer
#: saved on every iteration. Forward mode saves nothing; its loops stay as written.
REVERSE = Mode("reverse", keeps_old_and_new, hoists=True)
FORWARD = Mode("forward", tangent_reads_old, hoists=False)


@dataclass
class Gradient:
    """The gradient function a program made for its main function."""

    name: str          # the generated function's name (``dloss_dW``)
    seed: str          # its seed parameter (``dloss``)
    value_name: str    # the variable holding the function's value when it returns


def written_dialect(fn: Any) -> str | None:
    """The dialect a function's code is written in: torch's when it names a torch module
    (``torch.tanh``), NumPy's when it names NumPy, JAX, SciPy or TensorFlow, and None when it
    names no framework (``x.var()`` alone): then it means what its inputs' framework means.

    NumPy code keeps NumPy's meaning on every backend (the promise of code written once); code
    written for torch keeps torch's."""
    code = getattr(fn, "__code__", None)
    roots = set()
    for n in (code.co_names if code is not None else ()):
        value = fn.__globals__.get(n)
        if isinstance(value, types.ModuleType):
            roots.add(value.__name__.split(".")[0])
    if "torch" in roots:
        return "torch"
    if roots & {"numpy", "jax", "scipy", "tensorflow", "autograd"}:
        return "numpy"
    return None


@dataclass
class Program:
    """The generated functions of one request, in the order they are shown."""

    main: Unit
    optimized: bool = True
    dialect: str = "numpy"
    checkpoint: Any = None     # grad(f, checkpoint=...): the main function's loops checkpointed
    defs: list[gast.FunctionDef] = field(default_factory=list)
    units: dict[Any, Unit] = field(default_factory=dict)
    done: dict[Any, str] = field(default_factory=dict)
    free: dict[str, Any] = field(default_factory=dict)
    top_names: set[str] = field(default_factory=set)
    first_variant: dict[Any, tuple[bool, ...]] = field(default_factory=dict)
    returns_arrays: dict[Any, bool] = field(default_factory=dict)   # (fn, mask) -> answer
    aliases: dict[Any, frozenset[int]] = field(default_factory=dict)   # (fn, mask) -> answer
    aliasing_now: list[Any] = field(default_factory=list)   # the (fn, mask) being worked out
    #: the user's lines making a Python number of a value that carries a gradient
    #: (check.number_conversions)
    conversions: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.units[self.main.fn] = self.main
        self.gl = GL
        self.free[GL] = None
        self._collect_free(self.main)

    # --- units ------------------------------------------------------------------------------
    def unit(self, fn: Any) -> Unit:
        if fn not in self.units:
            unit = normalize_function(fn, self.dialect)
            self.units[fn] = unit
            self._collect_free(unit)
        return self.units[fn]

    @property
    def dialect_sensitive(self) -> bool:
        """Whether some function of the program reads a method whose meaning depends on the
        framework: then each dialect gets code of its own."""
        return any(u.dialect_sensitive for u in self.units.values())

    def _collect_free(self, unit: Unit) -> None:
        """Closed-over values, and globals of helpers defined in another module, become
        parameters of the factory the generated code is compiled in."""
        scope = unit.parsed.scope
        main_globals = self.main.fn.__globals__
        values = {k: v for k, v in scope.closure.items()   # (a definition's refusal is
                  if k != GL and (not isinstance(v, types.FunctionType)  # kept as written)
                                  or v is gradlab_refuses)}
        if unit.fn.__globals__ is not main_globals:
            for n in unit.fn.__code__.co_names:
                if n in unit.fn.__globals__:
                    values[n] = unit.fn.__globals__[n]
        for key, value in values.items():
            if key in self.free and self.free[key] is not value:
                raise GradlabError(f"{unit.fn.__qualname__} and another function use the name "
                                   f"{key!r} for different values; rename one of them")
            if unit.fn.__globals__ is not main_globals and main_globals.get(key, value) is not value:
                raise GradlabError(f"{unit.fn.__qualname__} (module {unit.fn.__module__}) uses "
                                   f"{key!r}, which means something else where "
                                   f"{self.main.fn.__qualname__} is defined; rename one of them")
            self.free[key] = value

    def emitter_for(self, unit: Unit, arrays: set[str] | None = None) -> Emitter:
        """The writer of ``unit``'s primal code, for a variant whose array parameters are
        ``arrays`` (None: all)."""
        activity = self.activity(unit.ir, [], arrays)
        return Emitter(GL, activity, Resolver(unit.parsed.scope, _local_names(unit),
                                              self.dialect), self.portable)

    # --- which values are arrays ----------------------------------------------------------------
    def activity(self, fn: ir.Function, wrt: list[str], arrays: set[str] | None = None) -> Any:
        """:func:`analyze`, knowing what each call of a user function returns."""
        return analyze(fn, wrt, arrays, self.returns_array, self.result_aliases)

    def returns_array(self, fn: Any, mask: tuple[bool, ...]) -> bool:
        """Whether user function ``fn`` returns an array when the arguments marked in ``mask``
        are arrays (``_helper(0.5)`` on Python numbers returns a number)."""
        key = (fn, mask)
        if key not in self.returns_arrays:
            self.returns_arrays[key] = True   # a recursive call, while this is worked out
            unit = self.unit(fn)
            act = self.activity(unit.ir, [], array_params(unit, mask))
            self.returns_arrays[key] = unit.ir.result in act.arrays
        return self.returns_arrays[key]

    def result_aliases(self, fn: Any, mask: tuple[bool, ...]) -> frozenset[int]:
        """Which arguments' memory user function ``fn``'s result may share (``return x[0]``),
        when the arguments marked in ``mask`` are arrays."""
        key = (fn, mask)
        if key in self.aliasing_now and key != self.aliasing_now[-1]:
            return frozenset(i for i, a in enumerate(mask) if a)   # mutual recursion: any
        if key not in self.aliases:
            # A function calling itself is first assumed to share nothing, then what it was
            # found to share, until that no longer grows. It only grows (each answer is kept
            # with the earlier ones), within the function's parameters, so this ends.
            self.aliases[key] = frozenset()
            self.aliasing_now.append(key)
            unit = self.unit(fn)
            try:
                while True:
                    found = self.aliases[key] | result_aliases(
                        unit.ir, self.activity(unit.ir, [], array_params(unit, mask)))
                    if found == self.aliases[key]:
                        break
                    self.aliases[key] = found
            finally:
                self.aliasing_now.pop()
        return self.aliases[key]

    def reserve(self, wanted: str) -> str:
        """A name for a generated function that no user code in this program uses."""
        taken = set().union(*(u.user_names for u in self.units.values())) | set(self.free)
        base, n = wanted, 2
        while wanted in self.top_names or wanted in taken:
            wanted = f"{base}_{n}"
            n += 1
        self.top_names.add(wanted)
        return wanted

    # --- the stages of one derivative -----------------------------------------------------------
    def derivative(self, unit: Unit, mode: Mode, wrt: list[str], arrays: set[str] | None = None,
                   scalars: frozenset[str] = frozenset()) -> Prepared:
        """The stages before the generator, for one derivative of ``unit`` with respect to
        ``wrt``: the function as written is checked, a copy of it prepared for ``mode`` and
        analysed. ``arrays``: the parameters that hold arrays (None: all); ``scalars``: those
        known to hold Python numbers (the variant for numbers)."""
        names = copy.deepcopy(unit.names)
        emitter = self.emitter_for(unit, arrays)
        fn = copy.deepcopy(unit.ir)
        act = self.activity(fn, wrt, arrays)
        check(fn, act, mode=mode.name,                                      # check
              helper=unit is not self.main, generated=mode is FORWARD and is_generated(unit.fn))
        self.conversions.extend(o for o in number_conversions(fn, act)
                                if o not in self.conversions)
        prepare(fn, names, mode.needs_own_name,                             # prepare
                hoisting=self.optimized and mode.hoists)
        activity = self.activity(fn, wrt, arrays)                           # analyze
        numbers, vectors = vector_facts(scalars)
        classes = shape_classes(fn, numbers | number_params(unit.ir.params, arrays), vectors)
        return Prepared(fn, names, emitter, activity, classes)

    def add(self, fn_def: gast.FunctionDef, unit: Unit, keep: set[str],
            shapes: dict[str, Any] | None = None, stacks: Any = ()) -> None:
        """A generated function, optimized (keeping the names in ``keep``; ``shapes``: a
        gradient's shape classes, for its product rewrites). ``stacks``: an adjoint's stacks;
        those whose values its backward pass never reads are dropped, those it reads only for their
        shape save the shape (:mod:`.saves`)."""
        if self.optimized:
            optimize(fn_def, keep, unit.user_names, shapes)                 # optimize
        unread = unread_stacks(fn_def, stacks, keep) if stacks else set()
        if unread:
            drop_stacks(fn_def, unread)
        shaped = shape_only_stacks(fn_def, set(stacks) - unread, keep, GL) if stacks else {}
        if shaped:
            save_shapes(fn_def, shaped, GL)
        # a value as cheap to compute again as to keep is computed again (not under a
        # checkpoint schedule, whose backward pass reruns parts of the forward pass)
        recomputed = recompute_saved(fn_def, set(stacks) - unread - set(shaped), GL) if (
            self.optimized and stacks and shapes is not None and not self.checkpoint) else set()
        if (unread or recomputed) and self.optimized:   # what was computed only to be saved
            optimize(fn_def, keep, unit.user_names)     # goes too
        self.defs.append(fn_def)

    def inline(self, fn_def: gast.FunctionDef, unit: Unit, keep: set[str]) -> None:
        """The last pass over a finished function: its single-use temporaries folded into
        their use (:mod:`.inline`), keeping the names in ``keep``."""
        if self.optimized:
            inline_temporaries(fn_def, unit.user_names, keep, GL)

    def indexed(self) -> set[str]:
        """The main function's parameters that a variant may know to be 1-d arrays (see
        :func:`.shapes.indexed_parameters`)."""
        return indexed_parameters(self.main.ir)

    def gradient(self, wrt: list[str], scalars: frozenset[str] = frozenset(),
                 signature: Signature | None = None, keep_value: bool = True) -> Gradient:
        """The gradient of the main function (shown first), for inputs whose parameters in
        ``scalars`` are Python numbers (and, marked ``u:ndim=1``, 1-d arrays); ``signature``:
        the shapes a call showed, for the variant written as a textbook writes it (see
        :mod:`.textbook`). ``keep_value=False``: the function's value is not kept, so what
        computes only the value goes too (the lean twin of :mod:`gradlab.transforms`)."""
        unit = self.main
        fname = self.reserve("d" + unit.ir.name + "".join(f"_d{n}" for n in shown_names(
            unit.fn, wrt)))
        prepared = self.derivative(unit, REVERSE, wrt, None, scalars)
        textbook = None
        if signature is not None:
            shapes = infer_shapes(prepared.fn, signature)
            for value, shape in shapes.items():     # equal shapes: one class
                prepared.classes[value] = SCALAR if shape == () else f"shape:{shape}"
            textbook = Textbook(shapes, signature, GL)
        builder = Reverse(self, unit, prepared, wrt, 1.0, fname, self.checkpoint)
        builder.textbook = textbook
        if builder.fn.result == unit.ir.name:
            # `return <expr>` keeps its value in a variable named after the function, whose
            # gradient would be d<function>: the very name a notebook gives the gradient
            # function (dloss = grad(loss)). The seed is called `seed` instead, as the keyword
            # a caller passes it by.
            builder.adjoints[builder.fn.result] = builder.names.fresh("seed")
        fn_def = builder.build()                                            # differentiate
        keep = {builder.value_name} if keep_value else set()
        self.add(fn_def, unit, keep, builder.classes, builder.stacks.values())
        if textbook is not None:
            fill_spreads(fn_def, textbook)
        update_in_place(fn_def)
        store_first_writes(fn_def)
        self.inline(fn_def, unit, keep)
        self.defs.insert(0, self.defs.pop())   # the gradient first, helpers after
        return Gradient(fname, builder.seed, builder.value_name)

    def tangent(self, label: str, wrt: list[str], scalars: frozenset[str] = frozenset(),
                keep: set[str] | None = None) -> str:
        """The jvp of the main function (shown first), named after ``label``; ``keep``: names
        the optimizer must keep (the value of gradient code that ``hvp`` differentiates)."""
        unit = self.main
        fname = self.reserve(label)
        fn_def = Forward(self, unit, self.derivative(unit, FORWARD, wrt, None, scalars), wrt,
                         fname).build()                                     # differentiate
        # over gradient code (hvp), the stacks and their tangents' are the gradient's: a
        # tangent whose backward pass reads only the value's shape is not kept either
        self.add(fn_def, unit, keep or set(),
                 stacks=list_names(fn_def) if is_generated(unit.fn) else ())
        self.inline(fn_def, unit, keep or set())
        self.defs.insert(0, self.defs.pop())
        return fname

    def portable(self, fn: Any, mask: tuple[bool, ...] | None = None) -> str:
        """The name of a copy of user function ``fn`` that runs on any backend, for a call whose
        arguments marked in ``mask`` are arrays (default: all); the others are Python numbers,
        which the copy computes with as the user wrote it (``np.sin(a)``, not ``gl.sin(a)``)."""
        if custom_rule_for(fn) is not None:   # a user primitive: called as it is
            self.free.setdefault(fn.__name__, fn)
            return fn.__name__
        unit = self.unit(fn)
        mask = _full_mask(unit, mask)
        key = ("portable", fn, mask)
        if key in self.done:
            return self.done[key]
        fname = self._variant_name(fn, unit, mask, "")
        self.done[key] = fname
        emitter = self.emitter_for(unit, array_params(unit, mask))
        body = structured(emitter, unit.ir.body, emitter.forward)
        body.append(gast.Return(value=name(unit.ir.result)))
        self.add(function_def(fname, unit.parsed.node.args, [], [], body), unit,
                 {unit.ir.result})
        return fname

    def vjp(self, fn: Any, active: tuple[int, ...], mask: tuple[bool, ...] | None = None
            ) -> str:
        """The name of the vector-Jacobian product of user function ``fn`` with respect to the
        parameters at positions ``active``: ``fn_vjp(*args, dresult) -> their gradients``
        (``mask``: which arguments are arrays, as for :meth:`portable`)."""
        unit = self.unit(fn)
        mask = _full_mask(unit, mask)
        key = ("vjp", fn, active, mask)
        if key in self.done:
            return self.done[key]
        params = unit.ir.params
        suffix = "" if len(active) == len(params) else "_" + "_".join(params[i] for i in active)
        fname = self._variant_name(fn, unit, mask, f"_vjp{suffix}")
        self.done[key] = fname
        self.portable(fn, mask)
        wrt = [params[i] for i in active]
        builder = Reverse(self, unit, self.derivative(unit, REVERSE, wrt, array_params(unit, mask)),
                          wrt, REQUIRED, fname)
        fn_def = builder.build()                                            # differentiate
        self.add(fn_def, unit, set(), builder.classes, builder.stacks.values())
        update_in_place(fn_def)
        self.inline(fn_def, unit, set())
        return fname

    def jvp(self, fn: Any, active: tuple[int, ...], mask: tuple[bool, ...] | None = None
            ) -> str:
        unit = self.unit(fn)
        mask = _full_mask(unit, mask)
        key = ("jvp", fn, active, mask)
        if key in self.done:
            return self.done[key]
        params = unit.ir.params
        suffix = "" if len(active) == len(params) else "_" + "_".join(params[i] for i in active)
        fname = self._variant_name(fn, unit, mask, f"_jvp{suffix}")
        self.done[key] = fname
        self.portable(fn, mask)
        wrt = [params[i] for i in active]
        fn_def = Forward(self, unit, self.derivative(unit, FORWARD, wrt, array_params(unit, mask)),
                         wrt, fname, subroutine=True).build()               # differentiate
        self.add(fn_def, unit, set())
        self.inline(fn_def, unit, set())
        return fname

    def _variant_name(self, fn: Any, unit: Unit, mask: tuple[bool, ...], suffix: str) -> str:
        """``helper`` (or ``helper_vjp``...) for the first variant of a helper; a later one, for
        Python numbers in some parameters, says which: ``helper_of_number_scale``."""
        if (fn, suffix) not in self.first_variant:
            self.first_variant[(fn, suffix)] = mask
            if not suffix and fn.__name__ not in self.top_names:   # the portable copy
                self.top_names.add(fn.__name__)                     # keeps the user's name
                return str(fn.__name__)
            if not suffix:        # a helper read again for other container arguments
                return self.reserve(fn.__name__)
            return self.reserve(f"{fn.__name__}{suffix}")
        numbers = [p for p, is_array in zip(unit.ir.params, mask) if not is_array]
        plural = "s" if len(numbers) > 1 else ""
        return self.reserve(f"{fn.__name__}_of_number{plural}_{'_'.join(numbers)}{suffix}")

    # --- output --------------------------------------------------------------------------------
    def source(self) -> Source:
        return to_source(self.defs)                                         # emit


def _full_mask(unit: Unit, mask: tuple[bool, ...] | None) -> tuple[bool, ...]:
    """A call binds every parameter (defaults filled in), so a mask has one entry each."""
    return (True,) * len(unit.ir.params) if mask is None else tuple(mask)


def array_params(unit: Unit, mask: tuple[bool, ...]) -> set[str]:
    return {p for p, is_array in zip(unit.ir.params, mask) if is_array}


def _local_names(unit: Unit) -> set[str]:
    """The user's local names and the normalized program's (a renamed ``v4_1`` read in a
    condition kept as written is as local as ``v4``: ``v4_1.sum()`` is a method call)."""
    return assigned_names(unit.parsed.node) | ir.writes_in(unit.ir.body) | set(unit.ir.params)


def compile_program(program: Program, label: str, transform: Callable[..., None] | None = None
                    ) -> tuple[Any, Source, str]:
    """Emit and compile; returns (factory taking the free values, source, linecache name)."""
    source = program.source()                                               # emit
    factory, filename = compile_source(source.text, program.main.fn.__globals__,  # compile
                                       program.free, label, transform)
    return factory, source, filename
