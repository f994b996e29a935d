"""Transforms: a function's generated program, made once and reused by every gradient (or jvp)
function made from it, with a variant per kind of inputs.

A variant is specialized for the parameters that are plain Python numbers (no ``unbroadcast``,
zeros as ``0.0``: the code a person would write for scalars), and for the *dialect* of the
inputs' framework where the function names no framework and calls a method that means
something else on a torch tensor (``x.var()`` is unbiased there). A gradient also has a
variant per *signature* of its call (:class:`gradlab.codegen.ranks.Signature`: the arguments'
ranks and which of their dimensions are equal), written as a textbook writes it
(``dW = x.T @ dz``; see :mod:`gradlab.codegen.textbook`); its text starts with a comment saying
so. Each variant is a :class:`Variant`: the compiled factory of its functions, its source,
and what binding it needs.
"""
from __future__ import annotations

import ast
import time
from dataclasses import dataclass
from typing import Any, Callable

from .cache import unbound
from .calls import several_outputs
from .codegen import ir
from .codegen.emit import Source, compile_source
from .codegen.parse import is_generated
from .codegen.inplace import functional_text, has_updates_in_place
from .codegen.ranks import Signature, scalar_result
from .codegen.shapes import list_params, vector_facts
from .codegen.program import Program, Unit, compile_program, normalize_function, \
    written_dialect
from .errors import GradlabError


@dataclass(frozen=True)
class Variant:
    """One compiled variant of a transform."""

    factory: Callable[..., dict[str, Any]]   # free values -> the generated functions by name
    source: Source                           # the generated text, with its map to user lines
    filename: str                            # the name the text is registered under (linecache)
    name: str                                # the function of the variant the caller runs
    free: dict[str, Any]                     # the values the factory takes (``gl`` unset)
    seed_name: str | None = None             # a gradient's seed parameter (None for a jvp)
    #: the factory of the same text with its updates in place (``du[t] += du_t``) written as
    #: ``du = gl.index_add(du, t, du_t)``, for arrays that cannot change (None: it has none)
    functional: Callable[..., dict[str, Any]] | None = None
    #: the user's lines making a Python number of a value carrying a gradient (refused on
    #: torch's and TensorFlow's tensors: see gradlab.calls.refuse_without_gradient)
    conversions: tuple[Any, ...] = ()


class Transform:
    """One reverse transform of one function: the gradient for inputs of unknown shape, and on
    demand its other variants (see the module's docstring).

    A transform is shared by every function with the same code and kinds of closed-over values
    (see :func:`gradlab.cache.reverse_key`), so it keeps neither the function nor the values it
    closes over: a variant is made from the function that asks for it, and each generated
    function binds its own values (:func:`gradlab.cache.bind_free`)."""

    #: its gradients get variants specialised for their call's shapes (``variant(...,
    #: signature)``); an edited gradient's stand-in has none
    specializes = True

    def __init__(self, fn: Any, wrt: tuple[str, ...], optimized: bool,
                 checkpoint: Any = None) -> None:
        self.wrt = wrt
        self.optimized = optimized
        self.checkpoint = checkpoint
        self.dialect = written_dialect(fn) or "numpy"
        self.follows_inputs = written_dialect(fn) is None
        self.dialect_sensitive = False
        self.variants: dict[tuple[frozenset[str], str, Signature | None], Variant] = {}
        #: the variants' lean twins (see lean_factory), None where there is none
        self.leans: dict[tuple[frozenset[str], str, Signature | None], Any] = {}
        self.checked: set[tuple[Any, ...]] = set()       # see GeneratedFunction._checked
        self.unchecked: dict[tuple[Any, ...], str] = {}
        self.outputs: SeveralOutputs | None = None
        self.value_name: str | None = None
        #: parameters read at an integer index: a call passing 1-d arrays there gets a variant
        #: that knows ``u[t]`` is a scalar (see gradlab.codegen.shapes.VECTOR_MARK)
        self.indexed: frozenset[str] = frozenset()
        start = time.perf_counter()
        self.main = in_either_dialect(self, fn)
        self.seconds = time.perf_counter() - start

    def _dialect(self, dialect: str | None) -> str:
        return dialect if dialect is not None and self.dialect_sensitive and \
            self.follows_inputs else self.dialect

    def lean_factory(self, scalars: frozenset[str], fn: Any, dialect: str | None = None,
                     signature: Signature | None = None) -> Callable[..., dict[str, Any]] | None:
        """The variant's code without what computes only the function's value, compiled (or
        None: nothing to leave out, or the value's shape is not sure). A ``grad`` call after
        the first (whose value the guard compared) needs no value once the code proves it a
        scalar for these inputs (:func:`gradlab.codegen.ranks.scalar_result`): then the
        seed 1.0 has its shape, and W6's loop skips its cost ``c`` (bench/HISTORY.md). The
        panel shows the variant, which computes both: this is the same text, optimized with
        the value not kept."""
        variant = self.variant(scalars, fn, dialect, signature)
        key = (scalars, self._dialect(dialect), signature)
        if key in self.leans:
            return self.leans[key]
        made = None
        unit = normalize_function(fn, self._dialect(dialect), list_params(scalars))
        numbers, vectors = vector_facts(scalars)
        if self.optimized and self.checkpoint is None and scalar_result(unit.ir, signature,
                                                                        numbers, vectors):
            program = Program(unit, optimized=True, dialect=self._dialect(dialect))
            gradient = program.gradient(list(self.wrt), scalars, signature, keep_value=False)
            text = program.source().text
            shown = variant.source.text
            if shown.startswith("# specialised"):
                shown = shown.split("\n", 1)[1]
            if text != shown and set(program.free) <= set(variant.free):
                made = compile_source(text, fn.__globals__, variant.free, gradient.name,
                                      transform=also_return(gradient.name, None))[0]
        self.leans[key] = made
        return made

    def variant(self, scalars: frozenset[str], fn: Any, dialect: str | None = None,
                signature: Signature | None = None) -> Variant:
        """The variant for these inputs; one for a ``signature`` whose text is the generic
        one's is that generic variant itself."""
        dialect = self._dialect(dialect)
        hit = self.variants.get((scalars, dialect, signature))
        if hit is None:
            generic = self.variant(scalars, fn, dialect) if signature is not None else None
            unit = normalize_function(fn, dialect, list_params(scalars))
            self.outputs = several_outputs_of(unit)
            program = Program(unit, optimized=self.optimized, dialect=dialect,
                              checkpoint=self.checkpoint)
            if not scalars and signature is None:
                self.indexed = frozenset(program.indexed())
            gradient = program.gradient(list(self.wrt), scalars, signature)
            source = program.source()
            if generic is not None and signature is not None:
                if source.text == generic.source.text:
                    self.variants[(scalars, dialect, signature)] = generic
                    return generic
                header = f"# specialised for {signature.describe()}"
                if signature.transposes_copy and "gl.matmul_grad_" in source.text:
                    header += " (matrix products' adjoints: one dot_general each)"
                source = with_header(source, header)
            returned = also_return(gradient.name, gradient.value_name)
            factory, filename = compile_source(source.text, fn.__globals__, program.free,
                                               gradient.name, transform=returned)
            hit = Variant(factory, source, filename, gradient.name, unbound(program.free, fn),
                          gradient.seed, functional_twin(source.text, fn.__globals__,
                                                         program.free, gradient.name, returned),
                          tuple(program.conversions))
            self.variants[(scalars, dialect, signature)] = hit
            self.dialect_sensitive = self.dialect_sensitive or program.dialect_sensitive
            if signature is None:
                self.value_name = gradient.value_name
        return hit


class ForwardTransform:
    """A forward-mode transform of one function (the user's, or generated gradient code), with
    a variant specialized for parameters that are plain Python numbers, as in reverse mode.
    ``value_name``: for generated gradient code, the variable holding the original function's
    value, which the compiled code also returns (``hvp`` checks it is a scalar)."""

    def __init__(self, fn: Any, wrt: tuple[str, ...], optimized: bool, label: str,
                 value_name: str | None = None) -> None:
        self.fn = fn
        self.wrt = wrt
        self.optimized = optimized
        self.label = label
        self.dialect = written_dialect(fn) or "numpy"
        self.follows_inputs = written_dialect(fn) is None
        self.dialect_sensitive = False
        self.value_name = value_name
        self.variants: dict[tuple[frozenset[str], str], Variant] = {}
        #: the parameters whose rank a variant may know (see Transform.indexed)
        self.indexed: frozenset[str] = frozenset()
        start = time.perf_counter()
        self.main = in_either_dialect(self)
        self.seconds = time.perf_counter() - start

    def variant(self, scalars: frozenset[str], fn: Any = None, dialect: str | None = None
                ) -> Variant:
        """The variant for these inputs (``fn``: unused, a forward transform keeps its
        function; every transform takes the same arguments)."""
        dialect = dialect if dialect is not None and self.dialect_sensitive and \
            self.follows_inputs else self.dialect
        hit = self.variants.get((scalars, dialect))
        if hit is None:
            # (gradient code that hvp reads keeps its lists' gradients as its helpers make them)
            unit = normalize_function(self.fn, dialect, frozenset() if is_generated(
                self.fn) else list_params(scalars))
            program = Program(unit, optimized=self.optimized, dialect=dialect)
            keep = {self.value_name} if self.value_name else set()
            if not scalars:
                self.indexed = frozenset(program.indexed())
            fname = program.tangent(self.label, list(self.wrt), scalars, keep)
            transform = also_return(fname, self.value_name) if self.value_name else None
            factory, source, filename = compile_program(program, fname, transform=transform)
            # (the values its function closes over stay its own: hvp shares one transform
            # among the gradients of closures over different values, see api.HVPFunction)
            hit = Variant(factory, source, filename, fname, unbound(program.free, self.fn),
                          conversions=tuple(program.conversions))
            self.variants[(scalars, dialect)] = hit
            self.dialect_sensitive = self.dialect_sensitive or program.dialect_sensitive
        return hit


def functional_twin(text: str, user_globals: dict[str, Any], free: dict[str, Any], label: str,
                    transform: Callable[[ast.Module], None] | None = None
                    ) -> Callable[..., dict[str, Any]] | None:
    """``text`` compiled with its updates in place written functionally (see
    :mod:`gradlab.codegen.inplace`), for JAX, TensorFlow and torch under autograd; None when
    it has none."""
    if not has_updates_in_place(text):
        return None
    return compile_source(functional_text(text), user_globals, free, label,
                          transform=transform)[0]


def in_either_dialect(transform: Any, *fn: Any) -> Variant:
    """The first variant of a transform, in the dialect its code is written in; code that
    names no framework is read as NumPy's, or else as torch's: a method only torch has
    (``x.repeat(2, 1)`` alone) is refused in NumPy's reading but means something in torch's.
    The code is then shown in torch's reading; NumPy inputs get NumPy's (and its refusal)."""
    try:
        return transform.variant(frozenset(), *fn)  # type: ignore[no-any-return]
    except GradlabError as first:
        if not transform.follows_inputs:
            raise
        transform.dialect = "torch" if transform.dialect == "numpy" else "numpy"
        try:
            hit = transform.variant(frozenset(), *fn)
        except GradlabError:
            raise first from None
        transform.dialect_sensitive = True    # the two readings differ
        return hit  # type: ignore[no-any-return]


def several_outputs_of(unit: Unit) -> SeveralOutputs | None:
    """Whether the function returns a tuple or a list written out (``return loss, aux``)."""
    result = unit.ir.result
    for s in ir.walk(unit.ir.body):
        if isinstance(s, ir.Assign) and s.targets == [result] and s.op.kind in (
                ir.OpKind.TUPLE, ir.OpKind.LIST):
            return SeveralOutputs(unit.fn.__qualname__, s.op.kind.value, len(s.op.args),
                                  s.origin)
    return None


class SeveralOutputs:
    """A function with several outputs: differentiated only with a seed for each of them."""

    def __init__(self, name: str, kind: str, count: int, origin: ir.Origin | None) -> None:
        self.name, self.kind, self.count, self.origin = name, kind, count, origin

    def error(self) -> GradlabError:
        return ir.refusal(several_outputs(self.name, self.kind, self.count), self.origin,
                          f"returning a {self.kind}")


def with_header(source: Source, line: str) -> Source:
    """``source`` with a comment line above it (its line map shifted to match)."""
    return Source(line + "\n" + source.text, {1: 0, **{k + 1: v for k, v in
                                                     source.line_map.items()}},
                  {1: "", **{k + 1: v for k, v in source.line_text.items()}})


def also_return(fname: str, value_name: str | None) -> Callable[[ast.Module], None]:
    """Make the compiled gradient return ``(value, gradients)``: the wrapper needs the value to
    check the output is a scalar, and value_and_grad returns it (None when an edit removed it).
    ``value_name`` holds the value through the backward pass (the generated code keeps it under
    a name of its own where the backward pass restores the result's variable)."""
    def transform(tree: ast.Module) -> None:
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == fname:
                last = node.body[-1]
                assert isinstance(last, ast.Return)
                value: ast.expr = ast.Name(value_name, ast.Load()) if value_name else \
                    ast.Constant(None)
                returned: ast.expr = last.value if last.value is not None else ast.Constant(None)
                last.value = ast.Tuple(elts=[value, returned], ctx=ast.Load())
                ast.copy_location(last.value, last)
    return transform
