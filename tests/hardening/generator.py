"""Random, valid programs in gradlab's supported subset, as Python *source code*.

``programs(category)`` is a hypothesis strategy of :class:`GeneratedProgram`: the text of a
module (helper functions, then ``f``), the shapes of ``f``'s parameters, which of them to
differentiate (``wrt``) and a seed for the inputs. Every program is valid by construction:

* shapes are tracked: every variable has a shape from ``(), (4,), (3, 4), (3, 1)`` and every
  expression is built for a target shape (subexpressions may pass through ``(3,)``, ``(1, 4)``,
  ``(2, 4)``: slices, reductions with ``axis``/``keepdims``, matrix products);
* denominators, ``log`` and ``sqrt`` arguments are kept away from zero (``/(1.0 + e ** 2)``,
  ``np.log(1.0 + e ** 2)``), ``exp`` only sees bounded arguments;
* NumPy's in-place semantics never matter: ``+=`` and ``out[i] = ...`` only touch arrays the
  function created itself (never a parameter) and nothing else refers to (a variable that is
  ever aliased — ``z = y`` or a view ``z = y[1:]`` — is never updated in place), so the
  program means the same whether an update copies or mutates;
* loops terminate (``range(k)``, ``while`` on a counter incremented first thing in the body);
* the function returns a scalar (``np.sum``/``np.mean`` of something) on every path.

Kinks and branch boundaries (``np.abs``, ``np.maximum``, ``np.max``, ``if np.sum(v) > c``)
are generated sparingly; inputs near them are rejected by the test, which compares finite
differences taken with two step sizes (see ``test_generated.finite_difference_gradient``).

``write_module`` writes a program to a ``.py`` file and imports it (gradlab reads the source).
"""
from __future__ import annotations

import ast
import atexit
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

S: tuple[int, ...] = ()
V = (4,)
M = (3, 4)
C = (3, 1)
R = (3,)
ROW = (1, 4)
M2 = (2, 4)

#: Shapes a variable or parameter may have.
VAR_SHAPES = (S, V, M, C)
#: Shapes an expression may have (the variable shapes and a few intermediate ones).
EXPR_SHAPES = (S, V, M, C, R, ROW, M2)

#: Switches that steer the generator around gradlab bugs. ``True``: the construct is generated.
#: Set one to ``False`` while the bug it meets is open (with a strict-xfail reproduction in
#: test_known_bugs.py), so the fuzzer keeps finding other bugs; set it back when it is fixed.
#: Each was ``False`` for a while during the hardening work; all were fixed in 393225c.
#:
#: ``wrt=(0,)``: a one-element tuple got a bare gradient back, iterated over by api._conform.
SINGLE_TUPLE_WRT = True
#: FIXED (test_known_bugs, section B): primitives of values computed from constants only
#: (Python floats): ``np.sin(0.5)`` in f, a helper's default argument (``np.abs(scale)``), a
#: constant branch of a conditional expression (``np.sin(x[1] if c else 0.5)``), constants
#: written into arrays (``out[1] = 0.3``), forward-mode tangents of Python-float variables.
#: ``False`` would make assignments and primitives' operands always depend on a parameter.
PRIMITIVES_OF_CONSTANTS = True
#: A conditional expression sharing a computation with its other branch or the rest of its
#: line: the normalizer reused a value computed in one branch in the other.
IFEXP_SHARED_COMPUTATIONS = True
#: ``np.sum(v, axis=0)`` of a 1-D array: a Python-float gradient reached torch's expand_dims.
AXIS_REDUCTION_TO_SCALAR = True
#: ``a, b = x * 1.0, w * 2.0`` with values of different shapes: one shape class for all the
#: targets, so ``unbroadcast`` was dropped.
TUPLE_TARGETS_OF_DIFFERENT_SHAPES = True
#: ``@`` inside an ``if`` condition: kept as written, and TensorFlow's ``@`` rejects a vector
#: times a matrix.
MATMUL_IN_CONDITIONS = True
#: Forward mode on loops (``y = y * y``: the tangent read the updated ``y``). While ``False``,
#: jvp is not checked on programs with loops (reverse mode still is).
JVP_ON_LOOPS = True
#: Reverse mode on loops: ``y = y / x``, ``np.tanh(y)``, ``np.exp(y)``, ``np.sqrt(y)`` overwriting
#: their operand (the adjoint read the restored operand as the result). While ``False``, such a
#: statement in a loop is written ``y = (np.tanh(y)) * 1.0`` and ``/=`` is not used in loops.
LOOP_OVERWRITE_RESULT_RULES = True
#: ``p, q = h(x)`` (a helper returning a tuple) inside an ``if``, or after an early return: the
#: adjoint of the tuple started as ``0.0`` and was indexed.
TUPLE_CALL_IN_BRANCH = True
#: ``return`` inside a loop inside an ``if``: the return was dropped.
RETURN_IN_LOOP_IN_BRANCH = True
#: A call of the user's own function in an ``if`` condition whose branches are dead code: an
#: ``if`` with an empty body in the generated code.
CALLS_IN_CONDITIONS = True

#: A helper returning a tuple with an element computed from constants only (``return a * 2.0,
#: scale * 1.0``): the adjoint list was made with zeros_like of a Python float (torch:
#: TypeError; TensorFlow: float32). Fixed: zeros_like of a Python number is 0.0.
CONSTANT_TUPLE_ELEMENTS = True

#: A helper called with an argument computed from constants only (``h(0.5)``): its copy in the
#: generated code applied gl.sin(...) to the Python float. Fixed: a helper gets a copy of its
#: own for the parameters that hold Python numbers at a call, computing on them as written.
CONSTANT_HELPER_ARGUMENTS = True

#: An augmented assignment to a variable that may share memory with another (``v = x[0:2]``,
#: ``a, b = x, y``, a row ``x[1]``): in NumPy it changes the other too. gradlab must refuse
#: it, or, when nothing reads the other again, give the right gradient.
ALIASED_UPDATES = True

CONSTANTS = ("0.5", "2.0", "1.5", "0.3", "0.7", "1.2", "-0.8", "3.0")
THRESHOLDS = ("0.0", "0.5", "-0.5", "1.0", "0.2", "-1.0", "2.0")


def broadcasts_to(u: tuple[int, ...], t: tuple[int, ...]) -> bool:
    """True when an operand of shape ``u`` combined with one of shape ``t`` gives shape ``t``."""
    try:
        return tuple(np.broadcast_shapes(u, t)) == tuple(t)
    except ValueError:
        return False


#: Every generated module starts with these imports (scipy for scipy.special.logsumexp).
HEADER = "import numpy as np\nimport scipy.special\n\n\n"

# Reductions: target shape -> (source shape, axis, keepdims) that produce it.
REDUCTIONS: dict[tuple[int, ...], list[tuple[tuple[int, ...], Any, bool]]] = {
    S: [(V, None, False), (M, None, False), (C, None, False), (R, None, False),
        (M2, None, False)] + ([(V, 0, False)] if AXIS_REDUCTION_TO_SCALAR else []),
    V: [(M, 0, False), (M2, 0, False)],
    R: [(M, 1, False), (M, -1, False), (C, 1, False)],
    C: [(M, 1, True), (M, -1, True)],
    ROW: [(M, 0, True), (M2, 0, True)],
    M2: [],
    M: [],
}

# Subscript reads: variable shape -> (index text, result shape); "{i3}"/"{i4}" need a loop
# counter whose range is at most 3 / 4.
SUBSCRIPTS: dict[tuple[int, ...], list[tuple[str, tuple[int, ...]]]] = {
    V: [("[1]", S), ("[0]", S), ("[-1]", S), ("[3]", S), ("[1:]", R), ("[:3]", R),
        ("[:-1]", R), ("[{i4}]", S)],
    M: [("[1]", V), ("[0, :]", V), ("[-1]", V), ("[2, 1]", S), ("[0, 3]", S), ("[:, 2]", R),
        ("[:, 0]", R), ("[:, 2:3]", C), ("[:, 1:2]", C), ("[1:]", M2), ("[:2]", M2),
        ("[:1]", ROW), ("[1:2]", ROW), ("[{i3}]", V), ("[:, {i4}]", R), ("[{i3}, 1]", S)],
    C: [("[1, 0]", S), ("[2, 0]", S), ("[:, 0]", R), ("[{i3}, 0]", S)],
}

# Subscript writes into an array made with np.zeros: array shape -> (index, value shape).
WRITES: dict[tuple[int, ...], list[tuple[str, tuple[int, ...]]]] = {
    V: [("[1]", S), ("[-1]", S), ("[1:]", R), ("[{i4}]", S), ("[:3]", R)],
    M: [("[1]", V), ("[:, 2]", R), ("[1:]", M2), ("[:, 1:2]", C), ("[2, 3]", S),
        ("[{i3}]", V), ("[:, {i4}]", R), ("[{i3}, 0]", S)],
}


@dataclass(frozen=True)
class Features:
    branches: bool = False
    loops: bool = False
    calls: bool = False
    writes: bool = False
    early_return: bool = False
    kinks: bool = True          # np.abs / np.maximum / np.max, sparingly
    max_statements: int = 6
    max_depth: int = 3          # expression depth


CATEGORIES: dict[str, Features] = {
    "straight": Features(max_statements=6),
    "branches": Features(branches=True, early_return=True),
    "loops": Features(loops=True, writes=True),
    "calls": Features(calls=True, branches=True),
    "mixed": Features(branches=True, loops=True, calls=True, writes=True, early_return=True),
}


@dataclass
class Var:
    shape: tuple[int, ...]
    mutable: bool       # a fresh array (or Python number) nothing else refers to: may be updated
    const: bool = False  # may hold a value computed from constants only (a Python float...)

    def copy(self) -> "Var":
        return Var(self.shape, self.mutable, self.const)


@dataclass
class Helper:
    name: str
    params: list[tuple[str, tuple[int, ...]]]
    default: str | None          # the value of the default parameter `scale`, if any
    returns: tuple[tuple[int, ...], ...]
    recursive: bool = False


@dataclass
class GeneratedProgram:
    source: str
    shapes: tuple[tuple[int, ...], ...]
    wrt: Any                     # an int, a name or a tuple of ints
    seed: int
    category: str
    constructs: frozenset[str] = field(default_factory=frozenset)

    @property
    def digest(self) -> str:
        text = f"{self.source}\n{self.shapes}\n{self.wrt}\n{self.seed}"
        return hashlib.sha1(text.encode()).hexdigest()[:10]

    @property
    def wrt_indices(self) -> tuple[int, ...]:
        return wrt_indices(self.wrt, len(self.shapes))

    def inputs(self) -> list[np.ndarray]:
        return make_inputs(self.shapes, self.seed)

    def __repr__(self) -> str:     # what hypothesis prints for a falsifying example
        return (f"GeneratedProgram(category={self.category!r}, shapes={self.shapes!r}, "
                f"wrt={self.wrt!r}, seed={self.seed!r}, source=\n{self.source})")


PARAM_NAMES = ("x", "w", "b", "z")



def wrt_indices(wrt: Any, nparams: int) -> tuple[int, ...]:
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return tuple(PARAM_NAMES.index(w) if isinstance(w, str) else w % nparams for w in items)


def make_inputs(shapes: Any, seed: int) -> list[np.ndarray]:
    """Float64 inputs in (-1.2, 1.2), scalars as 0-d arrays."""
    rng = np.random.default_rng(seed)
    return [np.asarray(rng.uniform(-1.2, 1.2, size=tuple(s)), dtype=np.float64) for s in shapes]


def alias_roots(src: str) -> set[str]:
    """The variables whose array the value of ``src`` may be (or be a view of): a name, a
    subscript (basic slicing makes views) of one, either branch of a conditional expression."""
    def roots(node: ast.expr) -> set[str]:
        if isinstance(node, ast.Name):
            return {node.id}
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            return roots(node.value)
        if isinstance(node, ast.IfExp):
            return roots(node.body) | roots(node.orelse)
        return set()
    try:
        return roots(ast.parse(src, mode="eval").body)
    except SyntaxError:
        return set()


def is_bare(src: str) -> bool:
    """Whether ``src`` may evaluate to an existing array (an alias or a view)."""
    return bool(alias_roots(src))


_RESULT_RULES = {"tanh", "exp", "sqrt", "expm1", "sigmoid"}


def overwrites_through_result_rule(target: str, src: str) -> bool:
    """Whether ``target = src`` is one operation whose derivative rule uses its result and
    whose operand is ``target`` itself (see ``LOOP_OVERWRITE_RESULT_RULES``)."""
    try:
        node = ast.parse(src, mode="eval").body
    except SyntaxError:
        return False
    def is_target(n: ast.expr) -> bool:
        return isinstance(n, ast.Name) and n.id == target
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return is_target(node.left) or is_target(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _RESULT_RULES:
        return any(is_target(a) for a in node.args)
    return False


def fresh(src: str) -> str:
    """``src`` as a new array."""
    return f"({src}) * 1.0" if src.startswith("(") or " if " in src else f"{src} * 1.0"


_COMPUTATIONS = (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript)


def _computations(nodes: list[ast.AST], skip: set[int] = frozenset()) -> set[str]:  # type: ignore[assignment]
    out: set[str] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if id(node) in skip:
            continue
        if isinstance(node, _COMPUTATIONS):
            out.add(ast.dump(node))
        stack.extend(ast.iter_child_nodes(node))
    return out


def unshare_conditional_expressions(line: str) -> str:
    """Replace each conditional expression that shares a computation with its other branch or
    with the rest of the line by its first branch (see ``IFEXP_SHARED_COMPUTATIONS``)."""
    tree = ast.parse(line)
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            for field_name, child in ast.iter_fields(node):
                children = child if isinstance(child, list) else [child]
                for k, sub in enumerate(children):
                    if not isinstance(sub, ast.IfExp):
                        continue
                    body, orelse = _computations([sub.body]), _computations([sub.orelse])
                    rest = _computations([tree], skip={id(sub.body), id(sub.orelse)})
                    if (body & orelse) or ((body | orelse) & rest):
                        if isinstance(child, list):
                            child[k] = sub.body
                        else:
                            setattr(node, field_name, sub.body)
                        changed = True
                        break
                if changed:
                    break
            if changed:
                break
    return ast.unparse(tree) if tree.body else line


class Builder:
    """Builds one function body; ``draw`` is hypothesis's draw."""

    def __init__(self, draw: Callable[[Any], Any], features: Features, names: "NameSource",
                 helpers: list[Helper], constructs: set[str]) -> None:
        self.draw = draw
        self.features = features
        self.names = names
        self.helpers = helpers
        self.constructs = constructs
        self.env: dict[str, Var] = {}
        self.loops: list[tuple[str, int]] = []      # (counter, bound) of enclosing loops
        self.lines: list[str] = []
        self.indent = 1
        self.returns: tuple[tuple[int, ...], ...] = (S,)   # what `return` must give
        self.block_depth = 0
        self.in_condition = False
        self.need_var = False   # the expression being built must depend on a parameter
        self.branch_depth = 0   # enclosing if/elif/else bodies
        self.returned = False   # an early return was written before this point
        self.loop_in_branch = 0  # enclosing loops that are themselves inside an if

    # --- drawing helpers ------------------------------------------------------------------
    def choice(self, options: Any) -> Any:
        options = list(options)
        return self.draw(st.sampled_from(options)) if len(options) > 1 else options[0]

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def chance(self, one_in: int) -> bool:
        return self.draw(st.integers(0, one_in - 1)) == 0

    def emit(self, line: str) -> None:
        if not IFEXP_SHARED_COMPUTATIONS and " if " in line and not line.endswith(":"):
            line = unshare_conditional_expressions(line)
        self.lines.append("    " * self.indent + line)

    # --- expressions ----------------------------------------------------------------------
    def counter(self, bound: int) -> str | None:
        fits = [name for name, k in self.loops if k <= bound]
        return self.choice(fits) if fits else None

    def leaves(self, t: tuple[int, ...], dependent: bool = False) -> list[str]:
        """Variables of shape ``t`` and subscripts of variables giving ``t`` (only those that
        depend on a parameter when ``dependent``)."""
        env = {n: v for n, v in self.env.items() if not (dependent and v.const)}
        out = [n for n, v in env.items() if v.shape == t]
        c3 = c4 = None
        if self.loops:
            c3, c4 = self.counter(3), self.counter(4)
        for n, v in env.items():
            for index, shape in SUBSCRIPTS.get(v.shape, ()):
                if shape != t:
                    continue
                if ("{i3}" in index and c3 is None) or ("{i4}" in index and c4 is None):
                    continue
                out.append(n + index.replace("{i3}", c3 or "").replace("{i4}", c4 or ""))
        return out

    def depends(self, src: str) -> bool:
        """Whether expression ``src`` reads a variable that depends on a parameter."""
        names = set(re.findall(r"[A-Za-z_]\w*", src))
        return any(not v.const for n, v in self.env.items() if n in names)

    def dependent(self, make: Callable[[], str], t: tuple[int, ...], force: bool = False) -> str:
        """``make()`` when what it builds depends on a parameter, else a leaf that does.

        Works around a gradlab bug: the torch and TensorFlow backends crash (or compute in
        float32) on primitives applied to Python numbers, e.g. ``np.sin(0.5)``; see
        test_known_bugs.test_primitive_of_python_float."""
        saved, self.need_var = self.need_var, True
        try:
            src = make()
        finally:
            self.need_var = saved
        if (PRIMITIVES_OF_CONSTANTS and not force) or self.depends(src):
            return src
        return self.dependent_leaf(t)

    def dependent_leaf(self, t: tuple[int, ...]) -> str:
        options = self.leaves(t, dependent=True)
        if options:
            return self.choice(options)
        base = self.choice([n for n, v in self.env.items() if not v.const])
        if t == S:
            return f"np.mean({base})" if self.env[base].shape != S else base
        mean = f"np.mean({base})" if self.env[base].shape != S else base
        return f"({mean} * np.ones({t if len(t) > 1 else t[0]}))"

    def leaf(self, t: tuple[int, ...]) -> str:
        options = self.leaves(t)
        if t == S:
            options = options + ["<const>"]
        if not options:
            return self.fallback(t)
        pick = self.choice(options)
        if pick == "<const>":
            return self.choice(CONSTANTS)
        if "[" in pick:
            self.constructs.add("subscript read")
        return pick

    def fallback(self, t: tuple[int, ...]) -> str:
        """An expression of shape ``t`` when no variable or slice has it (parenthesized)."""
        if t == M:
            if self.leaves(V):
                return f"({self.leaf(V)} * np.ones((3, 1)))"
            if self.leaves(C):
                return f"({self.leaf(C)} * np.ones(4))"
        if t == V and self.leaves(M):
            return f"np.sum({self.leaf(M)}, axis=0)"
        if t == C and self.leaves(M):
            return f"np.mean({self.leaf(M)}, axis=1, keepdims=True)"
        if t == R and self.leaves(M):
            return f"np.mean({self.leaf(M)}, axis=1)"
        if t == ROW:
            return f"np.mean({self.leaf(M)}, axis=0, keepdims=True)"
        if t == M2:
            return f"({self.leaf(M)})[1:]"
        return f"({self.leaf(S)} * np.ones({t if len(t) > 1 else t[0]}))"

    def expr(self, t: tuple[int, ...], depth: int) -> str:
        if depth <= 0 or self.chance(4):
            return self.leaf(t)
        kinds = ["leaf", "binop", "unary", "div", "pow", "neg", "reduce", "subexpr"]
        if t == M:
            kinds.append("outer")
        if t in (S, R, V) and (MATMUL_IN_CONDITIONS or not self.in_condition):
            kinds.append("matmul")
        if self.loops:
            kinds.append("counter")
        if self.features.calls and any(h.returns == (t,) for h in self.helpers) and (
                CALLS_IN_CONDITIONS or not self.in_condition):
            kinds.append("call")
        if self.features.branches and not self.in_condition:
            kinds.append("ifexp")
        kind = self.choice(kinds)
        d = depth - 1
        if kind == "leaf":
            return self.leaf(t)
        if kind == "binop":
            other = self.choice([u for u in EXPR_SHAPES if broadcasts_to(u, t)])
            a, b = self.expr(t, d), self.expr(other, d)
            if self.chance(2):
                a, b = b, a
            if other != t:
                self.constructs.add("broadcasting")
            return f"({a} {self.choice('+-*')} {b})"
        if kind == "outer":
            self.constructs.add("broadcasting")
            left = self.choice([V, ROW])
            a, b = self.expr(left, d), self.expr(C, d)
            return f"({a} {self.choice('+-*')} {b})" if self.chance(2) else \
                f"({b} {self.choice('+-*')} {a})"
        if kind == "unary":
            return self.unary(t, d)
        if kind == "div":
            num = self.expr(t, d)
            den_shape = self.choice([u for u in (S, t) if broadcasts_to(u, t)])
            form = self.choice(["(1.0 + ({e}) ** 2)", "(2.0 + np.sin({e}))",
                                "np.sqrt(1.0 + {e} * {e})", "(1.5 + np.cos({e}))", "2.0"])
            if "np." in form:
                den = self.dependent(lambda: self.expr(den_shape, d), den_shape)
            else:
                den = self.expr(den_shape, d)
            return f"({num} / {form.format(e=den)})"
        if kind == "pow":
            return f"({self.expr(t, d)}) ** 2"
        if kind == "neg":
            return f"-({self.expr(t, d)})"
        if kind == "reduce":
            return self.reduce(t, d)
        if kind == "subexpr":
            sources = [(u, index) for u, items in SUBSCRIPTS.items() for index, shape in items
                       if shape == t and "{" not in index]
            if not sources:
                return self.leaf(t)
            u, index = self.choice(sources)
            self.constructs.add("subscript read")
            return f"({self.expr(u, d)}){index}"
        if kind == "matmul":
            self.constructs.add("matmul")
            a, b = {S: (V, V), R: (M, V), V: (R, M)}[t]
            ea = self.dependent(lambda: self.expr(a, d), a)
            eb = self.dependent(lambda: self.expr(b, d), b)
            return f"np.dot({ea}, {eb})" if t == S else f"({ea} @ {eb})"
        if kind == "counter":
            name, _ = self.choice(self.loops)
            return f"({self.expr(t, d)} * {self.choice([f'({name} + 1)', f'(0.5 * {name})', name])})"
        if kind == "call":
            helper = self.choice([h for h in self.helpers if h.returns == (t,)])
            return self.call(helper, d)
        if kind == "ifexp":
            self.constructs.add("conditional expression")
            make = (lambda: self.dependent(lambda: self.expr(t, d), t)) if self.need_var else (
                lambda: self.expr(t, d))
            a, test, b = make(), self.condition(d), make()
            a, b = (fresh(e) if is_bare(e) else e for e in (a, b))   # never an alias
            return f"({a} if {test} else {b})"
        raise AssertionError(kind)

    def unary(self, t: tuple[int, ...], d: int) -> str:
        e = self.dependent(lambda: self.expr(t, d), t)
        forms = ["np.sin({e})", "np.cos({e})", "np.tanh({e})", "np.exp(0.5 * np.sin({e}))",
                 "np.exp(np.tanh({e}))", "np.log(1.0 + ({e}) ** 2)", "np.sqrt(1.0 + {e} * {e})",
                 "np.log(2.0 + np.cos({e}))", "np.square({e})"]
        if self.features.kinks and self.chance(8):
            self.constructs.add("kink")
            other = self.expr(self.choice([u for u in EXPR_SHAPES if broadcasts_to(u, t)]), d)
            forms = ["np.abs({e})", "np.maximum({e}, {o})", "np.minimum({o}, {e})",
                     "np.maximum({e}, 0.0)"]
            return self.choice(forms).format(e=e, o=other)
        return self.choice(forms).format(e=e)

    def reduce(self, t: tuple[int, ...], d: int) -> str:
        sources = REDUCTIONS.get(t, [])
        if not sources:
            return self.leaf(t)
        u, axis, keepdims = self.choice(sources)
        fn = self.choice(["sum", "mean", "sum", "mean", "max", "logsumexp"] if self.features.kinks
                         else ["sum", "mean", "logsumexp"])
        module = "scipy.special" if fn == "logsumexp" else "np"
        self.constructs.add(f"{module}.{fn}" + ("(axis)" if axis is not None else "")
                            + ("(keepdims)" if keepdims else ""))
        args = []
        if axis is not None:
            args.append(f"axis={axis}")
        if keepdims:
            args.append("keepdims=True")
        e = self.dependent(lambda: self.expr(u, d), u)
        if module == "np" and self.chance(5):   # the method spelling
            self.constructs.add("array method")
            return f"({e}).{fn}({', '.join(args)})"
        return f"{module}.{fn}({', '.join([e] + args)})"

    def condition(self, d: int) -> str:
        saved, self.in_condition = self.in_condition, True
        try:
            return self._condition(d)
        finally:
            self.in_condition = saved

    def _condition(self, d: int) -> str:
        self.constructs.add("data-dependent branch")
        u = self.choice([S, V, M, C])
        value = self.dependent(lambda: self.expr(u, min(d, 1)), u)
        if u != S:
            value = f"np.{self.choice(['sum', 'mean'])}({value})"
        test = f"{value} {self.choice(['>', '<'])} {self.choice(THRESHOLDS)}"
        if self.chance(6):
            u2 = self.choice([V, M])
            other = f"np.sum({self.dependent(lambda: self.expr(u2, 0), u2)}) > " \
                    f"{self.choice(THRESHOLDS)}"
            test = f"{test} {self.choice(['and', 'or'])} {other}"
        return test

    def call(self, helper: Helper, d: int) -> str:
        self.constructs.add("call")
        args = [self.dependent(lambda: self.expr(shape, max(d - 1, 0)), shape,
                               force=not CONSTANT_HELPER_ARGUMENTS)
                for _, shape in helper.params]
        if helper.recursive:
            args.append(str(self.integer(1, 3)))
        if helper.default is not None:
            how = self.choice(["omit", "keyword", "positional"])
            if how != "omit":
                self.constructs.add("default argument")
                value = self.choice(CONSTANTS)
                args.append(f"scale={value}" if how == "keyword" else value)
        return f"{helper.name}({', '.join(args)})"

    # --- statements -----------------------------------------------------------------------
    def fresh_rhs(self, t: tuple[int, ...], allow_alias: bool) -> str:
        """An expression for an assignment; aliases (bare names, slices) only of arrays that
        are never updated in place, and only when the target may become an alias."""
        e = self.expr(t, self.features.max_depth)
        if not PRIMITIVES_OF_CONSTANTS and not self.depends(e):
            # a variable holding a Python float meets the same bug in the generated code
            # (zeros_like of it, e.g. in forward mode: test_jvp_of_python_float_variable)
            e = self.dependent_leaf(t)
        roots = alias_roots(e)
        if roots and (not allow_alias or any(
                self.env[r].mutable for r in roots if r in self.env)):
            return fresh(e)
        return e

    def assign_new(self) -> None:
        t = self.choice(VAR_SHAPES)
        e = self.fresh_rhs(t, allow_alias=True)
        name = self.names.var()
        self.emit(f"{name} = {e}")
        self.env[name] = Var(t, mutable=not is_bare(e), const=not self.depends(e))

    def targets(self, mutable_only: bool) -> list[str]:
        return [n for n, v in self.env.items() if not n.startswith("_") and
                n not in self.params and (v.mutable or not mutable_only)]

    def reassign(self) -> None:
        names = self.targets(mutable_only=False)
        if not names:
            return self.assign_new()
        name = self.choice(names)
        var = self.env[name]
        self.constructs.add("reassignment")
        e = self.fresh_rhs(var.shape, allow_alias=not var.mutable)
        if self.chance(2):   # read the variable itself (a dependence through the update)
            op = self.choice("+-*")
            other = self.choice([u for u in EXPR_SHAPES if broadcasts_to(u, var.shape)])
            e = f"{name} {op} {self.expr(other, 2)}"
        var.const = var.const or not self.depends(e)
        if self.loops and not LOOP_OVERWRITE_RESULT_RULES and \
                overwrites_through_result_rule(name, e):
            e = fresh(e)
        self.emit(f"{name} = {e}")

    def augassign(self) -> None:
        names = self.targets(mutable_only=not (ALIASED_UPDATES and self.chance(6)))
        if not names:
            return self.assign_new()
        name = self.choice(names)
        var = self.env[name]
        self.constructs.add("augmented assignment")
        if not var.mutable and var.shape != S:
            self.constructs.add("augmented assignment of an alias")
        other = self.choice([u for u in EXPR_SHAPES if broadcasts_to(u, var.shape)])
        ops = ["+=", "-=", "*=", "/="]
        if self.loops and not LOOP_OVERWRITE_RESULT_RULES:
            ops.remove("/=")
        op = self.choice(ops)
        e = self.expr(other, 2)
        if op == "/=":
            e = f"(1.0 + ({e}) ** 2)"
        self.emit(f"{name} {op} {e}")

    def tuple_assign(self) -> None:
        self.constructs.add("tuple unpacking")
        count = self.integer(2, 3)
        existing = self.targets(mutable_only=False)
        common = None if TUPLE_TARGETS_OF_DIFFERENT_SHAPES else self.choice(VAR_SHAPES)
        targets: list[str] = []
        shapes: list[tuple[int, ...]] = []
        values = []
        for _ in range(count):
            candidates = [n for n in existing if n not in targets and
                          (common is None or self.env[n].shape == common)]
            if candidates and self.chance(2):
                name = self.choice(candidates)
                shape = self.env[name].shape
                value = self.fresh_rhs(shape, allow_alias=not self.env[name].mutable)
            else:
                name = self.names.var()
                shape = common if common is not None else self.choice(VAR_SHAPES)
                value = self.fresh_rhs(shape, allow_alias=True)
            targets.append(name)
            shapes.append(shape)
            values.append(value)
        if self.chance(3) and len(targets) >= 2:   # a swap of two variables
            names = [n for n in targets if n in self.env and not self.env[n].mutable]
            same = [(a, b) for a in names for b in names if a < b and
                    self.env[a].shape == self.env[b].shape]
            if same:
                a, b = self.choice(same)
                self.emit(f"{a}, {b} = {b}, {a}")
                self.constructs.add("swap")
                return
        self.emit(f"{', '.join(targets)} = {', '.join(values)}")
        for name, shape, value in zip(targets, shapes, values):
            if name in self.env:
                if is_bare(value):
                    self.env[name].mutable = False
                self.env[name].const = self.env[name].const or not self.depends(value)
            else:
                self.env[name] = Var(shape, mutable=not is_bare(value),
                                     const=not self.depends(value))

    def helper_call(self) -> None:
        helpers = self.helpers
        if not TUPLE_CALL_IN_BRANCH and (self.branch_depth or self.returned):
            helpers = [h for h in helpers if len(h.returns) == 1]
            if not helpers:
                return self.assign_new()
        helper = self.choice(helpers)
        call = self.call(helper, 2)
        if len(helper.returns) == 1:
            name = self.names.var()
            self.emit(f"{name} = {call}")
            self.env[name] = Var(helper.returns[0], mutable=True)
        else:
            self.constructs.add("tuple return")
            names = [self.names.var() for _ in helper.returns]
            self.emit(f"{', '.join(names)} = {call}")
            for n, shape in zip(names, helper.returns):
                self.env[n] = Var(shape, mutable=True)

    def write_array(self) -> None:
        """``out = np.zeros(...)`` then writes into it (in a loop when loops are on)."""
        self.constructs.add("subscript write")
        shape = self.choice([V, M])
        name = self.names.var("out")
        self.emit(f"{name} = np.zeros({shape if len(shape) > 1 else shape[0]})")
        self.env[name] = Var(shape, mutable=True)
        if self.features.loops and self.chance(2):
            self.constructs.add("write in loop")
            bound = self.integer(1, 3 if shape == M else 4)
            counter = self.names.counter()
            self.emit(f"for {counter} in range({bound}):")
            self.loops.append((counter, bound))
            self.indent += 1
            self.write_into(name, shape, in_loop=True)
            if self.chance(2):
                self.statement(depth=self.block_depth + 1)
            self.indent -= 1
            self.loops.pop()
        else:
            for _ in range(self.integer(1, 2)):
                self.write_into(name, shape, in_loop=False)

    def write_into(self, name: str, shape: tuple[int, ...], in_loop: bool) -> None:
        options = []
        for index, value_shape in WRITES[shape]:
            if "{i3}" in index or "{i4}" in index:
                counter = self.counter(3 if "{i3}" in index else 4)
                if counter is None:
                    continue
                index = index.replace("{i3}", counter).replace("{i4}", counter)
            elif in_loop and self.chance(2):
                continue
            options.append((index, value_shape))
        if not options:
            options = [(i, s) for i, s in WRITES[shape] if "{" not in i]
        index, value_shape = self.choice(options)
        op = "=" if not self.chance(3) else self.choice(["+=", "-=", "*="])
        if op != "=":
            self.constructs.add("subscript augmented assignment")
        # a Python float written into an array: TensorFlow's index_update/index_add round it to
        # float32 (test_known_bugs.test_index_update_with_python_float_on_tensorflow)
        e = self.dependent(lambda: self.expr(value_shape, 2), value_shape)
        self.emit(f"{name}{index} {op} {e}")

    def if_statement(self, depth: int) -> None:
        self.constructs.add("if")
        self.emit(f"if {self.condition(2)}:")
        self.branch_depth += 1
        self.sub_block(depth)
        while self.chance(3):
            self.constructs.add("elif")
            self.emit(f"elif {self.condition(2)}:")
            self.sub_block(depth)
        if self.chance(2):
            self.constructs.add("else")
            self.emit("else:")
            self.sub_block(depth)
        self.branch_depth -= 1

    def for_statement(self, depth: int) -> None:
        self.constructs.add("for")
        bound = self.integer(1, 4)
        counter = self.names.counter()
        start = self.choice(["", "", "1, "])
        if start and bound == 1:
            bound = 2
        self.emit(f"for {counter} in range({start}{bound}):")
        self.loops.append((counter, bound))
        inside = 1 if self.branch_depth else 0
        self.loop_in_branch += inside
        self.sub_block(depth, in_loop=counter)
        self.loop_in_branch -= inside
        self.loops.pop()

    def while_statement(self, depth: int) -> None:
        self.constructs.add("while")
        bound = self.integer(1, 4)
        counter = self.names.counter("n")
        self.emit(f"{counter} = 0")
        self.emit(f"while {counter} < {bound}:")
        self.indent += 1
        self.emit(f"{counter} += 1")
        self.indent -= 1
        # the counter runs 1..bound inside the body: like range(bound + 1) for indexing
        self.loops.append((counter, bound + 1))
        inside = 1 if self.branch_depth else 0
        self.loop_in_branch += inside
        self.sub_block(depth, in_loop=counter)
        self.loop_in_branch -= inside
        self.loops.pop()

    def loop_exit(self, counter: str) -> None:
        kind = self.choice(["break", "continue"])
        self.constructs.add(kind)
        if self.chance(3):
            test = self.condition(1)
        else:
            test = self.choice([f"{counter} == 1", f"{counter} % 2 == 0", f"{counter} > 1",
                                f"{counter} == 2"])
        self.emit(f"if {test}:")
        self.indent += 1
        if self.chance(2):
            saved = {n: v.copy() for n, v in self.env.items()}
            self.branch_depth += 1
            self.statement(depth=99, simple=True)
            self.branch_depth -= 1
            self.forget(saved)
        self.emit(kind)
        self.indent -= 1

    def early_return(self) -> None:
        self.constructs.add("early return")
        self.emit(f"if {self.condition(2)}:")
        self.indent += 1
        self.emit(self.return_statement())
        self.indent -= 1
        self.returned = True

    def return_statement(self) -> str:
        values = []
        force = len(self.returns) > 1 and not CONSTANT_TUPLE_ELEMENTS
        for shape in self.returns:
            e = self.dependent(lambda: self.expr(shape, self.features.max_depth), shape, force)
            if is_bare(e):
                e = fresh(e)
            values.append(e)
        return f"return {', '.join(values)}"

    def sub_block(self, depth: int, in_loop: str | None = None) -> None:
        saved = {n: v.copy() for n, v in self.env.items()}
        self.indent += 1
        self.block_depth += 1
        count = self.integer(1, 3)
        exit_at = self.integer(0, count) if in_loop and self.chance(2) else -1
        exited = 0
        for k in range(count):
            if k == exit_at and in_loop:
                self.loop_exit(in_loop)
                exited = 1    # what follows a break/continue runs in a branch
                self.branch_depth += 1
            self.statement(depth + 1)
        if exit_at == count and in_loop:
            self.loop_exit(in_loop)
        self.branch_depth -= exited
        self.block_depth -= 1
        self.indent -= 1
        self.forget(saved)

    def forget(self, saved: dict[str, Var]) -> None:
        """Leave a block: variables made in it are forgotten; aliasing learned there is kept."""
        inner = self.env
        self.env = saved
        for n, v in self.env.items():
            if n in inner:
                v.mutable = v.mutable and inner[n].mutable
                v.const = v.const or inner[n].const

    def statement(self, depth: int, simple: bool = False) -> None:
        kinds = ["assign", "assign", "reassign", "augassign", "tuple"]
        nested = depth < 2 and not simple
        if self.features.branches and nested:
            kinds.append("if")
        if self.features.loops and nested:
            kinds += ["for", "while"] * (2 if self.block_depth == 0 else 1)
        if self.loops:   # updates of variables the loop carries
            kinds += ["reassign", "augassign"]
        if self.features.calls and self.helpers:
            kinds.append("call")
        if self.features.writes and not simple and depth < 2:
            kinds.append("write")
        if self.features.early_return and not simple and depth >= 0 and self.block_depth > 0 \
                and (RETURN_IN_LOOP_IN_BRANCH or not self.loop_in_branch):
            kinds.append("return")
        kind = self.choice(kinds)
        if kind == "assign":
            self.assign_new()
        elif kind == "reassign":
            self.reassign()
        elif kind == "augassign":
            self.augassign()
        elif kind == "tuple":
            self.tuple_assign()
        elif kind == "if":
            self.if_statement(depth)
        elif kind == "for":
            self.for_statement(depth)
        elif kind == "while":
            self.while_statement(depth)
        elif kind == "call":
            self.helper_call()
        elif kind == "write":
            self.write_array()
        elif kind == "return":
            self.early_return()

    params: tuple[str, ...] = ()


class NameSource:
    def __init__(self) -> None:
        self.count = 0
        self.counters = 0

    def var(self, stem: str = "v") -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def counter(self, stem: str = "i") -> str:
        self.counters += 1
        return f"{stem}{self.counters}"


def _function(draw: Callable[[Any], Any], name: str, params: list[tuple[str, tuple[int, ...]]],
              features: Features, names: NameSource, helpers: list[Helper],
              constructs: set[str], returns: tuple[tuple[int, ...], ...],
              default: str | None = None, recursive: bool = False,
              statements: int | None = None) -> list[str]:
    b = Builder(draw, features, names, helpers, constructs)
    b.params = tuple(p for p, _ in params) + (("scale",) if default is not None else ()) + (
        ("depth",) if recursive else ())
    for p, shape in params:
        b.env[p] = Var(shape, mutable=False)
    if default is not None:
        b.env["scale"] = Var(S, mutable=False, const=True)
    b.returns = returns
    signature = [p for p, _ in params]
    if recursive:
        signature.append("depth")
    if default is not None:
        signature.append(f"scale={default}")
    lines = [f"def {name}({', '.join(signature)}):"]
    if recursive:
        b.emit("if depth == 0:")
        b.indent += 1
        b.emit(b.return_statement())
        b.indent -= 1
    count = statements if statements is not None else b.integer(1, features.max_statements)
    for _ in range(count):
        b.statement(depth=0)
    if recursive:
        first = params[0][0]
        step = f"np.sin({first}) * 0.5 + {b.expr(params[0][1], 1)} * 0.3"
        others = [p for p, _ in params[1:]]
        b.emit(f"return {name}({', '.join([step] + others + ['depth - 1'])})")
    elif features.branches and returns == (S,) and b.chance(6):
        b.constructs.add("return in both branches")
        b.emit(f"if {b.condition(2)}:")
        b.indent += 1
        u = b.choice(VAR_SHAPES)
        b.emit(f"return np.sum({b.dependent(lambda: b.expr(u, features.max_depth), u)})")
        b.indent -= 1
        b.emit("else:")
        b.indent += 1
        u = b.choice(VAR_SHAPES)
        b.emit(f"return np.mean({b.dependent(lambda: b.expr(u, features.max_depth), u)})")
        b.indent -= 1
    elif name == "f":
        shape = b.choice([V, M, C, S, R])
        fn = b.choice(["sum", "mean"])
        extra = f" + {b.expr(S, 1)}" if b.chance(3) else ""
        value = b.dependent(lambda: b.expr(shape, features.max_depth), shape)
        b.emit(f"return np.{fn}({value}){extra}")
    else:
        b.emit(b.return_statement())
    return lines + b.lines


@st.composite
def programs(draw: Callable[[Any], Any], category: str = "mixed") -> GeneratedProgram:
    features = CATEGORIES[category]
    names = NameSource()
    constructs: set[str] = set()
    helpers: list[Helper] = []
    sources: list[str] = []
    if features.calls:
        for k in range(draw(st.integers(1, 3))):
            nparams = draw(st.integers(1, 2))
            params = [(p, draw(st.sampled_from(VAR_SHAPES))) for p in ("a", "c")[:nparams]]
            recursive = k == 0 and draw(st.integers(0, 4)) == 0
            if recursive:
                constructs.add("recursion")
                returns: tuple[tuple[int, ...], ...] = (params[0][1],)
            else:
                returns = tuple(draw(st.sampled_from(VAR_SHAPES))
                                for _ in range(draw(st.integers(1, 2))))
            default = draw(st.sampled_from([None, "1.5", "0.5"]))
            helper_features = Features(branches=features.branches and not recursive,
                                       loops=features.loops, early_return=features.branches,
                                       calls=True, writes=features.writes, max_depth=2)
            name = f"h{k + 1}"
            lines = _function(draw, name, params, helper_features, names, list(helpers),
                              constructs, returns, default, recursive,
                              statements=draw(st.integers(0, 3)))
            helpers.append(Helper(name, params, default, returns, recursive))
            sources.append("\n".join(lines))
    nparams = draw(st.integers(1, 3))
    shapes = tuple(draw(st.sampled_from(VAR_SHAPES)) for _ in range(nparams))
    params = list(zip(PARAM_NAMES, shapes))
    lines = _function(draw, "f", params, features, names, helpers, constructs, (S,))
    sources.append("\n".join(lines))
    wrt_set = draw(st.lists(st.integers(0, nparams - 1), min_size=1, max_size=nparams,
                            unique=True))
    how = draw(st.sampled_from(["tuple", "int", "name"]))
    if how == "tuple" and len(wrt_set) == 1 and not SINGLE_TUPLE_WRT:
        how = "int"
    wrt: Any
    if how == "tuple" or len(wrt_set) > 1:
        wrt = tuple(sorted(wrt_set))
    elif how == "int":
        wrt = wrt_set[0]
    else:
        wrt = PARAM_NAMES[wrt_set[0]]
    seed = draw(st.integers(0, 2 ** 32 - 1))
    source = HEADER + "\n\n\n".join(sources) + "\n"
    return GeneratedProgram(source, shapes, wrt, seed, category, frozenset(constructs))


# --- files ------------------------------------------------------------------------------------
_DIR: str | None = None


def module_dir() -> str:
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="gradlab_generated_")
        atexit.register(shutil.rmtree, _DIR, True)     # one folder per process, removed at exit
    return _DIR


def import_file(path: str, module_name: str) -> Any:
    """Import a ``.py`` file as a module (kept in ``sys.modules`` so its source stays
    readable for gradlab)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def write_module(program: GeneratedProgram) -> Any:
    """Write the program to a temporary ``.py`` file and import it."""
    name = f"gradlab_gen_{program.digest}"
    if name in sys.modules:
        return sys.modules[name]
    path = os.path.join(module_dir(), name + ".py")
    with open(path, "w") as fh:
        fh.write(program.source)
    return import_file(path, name)
